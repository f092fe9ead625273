#!/usr/bin/env python3
"""The README's cost table: what the server's cores spent per reply (`nanopu load --cost`)
and the median latency, one line per configuration at one offered load; or (RATE "peak")
the highest throughput each configuration achieved over its sweep.

Usage: cost_table.py README NAME RATE|peak LABEL=NAME...   (results/NAME.csv, results/NAME-cost.csv)
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import mdtable  # noqa: E402


def line(spec, rate):
    label, name = spec.split("=", 1)
    with open(f"results/{name}-cost.csv") as f:
        cost = next(r for r in csv.DictReader(f) if float(r["offered_mrps"]) == rate)
    with open(f"results/{name}.csv") as f:
        lat = next(r for r in csv.DictReader(f) if float(r["offered_mrps"]) == rate and r["class"] == "all")
    return {"label": label, "median": lat["median_ns"], **cost}


def peak(spec):
    label, name = spec.split("=", 1)
    with open(f"results/{name}.csv") as f:
        best = max((r for r in csv.DictReader(f) if r["class"] == "all"), key=lambda r: float(r["achieved_mrps"]))
    return [label, f"{float(best['achieved_mrps']):.2f}", f"{float(best['offered_mrps']):g}"]


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    if argv[3] == "peak":
        rows = [peak(s) for s in argv[4:]]
        cols = [("", lambda r: r[0]), ("highest achieved (Mrps)", lambda r: r[1]), ("at offered (Mrps)", lambda r: r[2])]
        mdtable.update(argv[1], argv[2], mdtable.table(rows, cols))
        return
    readme, name, rate = argv[1], argv[2], float(argv[3])
    rows = [line(s, rate) for s in argv[4:]]
    columns = [
        ("", lambda r: r["label"]),
        ("instructions", lambda r: mdtable.num(round(float(r["instructions_per_reply"])))),
        ("busy cycles", lambda r: mdtable.num(round(float(r["busy_cycles_per_reply"])))),
        ("D-cache misses", lambda r: f"{float(r['dcache_misses_per_reply']):.1f}"),
        ("LLC misses", lambda r: f"{float(r['llc_misses_per_reply']):.1f}"),
        ("median latency (ns)", lambda r: mdtable.num(round(float(r["median"])))),
    ]
    mdtable.update(readme, name, mdtable.table(rows, columns))


if __name__ == "__main__":
    main(sys.argv)
