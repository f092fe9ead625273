#!/usr/bin/env python3
"""The nanoPU paper's bound on a well-behaved priority-0 thread's latency, N + k*x + (k-1)*c,
against every well-behaved request of the bounded runs.

Usage: bound.py RECORDS.csv CONTEXT_SWITCH_CYCLES
  RECORDS.csv  `nanopu load bounded.toml --records` (every request of every offered load)
  CONTEXT_SWITCH_CYCLES  c: `nanopu bench context-switch`'s warm median

N is the NIC latency, wire to wire at the load generator, less the service time: the
smallest a well-behaved request saw over the whole sweep (an unloaded request's). x is the
bounded processing time (`msg_cycles` of bounded.toml), k = 2 priority-0 threads.

The bound covers waiting behind the other thread, not behind the thread's own earlier
requests, so each well-behaved request's wait is split in two:
  own   = max(0, reply of the thread's previous request - this send - N): the thread was
          still serving its previous request when this one reached the NIC (context 0 is
          never switched out while it serves: nothing outranks it);
  other = latency - N - service - own: behind the other context and the nanokernel.
A request with own = 0 waited only behind the other thread; those are held to the bound.
Each such request past the bound is put down to what the other context had in the NIC when
it arrived: a stretched request, or only plain ones.

Writes results/bound.csv, bound.svg and the README's `bound` table.
"""
import math
import os
import sys
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import csvio  # noqa: E402
import mdtable  # noqa: E402
from plots import plot  # noqa: E402

GHZ = 3.2  # the node's clock (docs/platform.md)
K = 2  # priority-0 threads on the core
# sw/apps/service.c misbehave, as the prototype's c1_stall_freq / c1_stall_factor: context 1
# stretches its (FREQ + 1)th request, then every (FREQ + 1)th after.
STALL_FREQ, STALL_FACTOR = 100, 10


def by_rate(records):
    rates = {}
    for r in records:
        rates.setdefault(float(r["offered_mrps"]), []).append(r)
    for rows in rates.values():
        rows.sort(key=lambda r: int(r["request"]))
    return rates


def times(r):
    """(send, reply, service) of a record, ns; the reply infinite if none came."""
    reply = float(r["replied_ns"]) if r["replied_ns"] else math.inf
    return float(r["sent_ns"]), reply, int(r["service_cycles"]) / GHZ


def nic_latency(rates):
    """N: the smallest latency less service of a well-behaved request in the sweep."""
    return min(rep - s - svc for rows in rates.values() for r in rows if r["context"] == "0"
               for s, rep, svc in [times(r)])


def stretched_sends(rows):
    """Send times of context 1's stretched requests (the program counts every request it
    reads, warm-up included, in the order they reach it: send order on one link)."""
    ones = [r for r in rows if r["context"] == "1"]
    return [(times(r)[0], times(r)[1]) for i, r in enumerate(ones, 1) if i % (STALL_FREQ + 1) == 0]


def waits(rows, n, warmup):
    """Per measured well-behaved request: (latency, own wait, other wait, send)."""
    prev_reply, out = -math.inf, []
    for r in rows:
        if r["context"] != "0":
            continue
        sent, reply, svc = times(r)
        own = max(0.0, prev_reply - sent - n)
        if int(r["request"]) >= warmup:
            out.append((reply - sent, own, reply - sent - n - svc - own, sent))
        prev_reply = reply
    return out


def behind_stretch(sent, stretched, n):
    """A stretched request of context 1 was in the NIC or the core when this one arrived."""
    return any(s < sent < rep - n for s, rep in stretched)


def point(rate, rows, n, bound, warmup):
    w = waits(rows, n, warmup)
    alone = [x for x in w if x[1] == 0.0]
    over = [x for x in alone if x[0] > bound]
    stretched = stretched_sends(rows)
    by_stretch = sum(behind_stretch(x[3], stretched, n) for x in over)
    lat = sorted(x[0] for x in alone) or [math.nan]
    return {
        "offered_mrps": rate,
        "requests": len(w),
        "over_bound": sum(x[0] > bound for x in w),
        "alone": len(alone),
        "alone_p99_ns": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1),
        "alone_max_ns": round(lat[-1], 1),
        "alone_max_other_wait_ns": round(max((x[2] for x in alone), default=math.nan), 1),
        "alone_over_bound": len(over),
        "over_behind_stretch": by_stretch,
        "over_behind_plain": len(over) - by_stretch,
        "bound_ns": round(bound, 1),
    }


def ns(x):
    return "-" if math.isnan(x) else mdtable.num(x)


def pct(part, whole):
    return f"{100.0 * part / whole:.2f}%" if whole else "-"


def table(rows):
    cols = [
        ("offered load (Mrps)", lambda r: f"{r['offered_mrps']:g}"),
        ("well-behaved requests past the bound", lambda r: pct(r["over_bound"], r["requests"])),
        ("waited only behind the other thread", lambda r: pct(r["alone"], r["requests"])),
        ("of those: p99 (ns)", lambda r: ns(r["alone_p99_ns"])),
        ("of those: max (ns)", lambda r: ns(r["alone_max_ns"])),
        ("of those past the bound", lambda r: str(r["alone_over_bound"])),
        ("... behind a stretched request", lambda r: str(r["over_behind_stretch"])),
        ("... behind plain requests only", lambda r: str(r["over_behind_plain"])),
    ]
    return mdtable.table(rows, cols, across=True)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "bounded.toml"), "rb") as f:
        cfg = tomllib.load(f)
    rates = by_rate(csvio.read_csv(argv[1]))
    n, x, c = nic_latency(rates), cfg["server"]["msg_cycles"] / GHZ, float(argv[2]) / GHZ
    bound = n + K * x + (K - 1) * c
    rows = [point(r, rows, n, bound, cfg["load"]["warmup"]) for r, rows in sorted(rates.items())]
    csvio.write_csv(os.path.join(here, "results", "bound.csv"), rows)
    head = (f"N = {n:.1f} ns, x = {x:.1f} ns ({cfg['server']['msg_cycles']} cycles), "
            f"c = {c:.1f} ns ({argv[2]} cycles), k = {K}: bound {bound:,.1f} ns\n\n")
    mdtable.update(os.path.join(here, "README.md"), "bound", head + table(rows))
    shown = [r for r in rows if not math.isnan(r["alone_max_ns"])]
    series = [("p99, waited only behind the other thread", [(r["offered_mrps"], r["alone_p99_ns"]) for r in shown]),
              ("max, waited only behind the other thread", [(r["offered_mrps"], r["alone_max_ns"]) for r in shown]),
              ("bound N + 2x + c", [(r["offered_mrps"], bound) for r in rows])]
    plot(os.path.join(here, "bound.svg"), "Well-behaved context against the paper's bound (bounded)",
         "offered load (million requests/s)", "latency (us)", series, yscale=1000.0)
    print(f"wrote {here}/bound.svg, results/bound.csv and the README's bound table")


if __name__ == "__main__":
    main(sys.argv)
