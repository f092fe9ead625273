"""Saving a run's tables as Parquet and CSV (`save`): every table, read back the same."""

import pandas as pd
import pandas.testing as pdt
import pytest

import nanopu


def test_a_program_runs_tables_round_trip_through_parquet_and_csv(apps, tmp_path):
    # Echo a word with the top bit set: payload words are unsigned 64-bit.
    r = nanopu.run(apps / "loopback.elf", sends=[nanopu.send(1000, 0, [0x8000_0000_0000_0001, 2])],
                   max_cycles=200_000)
    assert r.received["words"][0] == [0x8000_0000_0000_0001, 2]
    paths = r.save(tmp_path / "pq")
    assert set(paths) == {"cores", "received", "rejected", "totals"}
    for name, df in r.tables().items():
        back = pd.read_parquet(paths[name])
        if name == "received":
            assert [list(map(int, w)) for w in back["words"]] == list(df["words"])
            back, df = back.drop(columns="words"), df.drop(columns="words")
        pdt.assert_frame_equal(back, df, check_dtype=False)
    csv = r.save(tmp_path / "csv", format="csv")
    assert pd.read_csv(csv["cores"], index_col=0).shape == r.cores.shape


def test_an_unknown_format_is_refused(apps, tmp_path):
    r = nanopu.run(apps / "loopback.elf", max_cycles=10_000)
    with pytest.raises(ValueError, match="parquet, csv"):
        r.save(tmp_path, format="xlsx")
