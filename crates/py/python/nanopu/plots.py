"""Figures of simulated results, drawn with matplotlib (docs/python.md "Plots"): line plots
(with error bars or confidence intervals where a point has several seeds), box plots and
grouped bar charts, each written to a file whose name gives the format (.svg, .png, .pdf).
SVGs carry no date and use fixed element ids, so a figure is the same bytes whenever it is
redrawn from the same data with the same matplotlib. The experiments draw every figure with
these (experiments/lib/plots.py re-exports them for their scripts).

plot(out, title, xlabel, ylabel, series, yscale=1.0, xlog=False, ylog=False)
    series: [(label, points)], a point (x, y) or (x, y, (lo, hi)) for an error bar from lo
    to hi; y values are divided by `yscale` on the axis. An infinite y (a quantile that fell
    on unanswered requests) is drawn at the top edge with an open marker. Returns the number
    of error bars drawn.
boxplot(out, title, ylabel, groups, yscale=1.0)
    groups: [(label, [(series, values), ...])]; one box per series in each group: whiskers
    at the minimum and maximum, box from the first to the third quartile, line at the median.
    Returns the number of boxes drawn (a series without values in a group has none).
bars(out, title, ylabel, groups, yscale=1.0)
    groups: [(label, [(series, value), ...])]; one bar per series in each group, side by
    side, a series keeping its colour across groups (e.g. one group per workload size, one
    series per host stack). A series absent from a group leaves a gap. Returns the number of
    bars drawn.
rows_csv(path, **types)
    the rows of a CSV file as dicts; a column named in `types` is converted with its type
    (e.g. rows_csv(p, link_gbps=float)), an empty cell becoming None.
mean_ci(values)
    mean and 95% confidence interval (Student's t) of one point's values over seeds.
"""
import csv
import math
import statistics

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

plt.rcParams.update({"svg.hashsalt": "nanopu", "svg.fonttype": "none", "font.size": 10})
SIZE = (7.2, 4.2)  # inches
# Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom (then the normal's).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def mean_ci(values):
    """(mean, (lo, hi)): the mean of `values` and its 95% confidence interval."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, (m, m)
    t = T975[len(values) - 2] if len(values) <= 31 else 1.960
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    return m, (m - half, m + half)


def plot(out, title, xlabel, ylabel, series, yscale=1.0, xlog=False, ylog=False):
    fig, ax = plt.subplots(figsize=SIZE)
    finite = [p[1] for _, pts in series for p in pts if math.isfinite(p[1])] or [1.0]
    top = max(finite) / yscale
    bars = sum(line(ax, label, pts, yscale, top) for label, pts in series)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.set_yscale("log" if ylog else "linear")
    if xlog:  # the swept sizes themselves as ticks, written out (no 3x10^1)
        xs = sorted({p[0] for _, pts in series for p in pts})
        ax.set_xscale("log")
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if not ylog:
        ax.set_ylim(bottom=0)
    finish(fig, ax, out)
    return bars


def line(ax, label, pts, yscale, top):
    xs = [p[0] for p in pts]
    ys = [p[1] / yscale if math.isfinite(p[1]) else top for p in pts]
    drawn = ax.plot(xs, ys, marker="o", label=label)[0]
    color = drawn.get_color()
    open_ = [(x, y) for x, y, p in zip(xs, ys, pts) if not math.isfinite(p[1])]
    if open_:
        ax.plot(*zip(*open_), linestyle="none", marker="o", markerfacecolor="white", color=color)
    bars = [(p[0], p[1] / yscale, p[2]) for p in pts if len(p) > 2 and math.isfinite(p[1])]
    if bars:
        lo = [y - b[0] / yscale for _, y, b in bars]
        hi = [b[1] / yscale - y for _, y, b in bars]
        ax.errorbar([b[0] for b in bars], [b[1] for b in bars], yerr=[lo, hi], fmt="none", ecolor=color, capsize=3)
    return len(bars)


def boxplot(out, title, ylabel, groups, yscale=1.0):
    fig, ax = plt.subplots(figsize=SIZE)
    names = [n for n, _ in groups[0][1]]
    width, boxes = 0.7 / len(names), 0
    for k, name in enumerate(names):
        data = [[v / yscale for v in dict(ss).get(name, [])] for _, ss in groups]
        pos = [g + (k - (len(names) - 1) / 2) * width for g in range(len(groups))]
        keep = [(p, d) for p, d in zip(pos, data) if d]
        color, boxes = f"C{k}", boxes + len(keep)
        ax.boxplot([d for _, d in keep], positions=[p for p, _ in keep], widths=width * 0.85, whis=(0, 100),
                   patch_artist=True, boxprops={"facecolor": color, "alpha": 0.4}, medianprops={"color": "black"},
                   showfliers=False)
        ax.plot([], [], color=color, linewidth=8, alpha=0.4, label=name)
    ax.set_xticks(range(len(groups)), [label for label, _ in groups])
    ax.set(title=title, ylabel=ylabel)
    ax.set_ylim(bottom=0)
    finish(fig, ax, out)
    return boxes


def bars(out, title, ylabel, groups, yscale=1.0):
    fig, ax = plt.subplots(figsize=SIZE)
    names = list(dict.fromkeys(n for _, ss in groups for n, _ in ss))
    if not names:
        raise ValueError(f"bars: no value to draw in {out}")
    width, drawn = 0.8 / len(names), 0
    for k, name in enumerate(names):
        pts = [(g, dict(ss)[name] / yscale) for g, (_, ss) in enumerate(groups) if name in dict(ss)]
        xs = [g + (k - (len(names) - 1) / 2) * width for g, _ in pts]
        ax.bar(xs, [v for _, v in pts], width=width * 0.9, color=f"C{k}", label=name)
        drawn += len(pts)
    ax.set_xticks(range(len(groups)), [label for label, _ in groups])
    ax.set(title=title, ylabel=ylabel)
    ax.set_ylim(bottom=0)
    finish(fig, ax, out)
    return drawn


def rows_csv(path, **types):
    """The rows of the CSV file at `path`, each a dict; columns named in `types` converted."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for col, t in types.items():
            r[col] = t(r[col]) if r[col] != "" else None
    return rows


def finish(fig, ax, out):
    ax.grid(True, axis="y", color="#ddd")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    meta = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(out[out.rfind("."):], {})
    fig.savefig(out, metadata=meta)
    plt.close(fig)
