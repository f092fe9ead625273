#!/usr/bin/env python3
"""The README's table of each operation's latency at one offered load, from a `nanopu load
--out` table: one line per operation, its median, p99 and p99.9 in ns.

Usage: op_table.py README NAME TABLE.csv RATE
  NAME  the README's markers <!-- results:NAME --> ... <!-- /results:NAME -->
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import mdtable  # noqa: E402

NAMES = {"read": "READ", "write": "WRITE", "cas": "CAS", "faa": "FAA",
         "indirect_read": "indirect READ", "all": "all"}


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    readme, name, path, rate = argv[1], argv[2], argv[3], float(argv[4])
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if float(r["offered_mrps"]) == rate]
    if not rows:
        sys.exit(f"{path}: no rows at {rate} Mrps")
    ns = lambda k: lambda r: f"{float(r[k]):.1f}"  # noqa: E731
    columns = [("operation", lambda r: NAMES[r["class"]]), ("replies", lambda r: mdtable.num(r["replied"])),
               ("median, ns", ns("median_ns")), ("p99, ns", ns("p99_ns")), ("p99.9, ns", ns("p999_ns"))]
    mdtable.update(readme, name, mdtable.table(rows, columns))


if __name__ == "__main__":
    main(sys.argv)
