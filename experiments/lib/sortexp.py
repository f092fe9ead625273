"""Helpers of the sort experiments: run `nanopu sort --json`, check the validator, tabulate.

Every run must pass the validator; a failing run stops the experiment with its problems.
"""
import csv
import json
import os
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
# NANOPU_BIN: another build of `nanopu` (e.g. a copy, so that rebuilding does not disturb a long sweep).
BIN = os.environ.get("NANOPU_BIN", os.path.join(ROOT, "target", "release", "nanopu"))


def sort(**knobs):
    """One validated run; knobs are `nanopu sort` options (underscores for dashes)."""
    if not os.access(BIN, os.X_OK):
        sys.exit("build first: make build (at the repository root)")
    args = [BIN, "sort", "--json", "--apps", os.path.join(ROOT, "sw", "build", "apps")]
    for k, v in knobs.items():
        args += [f"--{k.replace('_', '-')}", str(v).lower() if isinstance(v, bool) else str(v)]
    started = time.time()
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in (0, 1) or not p.stdout:
        sys.exit(f"{' '.join(args[1:])}: {p.stderr.strip()}")
    r = json.loads(p.stdout)
    if not r["valid"]:
        sys.exit(f"{' '.join(args[1:])}: validator FAIL: {r['problems']}")
    print(f"  {' '.join(args[5:])}: {r['figures']['total_ns'] / 1000:.2f} us, PASS ({time.time() - started:.1f} s)", file=sys.stderr)
    return r


def stage(r, name, field):
    """A per-stage figure of a run (0 when the stage did not run)."""
    return next((s[field] for s in r["figures"]["stages"] if s["stage"] == name), 0.0)


def idle_mean(r):
    """Mean idle time per core over all stages, ns."""
    return sum(s["idle_mean_ns"] * s["cores"] for s in r["figures"]["stages"]) / max(1, r["cores"])


def write_csv(path, rows):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))
