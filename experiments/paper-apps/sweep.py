#!/usr/bin/env python3
"""Runs `nanopu app` over each application's sweep and writes results/*.csv (run by ./run).
Every run checks its answers against the host's computation; one that differs stops here."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from csvio import read_csv, write_csv  # noqa: E402

BIN = os.environ.get("NANOPU_BIN", "../../target/release/nanopu")


NICS = ["nanopu", "icenic"]


def app(*args, drops_ok=False):
    """One `nanopu app` run's JSON document; exit if its answers were wrong. With drops_ok, a
    run on IceNIC that failed because its receive buffer dropped frames gives None."""
    p = subprocess.run([BIN, "app", *map(str, args)], capture_output=True, text=True)
    if drops_ok and p.returncode != 0 and "receive buffer full" in p.stderr:
        print(f"  {' '.join(map(str, args))}: IceNIC dropped frames", file=sys.stderr)
        return None
    if p.returncode != 0:
        sys.exit(f"nanopu app {' '.join(map(str, args))}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    doc = json.loads(p.stdout)
    assert doc["ok"], doc
    print(f"  {' '.join(map(str, args))}: ok", file=sys.stderr)
    return doc


def nn_edges():
    """Both NICs; on IceNIC a round of N frames back to back overflows the receive buffer
    beyond about 50 (docs/apps/paper-apps.md "On IceNIC"): such rows say so, empty."""
    for nic in NICS:
        for n in [1, 2, 4, 8, 16, 32, 48, 64, 128, 256]:
            d = app("nn-edges", "--edges", n, "--rounds", 10, "--nic", nic, drops_ok=True)
            lat = d["latency_ns"] if d else {"median": "", "min": "", "max": ""}
            yield {"nic": nic, "edges": n, "median_ns": lat["median"], "min_ns": lat["min"], "max_ns": lat["max"],
                   "per_edge_ns": lat["median"] / n if d else "", "dropped": "" if d else "yes"}


def dotprod():
    """Both NICs, both programs, 100 requests one at a time, per request size."""
    for nic in NICS:
        for prog, flags in [("dotprod_reg", []), ("dotprod_mem", ["--copy"])]:
            for w in [1, 2, 4, 8, 16, 32, 64, 128, 180]:
                lat = app("dotprod", "--words", w, "--requests", 100, "--nic", nic, *flags)["latency_ns"]
                yield {"nic": nic, "program": prog, "words": w, "median_ns": lat["median"], "min_ns": lat["min"],
                       "max_ns": lat["max"]}


def nn():
    """nanoPU with 4 cores a node (one neuron per core), then nanoPU and IceNIC with one core a
    node (IceNIC nodes drive their NIC from one core): the same neurons on 4x the nodes."""
    for nic, cores in [("nanopu", 4), ("nanopu", 1), ("icenic", 1)]:
        for layers in ["4,4,2", "8,16,16,4", "16,32,32,8", "32,64,64,16"]:
            d = app("nn", "--layers", layers, "--inferences", 10, "--cores", cores, "--nic", nic, drops_ok=True)
            lat = d["latency_ns"] if d else {"median": "", "min": "", "max": ""}
            yield {"nic": nic, "cores": cores, "layers": layers.replace(",", "-"),
                   "neurons": sum(map(int, layers.split(","))), "median_ns": lat["median"], "min_ns": lat["min"],
                   "max_ns": lat["max"]}


def othello():
    """nanoPU on 4-core nodes; then 16 workers of one core on each NIC. On IceNIC a search
    deeper than 3 plies overflows receive buffers: such rows say so, empty."""
    runs = [("nanopu", n, 4, d) for n, d in [(4, 2), (4, 3), (4, 4), (4, 5), (1, 4), (16, 4)]]
    runs += [(nic, 16, 1, d) for nic in NICS for d in [2, 3, 4]]
    for nic, nodes, cores, depth in runs:
        d = app("othello", "--depth", depth, "--nodes", nodes, "--cores", cores, "--nic", nic, drops_ok=True)
        keys = ["depth", "workers", "boards", "messages", "latency_ns", "value", "best_move"]
        row = {k: d[k] for k in keys} if d else {k: "" for k in keys} | {"depth": depth, "workers": nodes * cores}
        yield {"nic": nic, "cores": cores} | row


def nbody():
    for nic in NICS:
        d = app("nbody", "--bodies", 1000, "--nic", nic)
        lat = d["latency_ns"]
        yield {"nic": nic, "bodies": d["bodies"], "opened": d["opened"], "median_ns": lat["median"],
               "min_ns": lat["min"], "max_ns": lat["max"]}


def nbody_root():
    """80 senders (as the incast experiment), then 800 x 100: the 80,000-body root. More
    bodies per sender than a few hundred costs the simulator more than linearly (README)."""
    for senders, per, cores in [(80, 10, 4), (80, 50, 4), (80, 100, 4), (80, 100, 1), (800, 100, 4)]:
        d = app("nbody-root", "--senders", senders, "--per-sender", per, "--cores", cores)
        keys = ["senders", "per_sender", "cores", "requests", "root_busy_ns", "per_request_ns", "total_ns"]
        yield {k: d[k] for k in keys} | {
            "median_request_ns": d["request_latency_ns"]["median"], "max_request_ns": d["request_latency_ns"]["max"]}


def root_80000():
    """root-80000.toml: 80,000 sender nodes, one body each (about 2 minutes, 3.6 GB). The root
    serves forever, so `nanopu run` does not exit 0: the summary must show every other core
    exited 0 and every message delivered; the times come from the per-message records."""
    p = subprocess.run([BIN, "run", "root-80000.toml", "--messages", "results/root-80000-messages.csv"],
                       capture_output=True, text=True)
    if "80064 cores, 80063 exited with 0" not in p.stdout or "160000 delivered to cores" not in p.stdout:
        sys.exit(f"root-80000.toml: {p.stdout}{p.stderr}")
    recs = read_csv("results/root-80000-messages.csv")
    os.remove("results/root-80000-messages.csv")
    root = "10.0.0.2"
    req = [r for r in recs if r["dst"] == root]
    rep = [r for r in recs if r["src"] == root]
    t = lambda rs, k, f: f(float(r[k]) for r in rs)  # noqa: E731
    busy = t(rep, "sent_ns", max) - t(req, "delivered_ns", min)
    lat = sorted(float(r["delivered_ns"]) - float(r["sent_ns"]) for r in req)
    summary = next(line for line in p.stdout.splitlines() if line.startswith("transport:"))
    print(f"  root-80000.toml: ok; {summary}", file=sys.stderr)
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
