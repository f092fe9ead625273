#!/usr/bin/env python3
"""The crash runs' timelines: each request's latency against the time it was sent, GETs and
SETs apart, one panel per crashed replica, with the crash, the master finding the replica
silent, the chain reconfigured and the client told marked; requests never answered (sent to
the crashed replica before the client was told) drawn at the top. Also the README's table of
those times.

Usage: timeline.py OUT.svg README MARKER NAME=LABEL...  (results/crash-NAME-records.csv and
results/crash-NAME-reconfigs.csv from `nanopu chain --records --reconfigs`; the table goes
between the README's <!-- results:MARKER --> markers)
"""
import csv
import sys

sys.path.insert(0, "../lib")
import mdtable  # noqa: E402
import plots  # noqa: E402  (matplotlib set up for reproducible SVGs)

plt = plots.plt
WINDOW_US = (-150.0, 250.0)  # around the crash
MARKS = [("crashed_ns", "crash", "black"), ("detected_ns", "found silent", "tab:red"),
         ("reconfigured_ns", "chain reconfigured", "tab:orange"), ("learned_ns", "client told", "tab:green")]


def read(name):
    with open(f"results/crash-{name}-records.csv") as f:
        records = list(csv.DictReader(f))
    with open(f"results/crash-{name}-reconfigs.csv") as f:
        reconfig = next(csv.DictReader(f))
    return records, reconfig


def panel(ax, label, records, reconfig):
    crash = float(reconfig["crashed_ns"])
    lo, hi = (crash + 1e3 * w for w in WINDOW_US)
    shown = [r for r in records if lo <= float(r["sent_ns"]) <= hi]
    top = max(float(r["replied_ns"]) - float(r["sent_ns"]) for r in shown if r["replied_ns"]) / 1e3 * 1.1
    for cls, colour in (("get", "tab:blue"), ("set", "tab:purple")):
        pts = [r for r in shown if r["class"] == cls]
        xs = [(float(r["sent_ns"]) - crash) / 1e3 for r in pts if r["replied_ns"]]
        ys = [(float(r["replied_ns"]) - float(r["sent_ns"])) / 1e3 for r in pts if r["replied_ns"]]
        ax.scatter(xs, ys, s=4, color=colour, label=cls.upper())
        lost = [(float(r["sent_ns"]) - crash) / 1e3 for r in pts if not r["replied_ns"]]
        ax.scatter(lost, [top] * len(lost), s=12, marker="x", color=colour, label=f"{cls.upper()} never answered")
    for key, what, colour in MARKS:
        ax.axvline((float(reconfig[key]) - crash) / 1e3, color=colour, linestyle="--", linewidth=1, label=what)
    ax.set(title=label, ylabel="latency (us)", xlim=WINDOW_US, ylim=(0, top * 1.05))
    ax.grid(True, axis="y", color="#ddd")


def table(readme, marker, runs):
    def after(key):
        return lambda run: f"{(float(run[1][key]) - float(run[1]['crashed_ns'])) / 1e3:,.1f}"

    columns = [("crashed", lambda run: run[0]), ("found silent (us after the crash)", after("detected_ns")),
               ("chain reconfigured (us after)", after("reconfigured_ns")),
               ("client told (us after)", after("learned_ns")),
               ("new chain", lambda run: f"{run[1]['head']} -> {run[1]['tail']}")]
    mdtable.update(readme, marker, mdtable.table([(label, c) for label, (_, c) in runs], columns))


def main(argv):
    out, readme, marker, specs = argv[1], argv[2], argv[3], argv[4:]
    runs = [(s.split("=", 1)[1], read(s.split("=", 1)[0])) for s in specs]
    fig, axes = plt.subplots(len(runs), 1, figsize=(7.2, 2.6 * len(runs)), sharex=True)
    for ax, (label, (records, reconfig)) in zip(axes, runs):
        panel(ax, label, records, reconfig)
    axes[-1].set_xlabel("time the request was sent, us after the crash")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, metadata={"Date": None})
    table(readme, marker, runs)


if __name__ == "__main__":
    main(sys.argv)
