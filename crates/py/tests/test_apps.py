"""`nanopu.app` and `nanopu.bench`: the paper's applications and the microbenchmarks
in-process, with the JSON `nanopu app` and `nanopu bench` print for the same arguments, and
their sweeps (docs/python.md)."""

import json
import shutil
import subprocess

import pandas as pd
import pandas.testing as pdt
import pytest

import nanopu
from nanopu import sweep
from test_load import ROOT, cli

SW = ROOT / "sw" / "build"


def command(*args):
    """What the command line prints for `args` (its exit status, its JSON)."""
    p = subprocess.run([cli(), *args, "--sw-build", str(SW), "--json"], capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout) if p.stdout else None


@pytest.mark.parametrize("name,flags,argv", [
    ("dotprod", {"words": 8, "requests": 10, "copy": True, "nic": "icenic"},
     ["--words", "8", "--requests", "10", "--copy", "--nic", "icenic"]),
    ("nn", {"layers": [4, 8, 2], "inferences": 3, "cores": 1, "seed": 2}, ["--layers", "4,8,2", "--inferences", "3",
                                                                           "--cores", "1", "--seed", "2"]),
    ("othello", {"depth": 3, "nodes": 2}, ["--depth", "3", "--nodes", "2"]),
])
def test_apps_give_the_command_lines_document(name, flags, argv):
    status, doc = command("app", name, *argv)
    r = nanopu.app(name, sw_build=SW, **flags)
    assert status == 0 and r.ok and r.summary == doc
    assert r.summary["app"] == name and r.summary["nic"] == flags.get("nic", "nanopu")
    # The one-row totals flatten the latencies.
    if isinstance(doc["latency_ns"], dict):
        assert r.totals["latency_ns.median"][0] == doc["latency_ns"]["median"] > 0


def test_app_errors_are_the_simulators():
    with pytest.raises(nanopu.NanopuError, match="edgs: not a keyword of nanopu.app"):
        nanopu.app("nn-edges", edgs=4, sw_build=SW)
    with pytest.raises(nanopu.NanopuError, match="nbody-root is an incast IceNIC cannot take"):
        nanopu.app("nbody-root", nic="icenic", sw_build=SW)
    # A 5-ply search: MAP frames pile up at busy workers until an IceNIC's receive buffer
    # overflows (no flow control; experiments/paper-apps, "Othello on IceNIC").
    with pytest.raises(nanopu.NanopuError, match="receive buffer full"):
        nanopu.app("othello", depth=5, nodes=16, cores=1, nic="icenic", sw_build=SW)
    with pytest.raises(nanopu.NanopuError, match="nn_edges.elf: No such file"):
        nanopu.app("nn-edges", sw_build="/nonexistent")


def test_benches_give_the_command_lines_document_and_tables():
    for name, flags, argv in [("rx", {}, []),
                              ("nic-throughput", {"nic": "erpc", "requests": 100}, ["--nic", "erpc", "--requests", "100"]),
                              ("loopback-latency", {"app": "stream", "requests": 20}, ["--app", "stream", "--requests", "20"])]:
        status, doc = command("bench", name, *argv)
        b = nanopu.bench(name, sw_build=SW, **flags)
        # `build` says how each was compiled (the command line's may be the PGO build).
        assert status == 0 and {**b.summary, "build": doc["build"]} == doc
        for table in b.TABLES[1:]:
            pdt.assert_frame_equal(getattr(b, table), pd.DataFrame(doc[table]))
    assert b.TABLES == ("totals", "sizes") and list(b.sizes["payload_bytes"]) == [8, 16, 64, 256, 512, 1024]
    with pytest.raises(nanopu.NanopuError, match="invalid value 'nope'"):
        nanopu.bench("nope")


def test_app_and_bench_sweeps_are_the_direct_runs(tmp_path):
    configs = sweep.grid({"name": "dotprod", "requests": 10, "sw_build": str(SW)}, nic=["nanopu", "icenic"], words=[1, 32])
    s = sweep.run("app", configs, seeds=[1], workers=2, cache_dir=tmp_path, progress=False)
    f = s.frame
    assert list(zip(f["nic"], f["words"])) == [("nanopu", 1), ("nanopu", 32), ("icenic", 1), ("icenic", 32)]
    assert f["ok"].all() and (f["latency_ns.median"][1::2].values > f["latency_ns.median"][::2].values).all()
    assert s.run(3).summary == nanopu.app("dotprod", requests=10, nic="icenic", words=32, seed=1, sw_build=SW).summary
    b = sweep.run("bench", [{"name": "rx", "sw_build": str(SW)}], backend="thread", cache_dir=tmp_path, progress=False)
    pdt.assert_frame_equal(b.concat("rows").drop(columns="seed"), nanopu.bench("rx", sw_build=SW).rows)
    with pytest.raises(ValueError, match="no seed"):
        sweep.run("bench", [{"name": "rx"}], seeds=[1])


def test_a_benchs_cache_key_holds_exactly_the_programs_it_loads(tmp_path):
    mine = tmp_path / "sw"
    shutil.copytree(SW / "apps", mine / "apps")
    config = {"name": "icenic-loopback-latency", "app": "stream", "requests": 5, "sw_build": str(mine)}

    def cached():
        s = sweep.run("bench", [config], backend="thread", cache_dir=tmp_path / "cache", progress=False)
        return bool(s.frame["cached"][0])

    assert (cached(), cached()) == (False, True)
    (mine / "apps" / "ice_loopback.elf").write_bytes(b"not loaded by the stream benchmark")
    assert cached()
    with open(mine / "apps" / "ice_stream.elf", "ab") as f:
        f.write(b"\0")  # the program the benchmark loads, other bytes
    assert not cached()


def test_a_chain_sweep_is_cached_and_agrees_with_nanopu_chain(tmp_path):
    config = sweep.chain_config(ROOT / "experiments" / "chain" / "crash-tail.toml")
    config["load"]["requests"] = 6000
    first = sweep.run("chain", [config], seeds=[1, 2], workers=2, cache_dir=tmp_path, progress=False)
    again = sweep.run("chain", [config], seeds=[1, 2], workers=2, cache_dir=tmp_path, progress=False)
    assert not first.frame["cached"].any() and again.frame["cached"].all()
    direct = nanopu.chain(ROOT / "experiments" / "chain" / "crash-tail.toml", requests=6000, seed=2)
    assert again.run(1).table_csv == direct.table_csv and again.run(1).reconfigs_csv == direct.reconfigs_csv
    assert list(first.frame["seed"]) == [1, 2] and first.run(0).table_csv != direct.table_csv
    r = again.concat("results")
    assert list(r.columns[:1]) == ["seed"] and len(r) == 4 and (r["replied"] > 0).all()


def test_a_raft_sweep_agrees_with_nanopu_raft(tmp_path):
    path = ROOT / "experiments" / "raft" / "crash.toml"
    config = sweep.raft_config(path)
    config["client"]["requests"] = 3000
    s = sweep.run("raft", [config], seeds=[3], backend="thread", cache_dir=tmp_path, progress=False)
    direct = nanopu.raft(path, requests=3000, seed=3)
    assert s.run(0).results_csv == direct.results_csv and s.run(0).problems == direct.problems == []
    assert s.frame["seed"][0] == 3 and s.run(0).summary == direct.summary
