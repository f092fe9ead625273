"""`nanopu.sweep`: configurations x seeds on a process pool, threads or Ray, gathered into
one DataFrame, with the cache (docs/python.md, "Sweeps")."""

import shutil

import pandas.testing as pdt
import pytest

import nanopu
from nanopu import _cache, sweep

# Host figures: the only columns that differ between identical runs (and `cached`).
HOST = ["cached", "wall_seconds", "threads"]


def sorts(apps, **axes):
    return sweep.grid({"cores": 16, "keys_per_core": 16, "apps": str(apps)}, **axes)


def figures(s):
    return s.frame.drop(columns=[c for c in HOST if c in s.frame])


def test_grid_sets_nested_keys_last_axis_fastest():
    base = {"link": {"rate_gbps": 200.0}, "program": [{"elf": "a.elf", "args": []}]}
    g = sweep.grid(base, {"link.rate_gbps": [100.0, 400.0], "program.0.args": [["1"], ["2"]]})
    assert [(c["link"]["rate_gbps"], c["program"][0]["args"]) for c in g] == [
        (100.0, ["1"]), (100.0, ["2"]), (400.0, ["1"]), (400.0, ["2"])]
    assert base["link"]["rate_gbps"] == 200.0  # each point is a copy
    with pytest.raises(ValueError, match="list of values"):
        sweep.grid(base, cores=16)


def test_process_pool_gives_the_direct_runs(apps, tmp_path):
    s = sweep.run("sort", sorts(apps, algorithm=["nanosort", "millisort"]), seeds=[1, 2],
                  workers=2, cache_dir=tmp_path, progress=False)
    f = s.frame
    assert list(zip(f["algorithm"], f["seed"])) == [("nanosort", 1), ("nanosort", 2), ("millisort", 1), ("millisort", 2)]
    assert f["valid"].all() and not f["cached"].any() and f["error"].isna().all()
    # Each row is the run nanopu.sort gives directly, and so are its DataFrames.
    direct = nanopu.sort(cores=16, keys_per_core=16, apps=apps, algorithm="millisort", seed=2)
    assert f["figures.total_ns"][3] == direct.total_ns
    pdt.assert_frame_equal(s.run(3).core_stages, direct.core_stages)
    stages = s.concat("stages")
    assert list(stages.columns[:2]) == ["algorithm", "seed"] and len(stages) == sum(len(r.stages) for r in s.runs)


def test_backends_agree(apps, tmp_path):
    configs = sorts(apps, keys_per_core=[16, 32])
    p = sweep.run("sort", configs, seeds=[3], cache=False, progress=False)
    t = sweep.run("sort", configs, seeds=[3], backend="thread", cache=False, progress=False)
    pdt.assert_frame_equal(figures(p), figures(t))


def test_a_rerun_comes_from_the_cache(apps, tmp_path):
    configs = sorts(apps, keys_per_core=[16, 32])
    first = sweep.run("sort", configs, seeds=[1, 2], backend="thread", cache_dir=tmp_path, progress=False)
    again = sweep.run("sort", configs, seeds=[1, 2], backend="thread", cache_dir=tmp_path, progress=False)
    assert not first.frame["cached"].any() and again.frame["cached"].all()
    pdt.assert_frame_equal(first.frame.drop(columns="cached"), again.frame.drop(columns="cached"))
    pdt.assert_frame_equal(first.run(2).core_stages, again.run(2).core_stages)
    # The key does not depend on the order keys were written in.
    reordered = [dict(reversed(list(c.items()))) for c in configs]
    assert sweep.run("sort", reordered, seeds=[1], backend="thread", cache_dir=tmp_path, progress=False).frame["cached"].all()


def cached(apps, cache_dir, seeds=(1,), **over):
    config = {"cores": 16, "keys_per_core": 16, "apps": str(apps), **over}
    s = sweep.run("sort", [config], seeds=seeds, backend="thread", cache_dir=cache_dir, progress=False)
    return list(s.frame["cached"])


def test_the_cache_misses_on_another_config_or_seed(apps, tmp_path):
    assert cached(apps, tmp_path) == [False]
    assert cached(apps, tmp_path) == [True]
    assert cached(apps, tmp_path, keys_per_core=32) == [False]
    assert cached(apps, tmp_path, seeds=(1, 2)) == [True, False]


