#!/usr/bin/env python3
"""Runs each application's sweep through the Python package (`nanopu.app`, in-process;
experiments/lib/appbench.py) and writes results/*.csv (run by ./run). Every run checks its
answers against the host's computation; one that differs stops here."""
import csv
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from appbench import apps  # noqa: E402
from csvio import write_csv  # noqa: E402

NICS = ["nanopu", "icenic"]
# The message of a run on IceNIC whose receive buffer dropped frames (no flow control).
DROPPED = "receive buffer full"


def runs(name, flag_sets):
    """(name, flags) for each set of flags."""
    return [(name, f) for f in flag_sets]


def nn_edges():
    """Both NICs; on IceNIC a round of N frames back to back could overflow the receive
    buffer (docs/apps/paper-apps.md "On IceNIC"; with the artifact SoC's sizes none does up
    to nn.h's 256 inputs): such rows would say so, empty."""
    points = [(nic, n) for nic in NICS for n in [1, 2, 4, 8, 16, 32, 48, 64, 128, 256]]
    docs = apps(runs("nn-edges", [{"edges": n, "rounds": 10, "nic": nic} for nic, n in points]), accept=DROPPED)
    for (nic, n), d in zip(points, docs):
        lat = d["latency_ns"] if d else {"median": "", "min": "", "max": ""}
        yield {"nic": nic, "edges": n, "median_ns": lat["median"], "min_ns": lat["min"], "max_ns": lat["max"],
               "per_edge_ns": lat["median"] / n if d else "", "dropped": "" if d else "yes"}


def dotprod():
    """Both NICs, both programs, 100 requests one at a time, per request size."""
    points = [(nic, prog, copy, w) for nic in NICS for prog, copy in [("dotprod_reg", False), ("dotprod_mem", True)]
              for w in [1, 2, 4, 8, 16, 32, 64, 128, 180]]
    flags = [{"words": w, "requests": 100, "nic": nic, "copy": copy} for nic, _, copy, w in points]
    for (nic, prog, _, w), d in zip(points, apps(runs("dotprod", flags))):
        lat = d["latency_ns"]
        yield {"nic": nic, "program": prog, "words": w, "median_ns": lat["median"], "min_ns": lat["min"],
               "max_ns": lat["max"]}


def nn():
    """nanoPU with 4 cores a node (one neuron per core), then nanoPU and IceNIC with one core a
    node (IceNIC nodes drive their NIC from one core): the same neurons on 4x the nodes."""
    points = [(nic, cores, layers) for nic, cores in [("nanopu", 4), ("nanopu", 1), ("icenic", 1)]
              for layers in ["4,4,2", "8,16,16,4", "16,32,32,8", "32,64,64,16"]]
    flags = [{"layers": [int(n) for n in layers.split(",")], "inferences": 10, "cores": cores, "nic": nic}
             for nic, cores, layers in points]
    for (nic, cores, layers), d in zip(points, apps(runs("nn", flags), accept=DROPPED)):
        lat = d["latency_ns"] if d else {"median": "", "min": "", "max": ""}
        yield {"nic": nic, "cores": cores, "layers": layers.replace(",", "-"),
               "neurons": sum(map(int, layers.split(","))), "median_ns": lat["median"], "min_ns": lat["min"],
               "max_ns": lat["max"]}


def othello():
    """nanoPU on 4-core nodes; then 16 workers of one core on each NIC. On IceNIC a search
    deeper than 4 plies overflows receive buffers: such rows say so, empty."""
    points = [("nanopu", n, 4, d) for n, d in [(4, 2), (4, 3), (4, 4), (4, 5), (1, 4), (16, 4)]]
    points += [(nic, 16, 1, d) for nic in NICS for d in [2, 3, 4, 5]]
    flags = [{"depth": depth, "nodes": nodes, "cores": cores, "nic": nic} for nic, nodes, cores, depth in points]
    for (nic, nodes, cores, depth), d in zip(points, apps(runs("othello", flags), accept=DROPPED)):
        keys = ["depth", "workers", "boards", "messages", "latency_ns", "value", "best_move"]
        row = {k: d[k] for k in keys} if d else {k: "" for k in keys} | {"depth": depth, "workers": nodes * cores}
        yield {"nic": nic, "cores": cores} | row


def nbody():
    for nic, d in zip(NICS, apps(runs("nbody", [{"bodies": 1000, "nic": nic} for nic in NICS]))):
        lat = d["latency_ns"]
        yield {"nic": nic, "bodies": d["bodies"], "opened": d["opened"], "median_ns": lat["median"],
               "min_ns": lat["min"], "max_ns": lat["max"]}


def nbody_root():
    """80 senders (as the incast experiment), then 800 x 100: the 80,000-body root. More
    bodies per sender than a few hundred costs the simulator more than linearly (README)."""
    flags = [{"senders": s, "per_sender": p, "cores": c} for s, p, c in [(80, 10, 4), (80, 50, 4), (80, 100, 4),
                                                                        (80, 100, 1), (800, 100, 4)]]
    for d in apps(runs("nbody-root", flags)):
        keys = ["senders", "per_sender", "cores", "requests", "root_busy_ns", "per_request_ns", "total_ns"]
        yield {k: d[k] for k in keys} | {
            "median_request_ns": d["request_latency_ns"]["median"], "max_request_ns": d["request_latency_ns"]["max"]}


def root_80000():
    """root-80000.toml: 80,000 sender nodes, one body each (about 40 s, 3.6 GB), through
    `nanopu.run_cluster`. The root serves forever, so the run does not end with every core
    exited: the summary must show every other core exited 0 and every message delivered;
    the times come from the per-message records (`nanopu run --messages`)."""
    import nanopu

    run = nanopu.run_cluster("root-80000.toml")
    s = run.summary
    if (s["cores"], s["cores_ok"], s["messages_delivered"]) != (80064, 80063, 160000):
        sys.exit(f"root-80000.toml: {s['cores_ok']} of {s['cores']} cores exited with 0, "
                 f"{s['messages_delivered']} messages delivered to cores: {s['problems']}")
    recs = list(csv.DictReader(io.StringIO(run.messages_csv)))
    root = "10.0.0.2"
    req = [r for r in recs if r["dst"] == root]
    rep = [r for r in recs if r["src"] == root]
    t = lambda rs, k, f: f(float(r[k]) for r in rs)  # noqa: E731
    busy = t(rep, "sent_ns", max) - t(req, "delivered_ns", min)
    lat = sorted(float(r["delivered_ns"]) - float(r["sent_ns"]) for r in req)
    print(f"  root-80000.toml: ok; transport: {s['transport']}", file=sys.stderr)
    yield {"senders": 80000, "per_sender": 1, "cores": 1, "requests": len(req), "root_busy_ns": busy,
           "per_request_ns": busy / len(req), "total_ns": t(rep, "delivered_ns", max) - t(req, "sent_ns", min),
           "median_request_ns": lat[len(lat) // 2], "max_request_ns": lat[-1]}


if __name__ == "__main__":
    os.makedirs("results", exist_ok=True)
    sweeps = [("nn-edges", nn_edges), ("dotprod", dotprod), ("nn", nn), ("othello", othello), ("nbody", nbody),
              ("nbody-root", nbody_root)]
    only = os.environ.get("ONLY")
    if only:
        sweeps = [s for s in sweeps if s[0] in only.split(",")]
    if os.environ.get("QUICK") != "1" and not only:
        sweeps.append(("root-80000", root_80000))
    for name, sweep in sweeps:
        print(f"== {name}", file=sys.stderr)
        write_csv(f"results/{name}.csv", list(sweep()))
