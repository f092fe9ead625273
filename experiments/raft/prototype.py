#!/usr/bin/env python3
"""Raft at the nanoPU prototype's setup (README "At the prototype's setup"): prototype.toml
at the prototype's loads, prototype-43.toml (the paper's 43.75 ns links, switches of no
latency) and prototype-word.toml (one-word keys and values) beside it. Runs `nanopu raft`
($NANOPU, else target/release/nanopu); writes results/prototype.csv and the README's
table; about 15 minutes."""
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from mdtable import table, update  # noqa: E402

NANOPU = os.environ.get("NANOPU", os.path.join(ROOT, "target", "release", "nanopu"))
# request_rate_lambda_inverse from 10,000 to 5,000 cycles at 3.2 GHz (config_runtime.ini).
RUNS = [("prototype", r) for r in (0.32, 0.40, 0.48, 0.56, 0.64)] + \
       [("prototype-43", r) for r in (0.32, 0.64)] + [("prototype-word", 0.32)]
OUT = "results/prototype.csv"


def run(name, rate):
    print(f"== {name} {rate} Mrps", file=sys.stderr)
    text = subprocess.run([NANOPU, "raft", f"{name}.toml", "--rate", str(rate), "--out", "results/prototype.part.csv"],
                          check=True, capture_output=True, text=True).stdout
    if "checks: passed" not in text:
        sys.exit(f"{name} at {rate} Mrps:\n{text}")


def table_rows():
    with open(OUT) as f:
        rows = list(csv.DictReader(f))
    for r, (name, _) in zip(rows, RUNS):
        r["config"] = name
    return rows


if __name__ == "__main__":
    os.chdir(HERE)
    if os.path.exists("results/prototype.part.csv"):
        os.remove("results/prototype.part.csv")
    for name, rate in RUNS:
        run(name, rate)
    os.replace("results/prototype.part.csv", OUT)
    label = {"prototype": "prototype's network (13.1 ns links, 0.31 ns switch)",
             "prototype-43": "43.75 ns links, 0 ns switch", "prototype-word": "prototype's network, one-word keys and values"}
    cols = [("setup", lambda r: label[r["config"]]), ("offered Mrps", lambda r: r["offered_mrps"]),
            ("achieved Mrps", lambda r: r["throughput_mrps"]), ("write median ns", lambda r: r["set_median_ns"]),
            ("write p99 ns", lambda r: r["set_p99_ns"]), ("write p99.9 ns", lambda r: r["set_p999_ns"]),
            ("retries", lambda r: r["retries"]), ("elections", lambda r: r["candidacies"])]
    update("README.md", "prototype", table(table_rows(), cols))
