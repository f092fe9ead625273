"""`nanopu.load`: a load sweep from a file or a dict, its DataFrames, and the same figures
as `nanopu load` prints for the same configuration and seed (docs/python.md)."""

import json
import math
import os
import pathlib
import subprocess

import pandas.testing as pdt
import pytest

import nanopu
from nanopu import sweep

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The command line as `make test` builds it before the Python tests, or as `make build` does.
CLI = [os.environ.get("NANOPU_BIN", ""), ROOT / "target/test/fast/nanopu", ROOT / "target/release/nanopu"]


def cli():
    found = [str(p) for p in CLI if p and os.access(p, os.X_OK)]
    if not found:
        pytest.skip("no nanopu command built (make test builds target/test/fast/nanopu; or set NANOPU_BIN)")
    return found[0]


# Two request classes of the synthetic service (sw/apps/service.c), short and long, on two
# cores: fast to run, and the classes are told apart in the table.
def service(apps, **load):
    return {
        "server": {"elf": str(apps / "service.elf"), "args": ["jbsq"], "cores": 2},
        "load": {
            "seed": 1, "rates_mrps": [1.0, 3.0], "requests": 3000, "warmup": 300, "drain_us": 200.0,
            "class": [
                {"name": "short", "fraction": 0.8, "service_ns": 300.0, "contexts": [0]},
                {"name": "long", "fraction": 0.2, "service_ns": 2000.0, "contexts": [0]},
            ],
            **load,
        },
    }


def test_results_per_offered_load_and_class(apps):
    r = nanopu.load(service(apps))
    t = r.results
    assert list(t["class"]) == ["all", "short", "long"] * 2
    assert list(t["offered_mrps"]) == [1.0] * 3 + [3.0] * 3
    # The classes split the measured requests; each quantile grows from median to p99.9.
    for rate in (1.0, 3.0):
        rows = t[t["offered_mrps"] == rate].set_index("class")
        assert rows.loc["short", "measured"] + rows.loc["long", "measured"] == rows.loc["all", "measured"] == 2700
        assert (rows["median_ns"] <= rows["p99_ns"]).all() and (rows["p99_ns"] <= rows["p999_ns"]).all()
        # A long request (2 us of service) waits longer than a short one (0.3 us).
        assert rows.loc["long", "median_ns"] > rows.loc["short", "median_ns"] + 1000
    assert (t["achieved_mrps"] > 0.5 * t["offered_mrps"].where(t["class"] == "all", 0)).all()
    assert list(r.cost["offered_mrps"]) == [1.0, 3.0] and (r.cost["instructions_per_reply"] > 0).all()
    assert r.requests.empty and r.summary["seed"] == 1 and len(r.summary["rows"]) == 6


def test_the_same_figures_as_the_command_line(apps, tmp_path):
    """Same file, same seed: the table's bytes are those of `nanopu load --out`, and the
    summary is `nanopu load --json`'s document."""
    config = ROOT / "experiments" / "rdma" / "idle.toml"
    out, records = tmp_path / "out.csv", tmp_path / "records.csv"
    run = subprocess.run([cli(), "load", str(config), "--json", "--progress", "--requests", "2000", "--warmup", "200",
                          "--out", str(out), "--records", str(records)], capture_output=True, text=True, check=True)
    r = nanopu.load(config, requests=2000, warmup=200, records=True)
    assert r.table_csv == out.read_text()
    assert r.records_csv == records.read_text()
    assert r.summary == json.loads(run.stdout)
    assert r.summary["complete"] and r.summary["problems"] == []
    # Every request of the file is a row, its latency its reply less its send.
    assert len(r.requests) == 2000
    q = r.requests.iloc[-1]
    assert math.isclose(q["latency_ns"], q["replied_ns"] - q["sent_ns"])
    # The RDMA check of every reply, as the command line tells it on stderr.
    c = r.checks.iloc[0]
    assert (c["check"], c["wrong"], c["lost"], c["outcome"]) == ("RDMA", 0, 0, "host-done")
    assert f"RDMA check: {c['checked']} replies checked" in run.stderr


def test_a_dict_runs_as_its_file_and_the_seed_matters(apps):
    path = ROOT / "experiments" / "rdma" / "idle.toml"
    d = sweep.load_config(path)
    a, b = nanopu.load(path, requests=1000, warmup=100), nanopu.load(d, requests=1000, warmup=100)
    pdt.assert_frame_equal(a.results, b.results)
    c = nanopu.load(d, requests=1000, warmup=100, seed=2)
    assert c.summary["seed"] == 2 and not c.results.equals(a.results)


def test_errors_carry_the_simulators_message(apps):
    with pytest.raises(nanopu.NanopuError, match="unknown field `colour`"):
        nanopu.load({**service(apps), "colour": "blue"})
    with pytest.raises(nanopu.NanopuError, match="--rates"):
        nanopu.load(service(apps), rates=[-1.0])
    with pytest.raises(nanopu.NanopuError, match="rates: an empty list runs nothing"):
        nanopu.load(service(apps), rates=[])
    with pytest.raises(nanopu.NanopuError, match="rates: a list of values, not the string '1,2'"):
        nanopu.load(service(apps), rates="1,2")
    # A class sent to a context no core registered gets no reply: the run's figures do not stand.
    bad = service(apps)
    bad["load"]["class"][1]["contexts"] = [7]
    with pytest.raises(nanopu.NanopuError, match="offered load 1 Mrps: .*context"):
        nanopu.load(bad, rates=[1.0])


def test_load_sweeps_are_cached(apps, tmp_path):
    configs = sweep.grid(service(apps), {"load.rates_mrps": [[1.0], [2.0]]})
    first = sweep.run("load", configs, seeds=[1, 2], backend="thread", cache_dir=tmp_path, progress=False)
    assert list(first.frame["seed"]) == [1, 2, 1, 2] and not first.frame["cached"].any()
    again = sweep.run("load", configs, seeds=[1, 2], backend="thread", cache_dir=tmp_path, progress=False)
    assert again.frame["cached"].all()
    pdt.assert_frame_equal(first.concat("results"), again.concat("results"))
    # Each point is the direct run with that seed.
    direct = nanopu.load(service(apps), rates=[2.0], seed=2)
    pdt.assert_frame_equal(again.run(3).results, direct.results)
    assert list(again.concat("results")["load.rates_mrps"].map(tuple).unique()) == [(1.0,), (2.0,)]


def test_column_types_do_not_depend_on_the_values(apps):
    """Rates written as 1 and 3 are read as floats, as 1.5 is; a table without rows has
    the types it has with them."""
    whole = nanopu.load(service(apps, requests=1000, warmup=100), records=True)
    half = nanopu.load(service(apps, requests=1000, warmup=100, rates_mrps=[1.5]))
    for t in (whole.results, whole.cost, whole.requests, half.results):
        assert t["offered_mrps"].dtype == "float64", t.dtypes
    assert whole.results.dtypes.equals(half.results.dtypes)
    assert half.requests.empty and half.requests.dtypes.equals(whole.requests.dtypes), half.requests.dtypes
