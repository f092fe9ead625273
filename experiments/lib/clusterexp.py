"""Helpers of the cluster experiments (incast, multicast, alltoall): each configuration
NAME.toml of the working directory run in-process through the Python package
(`nanopu.run_cluster`, docs/python.md), its summary written as NAME.json in the layout
`nanopu run NAME.toml --json` prints (two-space indent, keys in the simulator's order).
"""
import json
import os
import sys
import time

try:
    import nanopu
except ImportError:
    sys.exit("the cluster experiments use the Python package: make python (at the repository root)")


def run(names, out="."):
    """Run NAME.toml for each name; write OUT/NAME.json; the summaries (dicts) by name.
    A run that stops with an error stops the experiment with the simulator's message."""
    os.makedirs(out, exist_ok=True)
    summaries = {}
    for name in names:
        start = time.monotonic()
        try:
            s = nanopu.run_cluster(f"{name}.toml").summary
        except nanopu.NanopuError as e:
            sys.exit(f"{name}.toml: {e}")
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            f.write(json.dumps(s, indent=2) + "\n")
        print(f"{name}: {time.monotonic() - start:.1f} s", file=sys.stderr)
        summaries[name] = s
    return summaries
