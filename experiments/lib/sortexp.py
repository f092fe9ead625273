"""Helpers of the sort experiments: validated sorts through the Python package (`nanopu.sort`,
docs/python.md), tabulated.

Every run must pass the validator; a failing run stops the experiment with its problems.
Runs that write no file go through `nanopu.sweep` with its cache: rerunning an experiment
whose simulator, programs and settings did not change redraws its tables and figures at
once (`NANOPU_CACHE=off` runs everything again). A run that writes a trace or a stages file
always simulates.

With NANOPU=PATH set, `sort` and `sorts` run each configuration instead with that binary's
`nanopu sort --json` (`sorts` NANOPU_WORKERS of them at once, default 1; no cache; the Python
package is then not needed): the same figures, for a
binary whose outputs the installed package does not know yet.
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from csvio import read_csv, write_csv  # noqa: F401  (the sort experiments import them from here)

try:
    import nanopu
    from nanopu import sweep
except ImportError:
    # With NANOPU set, `sort` and `sorts` need only that binary.
    if not os.environ.get("NANOPU"):
        sys.exit("the sort experiments use the Python package (make python, at the repository root) "
                 "or a binary named by NANOPU=PATH")

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
APPS = os.path.join(ROOT, "sw", "build", "apps")
FILES = ("trace", "stages", "trace_messages")


def sort(**knobs):
    """One validated run's summary (what `nanopu sort --json` prints); knobs are `nanopu
    sort`'s options as keyword arguments, as `nanopu.sort` takes them."""
    if os.environ.get("NANOPU"):
        return sort_cli(knobs)
    if not os.path.exists(os.path.join(APPS, "nanosort.elf")):
        sys.exit("build the programs first: make sw (at the repository root)")
    started = time.time()
    r, cached = run({"apps": APPS, **knobs})
    if not r.valid:
        sys.exit(f"{knobs}: validator FAIL: {r.summary['problems']}")
    shown = " ".join(f"{k}={v}" for k, v in knobs.items() if k not in FILES)
    took = "cached" if cached else f"{time.time() - started:.1f} s"
    print(f"  {shown}: {r.total_ns / 1000:.2f} us, PASS ({took})", file=sys.stderr)
    return r.summary


def run(flags):
    """The run and whether it came from the sweep cache."""
    if any(k in flags for k in FILES):
        return nanopu.sort(**flags), False
    use_cache = os.environ.get("NANOPU_CACHE", "on") != "off"
    s = sweep.run("sort", [flags], backend="thread", cache=use_cache, progress=False)
    return s.run(0), bool(s.frame["cached"][0])


def stage(r, name, field):
    """A per-stage figure of a run (0 when the stage did not run)."""
    return next((s[field] for s in r["figures"]["stages"] if s["stage"] == name), 0.0)


def idle_mean(r):
    """Mean idle time per core over all stages, ns."""
    return sum(s["idle_mean_ns"] * s["cores"] for s in r["figures"]["stages"]) / max(1, r["cores"])




def sorts(configs, workers=None):
    """The summaries of several validated runs (each a dict of knobs, as `sort` takes them),
    in order: through the CLI named by NANOPU when it is set (`workers` at once, default
    NANOPU_WORKERS or 1: fewer for runs that need a lot of memory), else one by one as `sort`."""
    if not os.environ.get("NANOPU"):
        return [sort(**c) for c in configs]
    workers = workers or int(os.environ.get("NANOPU_WORKERS", "1"))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(sort_cli, configs))


def sort_cli(knobs):
    """One validated run through `$NANOPU sort --json`; a failing run stops the experiment."""
    started = time.time()
    # The CLI runs at the repository root: output files are named relative to the caller's directory.
    knobs = {k: os.path.abspath(v) if k in FILES else v for k, v in knobs.items()}
    flags = [f"--{k.replace('_', '-')}={str(v).lower() if isinstance(v, bool) else v}" for k, v in knobs.items()]
    done = subprocess.run([os.environ["NANOPU"], "sort", "--apps", APPS, "--json", *flags],
                          capture_output=True, text=True, cwd=ROOT)
    try:
        r = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"{knobs}: nanopu sort failed: {done.stderr.strip()}")
    if not r["valid"]:
        # Raised in a worker thread, it reaches the caller of `sorts` once map gets to it.
        raise SystemExit(f"{knobs}: validator FAIL: {r['problems'][:3]}")
    shown = " ".join(f"{k}={v}" for k, v in knobs.items() if k not in FILES)
    print(f"  {shown}: {r['figures']['total_ns'] / 1000:.2f} us, PASS ({time.time() - started:.1f} s)", file=sys.stderr)
    return r
