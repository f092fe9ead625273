#!/usr/bin/env python3
"""One-sided RDMA-like operations timed end to end by a client on another node, as the
nanoPU prototype's lnic-rdma-ops.c measures them (docs/apps/rdma.md "End to end from a
client node"): end-to-end.toml (ours, the prototype's two-host network) and
end-to-end-43.toml (43.75 ns links); with PROTOTYPE_TESTS_LNIC_SORT naming the tests-lnic/
folder of l-nic/chipyard's lnic-sort branch, the prototype's own program on the same two
networks (end-to-end-prototype*.toml), built in a scratch directory as
scripts/prototype-suite builds it; without it, results/end-to-end.csv keeps the prototype's
rows of the last run that had it. Writes results/end-to-end.csv (cycles per operation, as
each client printed them, summarised in ns) and the README's end-to-end table.

    ./end_to_end.py
"""
import math
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "prototype_suite"))
import clusterexp  # noqa: E402
from csvio import read_csv, write_csv  # noqa: E402
from mdtable import table, update  # noqa: E402

GHZ = 3.2  # the prototype's core clock: rdcycle counts at 3.2 GHz (docs/platform.md section 1)
OURS = {"end-to-end": 150.9375, "end-to-end-43": 43.75}
PROTOTYPE = {"end-to-end-prototype": 150.9375, "end-to-end-prototype-43": 43.75}
PROGRAM = "lnic-rdma-ops"
OPS = ["READ", "WRITE", "CAS", "FA", "INDIRECT_READ"]
# The prototype's own FireSim run of lnic-rdma-ops.c on its two-host network (483-cycle
# links), as the authors' notebook prints them: l-nic/firesim branch lnic-dev,
# deploy/Firesim-Evals.ipynb, "One-Sided RDMA Operations", the outputs of
# rdma_latency.median() and rdma_latency.quantile(0.9) (the run of 2021-04-20, 200 samples
# an operation), ns.
FIRESIM_MEDIAN = {"READ": 678.125, "WRITE": 679.6875, "CAS": 686.5625, "FA": 688.125, "INDIRECT_READ": 691.09375}
FIRESIM_P90 = {"READ": 679.71875, "WRITE": 685.9375, "CAS": 690.3125, "FA": 691.65625, "INDIRECT_READ": 714.5}
CSV = "results/end-to-end.csv"


def client_cycles(name, summary):
    """{op: [cycles]} from the client's (node 1's) &&CSV&& lines; stops on a client error."""
    text = "\n".join(c for c in summary["consoles"] if c.startswith("node 1 "))
    wrong = "wrong replies:" in text and "wrong replies: 0" not in text
    if "Client complete!" not in text or "ERROR" in text or wrong:
        sys.exit(f"{name}: the client did not complete cleanly:\n{text[-2000:]}")
    out = {}
    for line in text.splitlines():
        if "&&CSV&&," in line:
            fields = line[line.index("&&CSV&&,"):].split(",")
            out[fields[1]] = [int(c) for c in fields[2:]]
    if sorted(out) != sorted(OPS):
        sys.exit(f"{name}: the client printed {sorted(out)}, expected {OPS}")
    return out


def nearest_rank(sorted_xs, q):
    """The q-quantile by the nearest-rank method, as the simulator's summaries
    (crates/sim/src/stats.rs)."""
    rank = max(1, min(len(sorted_xs), math.ceil(q * len(sorted_xs))))
    return sorted_xs[rank - 1]


def rows_of(name, program, link_ns, cycles):
    rows = []
    for op in OPS:
        xs = sorted(c / GHZ for c in cycles[op])
        rows.append({"config": name, "program": program, "link_ns": str(link_ns), "op": op,
                     "requests": len(xs), "mean_ns": f"{sum(xs) / len(xs):.1f}",
                     "median_ns": f"{nearest_rank(xs, 0.5):.1f}", "p90_ns": f"{nearest_rank(xs, 0.9):.1f}",
                     "p99_ns": f"{nearest_rank(xs, 0.99):.1f}",
                     "min_ns": f"{xs[0]:.1f}", "max_ns": f"{xs[-1]:.1f}"})
    return rows


def run_ours():
    sums = clusterexp.run(list(OURS), out="results")
    return [r for n, link in OURS.items() for r in rows_of(n, "rdma_client.c", link, client_cycles(n, sums[n]))]


def run_prototype(src):
    from build import build_all
    with tempfile.TemporaryDirectory(prefix="rdma-prototype-") as scratch:
        elf, why = build_all(os.path.abspath(src), scratch, os.path.join(ROOT, "sw", "cxx"), {PROGRAM})[PROGRAM]
        if elf is None:
            sys.exit(f"{PROGRAM}: {why}")
        rows = []
        for name, link in PROTOTYPE.items():
            with open(f"{name}.toml") as f:
                text = f.read().replace(f'elf = "{PROGRAM}.riscv"', f"elf = {elf!r}", 1)
            cfg = os.path.join(scratch, name)
            with open(f"{cfg}.toml", "w") as f:
                f.write(text)
            summary = clusterexp.run([cfg], out=scratch)[cfg]
            rows += rows_of(name, f"{PROGRAM}.c", link, client_cycles(name, summary))
        return rows


def prototype_rows():
    src = os.environ.get("PROTOTYPE_TESTS_LNIC_SORT")
    if src:
        return run_prototype(src)
    print("PROTOTYPE_TESTS_LNIC_SORT not set: the prototype's rows of results/end-to-end.csv kept",
          file=sys.stderr)
    return [r for r in read_csv(CSV) if r["program"] != "rdma_client.c"] if os.path.exists(CSV) else []


SERVER_SIDE = {"READ": "read", "WRITE": "write", "CAS": "cas", "FA": "faa", "INDIRECT_READ": "indirect_read"}


def readme_table(rows):
    """One line per operation: the prototype's FireSim figures, the prototype's program here
    and ours on the same network (median / p90), ours against the FireSim median, ours at
    43.75 ns links, and the server-side median (idle-word.toml)."""
    by = {(r["config"], r["op"]): r for r in rows}
    side = {r["class"]: r for r in read_csv("results/idle-word.csv")}
    pair = lambda n: lambda op: f"{by[n, op]['median_ns']} / {by[n, op]['p90_ns']}"  # noqa: E731
    cols = [("operation", lambda op: op),
            ("prototype on FireSim", lambda op: f"{FIRESIM_MEDIAN[op]:.1f} / {FIRESIM_P90[op]:.1f}")]
    if any(c == "end-to-end-prototype" for c, _ in by):
        cols.append(("prototype's program here", pair("end-to-end-prototype")))
    cols += [("ours", pair("end-to-end")),
             ("ours / FireSim, median", lambda op: f"{float(by['end-to-end', op]['median_ns']) / FIRESIM_MEDIAN[op]:.2f}"),
             ("ours, 43.75 ns links", pair("end-to-end-43")),
             ("server side, median", lambda op: side[SERVER_SIDE[op]]["median_ns"])]
    update("README.md", "end-to-end", table(OPS, cols))


if __name__ == "__main__":
    os.chdir(HERE)
    rows = run_ours() + prototype_rows()
    write_csv(CSV, rows)
    readme_table(rows)
    print(f"wrote {CSV} and the README's end-to-end table", file=sys.stderr)
