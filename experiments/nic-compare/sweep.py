#!/usr/bin/env python3
"""Runs the benchmarks of the comparison and writes results/*.csv (run by ./run). Every
benchmark checks each reply against its request and stops on a wrong one.

The eRPC-like software stack (issue 26 item 2) is the comparison's third column: its rows
are measured when `nanopu bench nic-throughput --nic erpc` exists (with the same JSON
fields; a section it leaves out, e.g. rx, stays "not measured"), and written as "not
measured" until then (never filled in by hand)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from csvio import write_csv  # noqa: E402

BIN = os.environ.get("NANOPU_BIN", "../../target/release/nanopu")
NICS = ["nanopu", "icenic", "erpc"]
LATENCY = {"nanopu": "loopback-latency", "icenic": "icenic-loopback-latency"}


def bench(*args, optional=False):
    """One `nanopu bench` run's JSON document; None if `optional` and the bench refuses the
    arguments (a NIC it does not offer yet)."""
    p = subprocess.run([BIN, "bench", *map(str, args)], capture_output=True, text=True)
    if p.returncode != 0:
        if optional and "invalid value" in p.stderr:
            print(f"  bench {' '.join(map(str, args))}: not offered yet", file=sys.stderr)
            return None
        sys.exit(f"nanopu bench {' '.join(map(str, args))}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    print(f"  bench {' '.join(map(str, args))}: ok", file=sys.stderr)
    return json.loads(p.stdout)


def latency():
    for nic, name in LATENCY.items():
        for app in ["loopback", "stream"]:
            d = bench(name, "--app", app)
            for r in d["sizes"]:
                yield {"nic": nic, "app": app, "payload_bytes": r["payload_bytes"], "nic_median_ns": r["nic_median_ns"],
                       "wire_median_ns": r["wire_median_ns"], "wire_p99_ns": r["wire_p99_ns"]}


def throughput():
    """(rx and tx rows, loopback rate rows) of every NIC; a NIC not offered yet gets rows
    marked as not measured."""
    rates, loop = [], []
    for nic in NICS:
        d = bench("nic-throughput", "--nic", nic, optional=nic == "erpc")
        for way in ["rx", "tx"]:
            r = (d.get(way) if d else None) or {}
            rates.append({"nic": nic, "direction": way, "payload_bytes": 64, "measured": int(bool(r)),
                          **{k: r.get(k, "") for k in ["mpps", "payload_gbps", "wire_gbps", "wire_bytes",
                                                         "window_messages", "window_ns", "dropped"]}})
        for app in ["loopback", "stream"]:
            got = d.get(app) if d else None
            for r in (got or [{"payload_bytes": s} for s in [8, 16, 64, 256, 512, 1024]]):
                loop.append({"nic": nic, "app": app, "payload_bytes": r["payload_bytes"], "measured": int(got is not None),
                             "outstanding": d["loopback_outstanding"] if got else "",
                             **{k: r.get(k, "") for k in ["mpps", "payload_gbps", "wire_gbps", "window_messages"]}})
    return rates, loop


def main():
    os.makedirs("results", exist_ok=True)
    write_csv("results/latency.csv", list(latency()))
    rates, loop = throughput()
    write_csv("results/throughput.csv", rates)
    write_csv("results/loopback-rate.csv", loop)


main()
