#!/usr/bin/env python3
"""Runs the benchmarks of the comparison through the Python package (`nanopu.bench`,
in-process; experiments/lib/appbench.py) and writes results/*.csv (run by ./run). Every
benchmark checks each reply against its request and stops on a wrong one.

The eRPC-like software stack (docs/apps/erpc.md) is the comparison's third column: its
loopback and stream rows are measured by `nanopu bench nic-throughput --nic erpc`; a
section it leaves out (rx, tx, stream: the stack is measured as an RPC server) is written
as "not measured" (never filled in by hand)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from appbench import benches  # noqa: E402
from csvio import write_csv  # noqa: E402

NICS = ["nanopu", "icenic", "erpc"]
LATENCY = {"nanopu": "loopback-latency", "icenic": "icenic-loopback-latency"}
SIZES = [8, 16, 64, 256, 512, 1024]


def latency():
    points = [(nic, name, app) for nic, name in LATENCY.items() for app in ["loopback", "stream"]]
    for (nic, _, app), d in zip(points, benches([(name, {"app": app}) for _, name, app in points])):
        for r in d["sizes"]:
            yield {"nic": nic, "app": app, "payload_bytes": r["payload_bytes"], "nic_median_ns": r["nic_median_ns"],
                   "wire_median_ns": r["wire_median_ns"], "wire_p99_ns": r["wire_p99_ns"]}


def throughput():
    """(rx and tx rows, loopback rate rows) of every NIC; a section a NIC's benchmark
    leaves out gets rows marked as not measured."""
    rates, loop = [], []
    for nic, d in zip(NICS, benches([("nic-throughput", {"nic": nic}) for nic in NICS])):
        for way in ["rx", "tx"]:
            r = d.get(way) or {}
            rates.append({"nic": nic, "direction": way, "payload_bytes": 64, "measured": int(bool(r)),
                          **{k: r.get(k, "") for k in ["mpps", "payload_gbps", "wire_gbps", "wire_bytes",
                                                         "window_messages", "window_ns", "dropped"]}})
        for app in ["loopback", "stream"]:
            got = d.get(app)
            for r in (got or [{"payload_bytes": s} for s in SIZES]):
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


# Guarded: the sweep's worker processes import this file as their main module.
if __name__ == "__main__":
    main()
