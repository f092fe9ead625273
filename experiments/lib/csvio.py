"""CSV files of the experiments: rows (dicts with the same keys) written with a header, and
read back as dicts. No dependency on the Python package, so the scripts that drive the CLI
use it too."""
import csv
import os


def write_csv(path, rows):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))
