"""Helpers of the experiments built on `nanopu app` and `nanopu bench` (paper-apps,
nic-compare): runs through the Python package (`nanopu.app`, `nanopu.bench`,
docs/python.md), in-process, each run's result the JSON document the command prints (as a
dict).

The runs of one call go as one `nanopu.sweep` (on a process pool, one worker per host CPU;
NANOPU_WORKERS=N for fewer), with its cache: rerunning an experiment whose simulator,
programs and arguments did not change redraws its tables and figures at once
(`NANOPU_CACHE=off` runs everything again). A run that fails stops the experiment with the
simulator's message, unless the caller accepts its message (`accept`).
"""
import os
import sys

try:
    from nanopu import sweep
except ImportError:
    sys.exit("this experiment uses the Python package: make python (at the repository root)")

# The programs, as the experiments' `run` scripts point at them.
SW_BUILD = os.environ.get("NANOPU_SW_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "sw", "build"))


def apps(runs, accept=None):
    """`nanopu app NAME FLAGS` for each (name, flags) of `runs`: the documents in order;
    exits if an answer differs from the host's. A run whose error message contains `accept`
    gives None."""
    return _docs("app", runs, accept, lambda doc: doc["ok"])


def benches(runs):
    """`nanopu bench NAME FLAGS` for each (name, flags) of `runs`: the documents in order."""
    return _docs("bench", runs, None, lambda doc: True)


def _docs(kind, runs, accept, ok):
    configs = [{"name": name, "sw_build": SW_BUILD, **flags} for name, flags in runs]
    workers = int(os.environ["NANOPU_WORKERS"]) if os.environ.get("NANOPU_WORKERS") else None
    use_cache = os.environ.get("NANOPU_CACHE", "on") != "off"
    s = sweep.run(kind, configs, workers=workers, cache=use_cache, on_error="record", progress=False)
    errors = {f["index"]: f["error"] for f in s.failures}
    docs = []
    for i, (name, flags) in enumerate(runs):
        label = f"{kind} {name} {_words(flags)}".rstrip()
        if i in errors and accept and accept in errors[i]:
            print(f"  {label}: {accept}", file=sys.stderr)
            docs.append(None)
            continue
        if i in errors:
            sys.exit(f"nanopu {label}: {errors[i]}")
        doc = s.run(i).summary
        if not ok(doc):
            sys.exit(f"nanopu {label}: an answer differs from the host's\n{doc}")
        print(f"  {label}: ok{' (cached)' if s.frame['cached'][i] else ''}", file=sys.stderr)
        docs.append(doc)
    return docs


def _words(flags):
    """The flags as the command line gives them, for messages."""
    return " ".join(f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}") for k, v in flags.items())
