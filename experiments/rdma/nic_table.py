#!/usr/bin/env python3
"""The README's table of each operation's latency on both NICs at one offered load, from two
`nanopu load --out` tables: one line per operation, the nanoPU's and IceNIC's median and p99
in ns, each with IceNIC's over the nanoPU's.

Usage: nic_table.py README NAME NANOPU.csv ICENIC.csv RATE
  NAME  the README's markers <!-- results:NAME --> ... <!-- /results:NAME -->
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import mdtable  # noqa: E402
from op_table import NAMES  # noqa: E402


def rows_at(path, rate):
    with open(path) as f:
        rows = {r["class"]: r for r in csv.DictReader(f) if float(r["offered_mrps"]) == rate}
    if not rows:
        sys.exit(f"{path}: no rows at {rate} Mrps")
    return rows


def main(argv):
    if len(argv) != 6:
        sys.exit(__doc__)
    readme, name, rate = argv[1], argv[2], float(argv[5])
    nanopu, ice = rows_at(argv[3], rate), rows_at(argv[4], rate)
    lines = [{"class": c, "n": nanopu[c], "i": ice[c]} for c in nanopu]
    ns = lambda side, k: lambda r: f"{float(r[side][k]):.1f}"  # noqa: E731
    ratio = lambda k: lambda r: f"{float(r['i'][k]) / float(r['n'][k]):.2f}"  # noqa: E731
    columns = [("operation", lambda r: NAMES[r["class"]]),
               ("nanoPU median, ns", ns("n", "median_ns")), ("IceNIC median, ns", ns("i", "median_ns")),
               ("ratio", ratio("median_ns")),
               ("nanoPU p99, ns", ns("n", "p99_ns")), ("IceNIC p99, ns", ns("i", "p99_ns")),
               ("ratio ", ratio("p99_ns"))]
    mdtable.update(readme, name, mdtable.table(lines, columns))


if __name__ == "__main__":
    main(sys.argv)