def test_the_cache_misses_on_other_program_bytes(apps, tmp_path):
    mine = tmp_path / "apps"
    shutil.copytree(apps, mine)
    assert cached(mine, tmp_path) == [False]
    assert cached(mine, tmp_path) == [True]
    (mine / "millisort.elf").write_bytes(b"not loaded by a NanoSort")
    assert cached(mine, tmp_path) == [True]
    with open(mine / "nanosort.elf", "ab") as f:
        f.write(b"\0")  # bytes past the ELF's segments: the same program, other bytes
    assert cached(mine, tmp_path) == [False]


def test_the_cache_misses_on_another_simulator(apps, tmp_path, monkeypatch):
    assert cached(apps, tmp_path) == [False]
    assert _cache.simulator_version().endswith(_cache.file_hash(nanopu._native.__file__))
    monkeypatch.setattr(_cache, "simulator_version", lambda: "another build")
    assert cached(apps, tmp_path) == [False]
    assert cached(apps, tmp_path) == [True]


def test_failed_runs_are_reported_with_their_config(apps, tmp_path, capsys):
    configs = sorts(apps, buckets=[4, 5])
    with pytest.raises(sweep.SweepError, match=r"run 1 \(buckets=5, seed=7\): --buckets: 5 is not 4, 8 or 16") as e:
        sweep.run("sort", configs, seeds=[7], backend="thread", cache_dir=tmp_path)
    assert "run 1 (buckets=5, seed=7) failed: --buckets" in capsys.readouterr().err
    assert e.value.sweep.frame["valid"][0] and e.value.failures[0]["params"] == {"buckets": 5}
    kept = sweep.run("sort", configs, seeds=[7], backend="thread", cache_dir=tmp_path, on_error="record")
    assert list(kept.frame["cached"]) == [True, False]  # a failure is not stored
    assert kept.frame["error"][1].startswith("--buckets") and kept.run(1) is None


def test_clusters_from_a_file_with_progress(root, tmp_path):
    base = sweep.cluster_config(root / "experiments" / "incast" / "ndp-trim.toml")
    seen = []
    s = sweep.run("cluster", sweep.grid(base, {"switch.trim": [True, False]}), seeds=[1, 2], workers=2,
                  cache_dir=tmp_path, progress=lambda *a: seen.append(a))
    f = s.frame
    assert list(f["switch.trim"]) == [True, True, False, False]
    assert (f["fabric.trims"][:2] > 0).all() and (f["fabric.trims"][2:] == 0).all()
    assert (f["messages_delivered"] == 80).all()
    assert seen[-1] == (4, 4, 0, 0) and [d for d, *_ in seen] == [1, 2, 3, 4]


def test_programs_have_no_seed(apps):
    with pytest.raises(ValueError, match="no seed"):
        sweep.run("program", [{"program": apps / "stream.elf"}], seeds=[1])


def test_concat_keeps_a_runs_column_named_like_a_parameter(apps):
    s = sweep.run("sort", sorts(apps, cores=[16, 32]), seeds=[1], backend="thread", cache=False, progress=False)
    st = s.concat("stages")
    assert list(st.columns[:2]) == ["cores", "seed"] and "stage" in st
    # `cores` is the sweep's; `stages.cores` the run's count of cores in each stage.
    assert list(st.groupby("cores")["stages.cores"].max()) == [16, 32]


def test_backend_arguments_are_checked(apps, tmp_path):
    configs = sorts(apps)
    with pytest.raises(ValueError, match="backend must be one of process, thread, ray"):
        sweep.run("sort", configs, seeds=[1], backend="dask", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="address= is a Ray cluster's address"):
        sweep.run("sort", configs, seeds=[1], address="auto", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="'sort', 'cluster', 'program', 'load', 'chain', 'raft', 'app' or 'bench'"):
        sweep.run("sorts", configs)


def test_the_error_column_has_one_type_for_every_kind(apps):
    """None for a run that succeeded, the message for one that failed: an object column
    for sorts and clusters, with failures or without (pandas alone gives NaN in one case
    and None in another)."""
    star = {"topology": {"kind": "star", "nodes": 2}, "node": {"cores": 1},
            "program": [{"nodes": "all", "elf": str(apps / "alltoall.elf"), "args": ["2"]}]}
    runs = {
        "sort": (sorts(apps), sorts(apps, buckets=[5])),
        "cluster": ([star], [{**star, "topology": {"kind": "star", "nodes": 0}}]),
    }
    for kind, (good, bad) in runs.items():
        for configs in (good, good + bad):
            s = sweep.run(kind, configs, backend="thread", cache=False, progress=False, on_error="record")
            errors = list(s.frame["error"])
            assert s.frame["error"].dtype == object, (kind, s.frame["error"].dtype)
            assert errors[0] is None and all(isinstance(e, str) for e in errors[len(good):]), (kind, errors)
