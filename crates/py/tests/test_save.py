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


def test_without_pyarrow_the_default_is_csv_with_a_warning(apps, tmp_path, monkeypatch):
    import sys

    r = nanopu.run(apps / "loopback.elf", max_cycles=10_000)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.warns(UserWarning, match=r"pyarrow is not installed.*nanopu\[parquet\]"):
        paths = r.save(tmp_path / "default")
    assert all(p.endswith(".csv") for p in paths.values())
    with pytest.raises(nanopu.NanopuError, match=r"needs pyarrow.*pip install 'nanopu\[parquet\]'"):
        r.save(tmp_path / "asked", format="parquet")


def test_pyarrow_is_declared_as_the_parquet_extra(root):
    from nanopu._kinds import _toml

    extras = _toml().loads((root / "crates" / "py" / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("pyarrow") for d in extras["parquet"])


def test_every_result_prints_as_a_one_line_summary(apps):
    r = nanopu.run(apps / "loopback.elf", sends=[nanopu.send(1000, 0, [1])], max_cycles=100_000)
    text = repr(r)
    assert text.startswith("<ProgramRun ") and "\n" not in text and "outcome=" in text, text
    assert "complete" in text or "INCOMPLETE" in text, text
    s = nanopu.sort(cores=16, keys_per_core=8)
    assert repr(s).startswith("<SortRun complete, algorithm='nanosort', cores=16") and "valid=True" in repr(s)
    for cls in (nanopu.ProgramRun, nanopu.ClusterRun, nanopu.SortRun, nanopu.LoadRun, nanopu.ChainRun,
                nanopu.RaftRun, nanopu.AppRun, nanopu.BenchRun):
        assert cls.__repr__ is not object.__repr__ and cls.FIGURES, cls
