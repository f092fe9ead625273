"""`nanopu.chain` and `nanopu.raft`: the replicated services' runs, with the same figures as
`nanopu chain` and `nanopu raft` write for the same configuration and seed (docs/python.md)."""

import json
import subprocess

import pandas.testing as pdt
import pytest

import nanopu
from nanopu._kinds import _toml
from test_load import ROOT, cli

CHAIN = ROOT / "experiments" / "chain" / "crash-head.toml"
RAFT = ROOT / "experiments" / "raft" / "crash.toml"


def test_chain_agrees_with_the_command_line(tmp_path):
    """The head crashes 10 ms into the load (12,000 requests at 1 Mrps from 20 ms): the
    table, every request and the reconfiguration are the bytes `nanopu chain` writes."""
    files = {k: tmp_path / f"{k}.csv" for k in ("out", "records", "reconfigs")}
    flags = [f"--{k}={p}" for k, p in files.items()]
    run = subprocess.run([cli(), "chain", str(CHAIN), "--requests", "12000", *flags],
                         capture_output=True, text=True, check=True)
    r = nanopu.chain(CHAIN, requests=12000)
    assert (r.table_csv, r.records_csv, r.reconfigs_csv) == tuple(p.read_text() for p in files.values())
    assert list(r.results["class"]) == ["get", "set"] and (r.results["replied"] > 5000).all()
    # One reconfiguration: replica 1 (the head) removed, node 2 the new head.
    c = r.reconfigs.iloc[0]
    assert len(r.reconfigs) == 1 and (c["failed"], c["head"], c["tail"]) == (1, 2, 3)
    assert c["crashed_ns"] < c["detected_ns"] < c["reconfigured_ns"] <= c["learned_ns"]
    assert r.summary["timeline"] == [l for l in run.stdout.splitlines() if "crashed at" in l]
    assert len(r.requests) == 12000 and r.requests["latency_ns"].dropna().gt(0).all()


def test_chain_errors_and_dicts(tmp_path):
    with pytest.raises(nanopu.NanopuError, match="--requests: 0"):
        nanopu.chain(CHAIN, requests=0)
    # Negative or oversized integers name the keyword, as the simulator's own checks do.
    with pytest.raises(nanopu.NanopuError, match="seed: -1 is not within"):
        nanopu.chain(CHAIN, seed=-1)
    with pytest.raises(nanopu.NanopuError, match="replicas: -3 is not within"):
        nanopu.raft(RAFT, replicas=-3)
    with pytest.raises(nanopu.NanopuError, match="warmup: 18446744073709551616 is not within"):
        nanopu.load(RAFT, warmup=2**64)
    keys = _toml().loads(CHAIN.read_text())
    keys["chain"]["elf"] = str(CHAIN.parent / keys["chain"]["elf"])
    assert len(nanopu.chain(keys, rates=[0.5], requests=2000).results) == 2
    with pytest.raises(nanopu.NanopuError, match="unknown field `colour`"):
        nanopu.chain({**keys, "colour": 1})


def test_raft_agrees_with_the_command_line(tmp_path):
    """The leader crashes at 2 ms: the figures, every request and the leader timeline are
    what `nanopu raft` writes, its text what it prints."""
    out, records, timeline = tmp_path / "out.csv", tmp_path / "records.csv", tmp_path / "timeline.csv"
    base = [cli(), "raft", str(RAFT), "--replicas", "5", "--seed", "2"]
    text = subprocess.run(base + [f"--out={out}", f"--records={records}", f"--timeline={timeline}"],
                          capture_output=True, text=True, check=True).stdout
    doc = json.loads(subprocess.run(base + ["--json"], capture_output=True, text=True, check=True).stdout)
    r = nanopu.raft(RAFT, replicas=5, seed=2)
    assert r.summary == doc and r.text == text and r.problems == []
    assert (r.results_csv, r.records_csv, r.timeline_csv) == (out.read_text(), records.read_text(), timeline.read_text())
    # A new leader after the crash, in a later term; every request answered.
    assert len(r.timeline) >= 2 and r.timeline["term"].is_monotonic_increasing
    assert r.timeline["at_us"].iloc[-1] > 2000.0
    assert r.results["answered"][0] == r.results["requests"][0] == 4000 == len(r.requests)


def test_raft_dict_and_overrides():
    keys = {"elf": str(ROOT / "sw" / "build" / "apps" / "raft.elf"), "seed": 1, "raft": {"replicas": 3},
            "client": {"rate_mrps": 1.0, "requests": 1000, "get_fraction": 0.1}}
    a = nanopu.raft(keys)
    b = nanopu.raft({**keys, "client": {**keys["client"], "requests": 2000}}, requests=1000)
    pdt.assert_frame_equal(a.results, b.results)
    assert a.summary["faults"] == [] and a.summary["replicas"] == 3
    with pytest.raises(nanopu.NanopuError, match="with the flags' overrides"):
        nanopu.raft(keys, replicas=0)


def test_a_crash_the_load_ends_before_is_a_problem_as_on_the_command_line():
    """crash-head.toml crashes the head at 30 ms; 2,000 requests end the load about 23 ms
    in: the figures stand, and the crash that never happened is listed, not skipped."""
    run = subprocess.run([cli(), "chain", str(CHAIN), "--requests", "2000"], capture_output=True, text=True)
    r = nanopu.chain(CHAIN, requests=2000)
    assert len(r.problems) == 1 and "the crash of node 1 at 30000.000 us was never reached" in r.problems[0]
    assert r.summary["complete"] is False and r.reconfigs.empty
    assert run.returncode == 2 and f"nanopu: {r.problems[0]}" in run.stderr.splitlines(), run.stderr
    reached = nanopu.chain(CHAIN, requests=12000)
    assert reached.problems == [] and reached.summary["complete"] is True
