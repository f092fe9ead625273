#!/usr/bin/env python3
"""Write a README's results table from `nanopu load --out` tables: one line per series, one
column per offered load, the chosen quantile in ns.

Usage: load_table.py README NAME QUANTILE RATES SERIES...
  NAME      the README's markers <!-- results:NAME --> ... <!-- /results:NAME -->
  QUANTILE  median_ns, p99_ns or p999_ns
  RATES     offered loads to show, comma-separated (Mrps, as in the tables)
  SERIES    LABEL=TABLE.csv[:CLASS][@COLUMN]   (CLASS defaults to "all"; COLUMN, the
            series' own column in place of QUANTILE, e.g. mean_ns from a table of means)
An unanswered quantile ("inf") shows as "unanswered".
"""
import csv
import sys

import mdtable


def row(spec, quantile, rates):
    label, rest = spec.split("=", 1)
    rest, _, column = rest.partition("@")
    quantile = column or quantile
    path, _, cls = rest.partition(":")
    with open(path) as f:
        got = {float(r["offered_mrps"]): r[quantile] for r in csv.DictReader(f) if r["class"] == (cls or "all")}
    missing = [x for x in rates if x not in got]
    if missing:
        sys.exit(f"{path}: no {cls or 'all'} rows at {missing} Mrps")
    return [label] + ["unanswered" if got[x] == "inf" else mdtable.num(round(float(got[x]))) for x in rates]


def main(argv):
    if len(argv) < 6:
        sys.exit(__doc__)
    readme, name, quantile, rates = argv[1], argv[2], argv[3], [float(x) for x in argv[4].split(",")]
    lines = [["offered load (Mrps)"] + [f"{x:g}" for x in rates]] + [row(s, quantile, rates) for s in argv[5:]]
    out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
    mdtable.update(readme, name, "\n".join(out + ["| " + " | ".join(x) + " |" for x in lines[1:]]) + "\n")


if __name__ == "__main__":
    main(sys.argv)
