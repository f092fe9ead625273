#!/usr/bin/env python3
"""Plot a latency quantile against offered load from `nanopu load --out` tables, as SVG.

Usage: latency_plot.py [--ylog] OUT.svg TITLE QUANTILE SERIES...
  --ylog    a logarithmic latency axis (series that differ by orders of magnitude)
  QUANTILE  a column of the tables: median_ns, p99_ns or p999_ns
  SERIES    LABEL=TABLE.csv[:CLASS]   (CLASS defaults to "all")

Points whose quantile fell on unanswered requests ("inf") are drawn at the top edge with an
open marker.
"""
import csv
import sys

from plots import plot


def read_series(spec, quantile):
    label, rest = spec.split("=", 1)
    path, _, cls = rest.partition(":")
    cls = cls or "all"
    with open(path) as f:
        pts = [(float(r["offered_mrps"]), float(r[quantile])) for r in csv.DictReader(f) if r["class"] == cls]
    if not pts:
        sys.exit(f"{path}: no rows of class {cls!r}")
    return label, pts


def main(argv):
    ylog = argv[1:2] == ["--ylog"]
    argv = argv[:1] + argv[1 + ylog:]
    if len(argv) < 5:
        sys.exit(__doc__)
    out, title, quantile = argv[1:4]
    name = quantile.replace("_ns", "").replace("p999", "p99.9")
    series = [read_series(s, quantile) for s in argv[4:]]
    plot(out, title, "offered load (million requests/s)", f"{name} latency (us)", series, yscale=1000.0,
         ylog=ylog)


if __name__ == "__main__":
    main(sys.argv)
