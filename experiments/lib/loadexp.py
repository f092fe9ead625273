"""Helpers of the load experiments: `nanopu load` sweeps through the Python package
(`nanopu.load`, docs/python.md), each configuration's table written as results/NAME.csv
and, if asked, its server cost as results/NAME-cost.csv: the bytes `nanopu load --out`
and `--cost` write.

The configurations of one experiment run as one `nanopu.sweep` (on a process pool, one
worker per host CPU; NANOPU_WORKERS=N for fewer), with its cache: rerunning an experiment
whose simulator, programs and configurations did not change redraws its tables and
figures at once (`NANOPU_CACHE=off` runs everything again). A configuration whose figures
would not stand (a wrong reply, a lost request, a failed server) stops the experiment with
the simulator's message.

With NANOPU=PATH set, each configuration runs instead with that `nanopu` binary's
`nanopu load --out --cost` (one after another, no cache): the same bytes, for a binary
whose configuration keys the installed package does not know yet.
"""
import os
import subprocess
import sys

try:
    import nanopu  # noqa: F401  (the experiments use it as loadexp.nanopu)
    from nanopu import sweep
except ImportError:
    sys.exit("the load experiments use the Python package: make python (at the repository root)")

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(names, cost=False, paths=None):
    """Run NAME.toml of the working directory (or `paths[NAME]`) for each name; write
    results/NAME.csv (and results/NAME-cost.csv with `cost`). Returns the runs
    (`nanopu.LoadRun`) by name, or None when NANOPU ran them."""
    paths = {n: (paths or {}).get(n, f"{n}.toml") for n in names}
    for c in paths.values():
        elf = sweep.load_config(c)["server"]["elf"]
        if not os.path.exists(elf):
            sys.exit(f"{elf}: build the programs first: make sw (at the repository root)")
    if os.environ.get("NANOPU"):
        return run_cli(os.environ["NANOPU"], paths, cost)
    workers = int(os.environ["NANOPU_WORKERS"]) if os.environ.get("NANOPU_WORKERS") else None
    use_cache = os.environ.get("NANOPU_CACHE", "on") != "off"
    try:
        s = sweep.run("load", list(paths.values()), workers=workers, cache=use_cache)
    except sweep.SweepError as e:
        sys.exit(str(e))
    os.makedirs("results", exist_ok=True)
    runs = dict(zip(names, s.runs))
    for name, r in runs.items():
        write(f"results/{name}.csv", r.table_csv)
        if cost:
            write(f"results/{name}-cost.csv", r.cost_csv)
    return runs


def run_cli(nanopu, paths, cost):
    """Each configuration with the `nanopu` binary at `nanopu`, writing the same files."""
    os.makedirs("results", exist_ok=True)
    for name, c in paths.items():
        cmd = [nanopu, "load", c, "--out", f"results/{name}.csv"]
        cmd += ["--cost", f"results/{name}-cost.csv"] if cost else []
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{c}: {done.stderr.strip()}")


def write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)


def main(argv):
    """`sweep [--cost] CONFIG...`: run each CONFIG.toml of the working directory."""
    cost = "--cost" in argv[1:]
    names = [a for a in argv[1:] if a != "--cost"]
    if not names:
        sys.exit("usage: sweep [--cost] CONFIG...   (CONFIG.toml in the working directory)")
    run(names, cost)
