"""Line plots as SVG, written directly so the figure is the same bytes on every machine.

plot(out, title, xlabel, ylabel, series, yscale=1.0): series is a list of
(label, [(x, y), ...]); y values are divided by `yscale` for the tick labels; an infinite y
is drawn at the top edge with an open marker.
"""
import math

W, H = 720, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 230, 40, 55
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def nice_ticks(hi, n=5):
    """Ticks 0, step, ... at a 1-2-2.5-5 step covering `hi` in about `n` intervals."""
    hi = hi if hi > 0 else 1.0
    raw = hi / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    count = math.ceil(hi / step - 1e-9)
    return [round(i * step, 9) for i in range(count + 1)], step * count


def log_ticks(lo, hi):
    """Decades 10^k covering [lo, hi] (both positive)."""
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0 ** k for k in range(k0, k1 + 1)]


def scale(values, lo_px, hi_px, log):
    """Ticks and a map from data to pixels along one axis (linear from 0, or log)."""
    if log:
        ticks = log_ticks(min(values), max(values))
        a, b = math.log10(ticks[0]), math.log10(ticks[-1])
        return ticks, lambda v: lo_px + (hi_px - lo_px) * (math.log10(max(v, ticks[0])) - a) / (b - a)
    ticks, top = nice_ticks(max(values))
    return ticks, lambda v: lo_px + (hi_px - lo_px) * min(v, top) / top


def plot(out, title, xlabel, ylabel, series, yscale=1.0, xlog=False, ylog=False):
    finite = [y for _, pts in series for _, y in pts if math.isfinite(y)] or [1.0]
    xticks, sx = scale([x for _, pts in series for x, _ in pts], LEFT, W - RIGHT, xlog)
    yticks, sy = scale(finite, H - BOTTOM, TOP, ylog)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>']
    svg += axes(xticks, yticks, sx, sy, xlabel, ylabel, yscale)
    for i, (label, pts) in enumerate(series):
        svg += line(pts, sx, sy, COLORS[i % len(COLORS)], label, i)
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


def axes(xticks, yticks, sx, sy, xlabel, ylabel, yscale):
    x0, y0 = sx(xticks[0]), sy(yticks[0])
    out = [f'<line x1="{x0}" y1="{y0}" x2="{sx(xticks[-1])}" y2="{y0}" stroke="black"/>',
           f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{TOP}" stroke="black"/>']
    for t in xticks:
        out.append(f'<text x="{sx(t):.1f}" y="{y0 + 18}" text-anchor="middle">{t:g}</text>')
    for t in yticks:
        out.append(f'<line x1="{x0}" y1="{sy(t):.1f}" x2="{W - RIGHT}" y2="{sy(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{t / yscale:g}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 15}" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text transform="translate(18,{(TOP + H - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">{ylabel}</text>')
    return out


def line(pts, sx, sy, color, label, i):
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
    out = [f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>']
    for x, y in pts:
        fill = color if math.isfinite(y) else "white"
        out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" fill="{fill}" stroke="{color}"/>')
    ly = TOP + 10 + 20 * i
    out.append(f'<line x1="{W - RIGHT + 12}" y1="{ly}" x2="{W - RIGHT + 36}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
    out.append(f'<text x="{W - RIGHT + 42}" y="{ly + 4}">{label}</text>')
    return out


def quartiles(values):
    """min, q1, median, q3, max by nearest rank."""
    v = sorted(values)
    q = lambda p: v[min(len(v) - 1, max(0, math.ceil(p * len(v)) - 1))]
    return v[0], q(0.25), q(0.5), q(0.75), v[-1]


def boxplot(out, title, ylabel, groups, yscale=1.0):
    """groups: [(label, [(series, values), ...]), ...]; one box per series in each group
    (whiskers at min and max, box from q1 to q3, line at the median)."""
    top = max(max(v) for _, ss in groups for _, v in ss if v) or 1.0
    yticks, ymax = nice_ticks(top)
    sy = lambda y: H - BOTTOM - (H - TOP - BOTTOM) * min(y, ymax) / ymax
    slot = (W - LEFT - RIGHT) / len(groups)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>']
    svg += box_axes(yticks, sy, ylabel, yscale)
    names = [n for n, _ in groups[0][1]]
    for g, (label, ss) in enumerate(groups):
        x0 = LEFT + g * slot
        svg.append(f'<text x="{x0 + slot / 2:.1f}" y="{H - BOTTOM + 18}" text-anchor="middle">{label}</text>')
        width = slot * 0.7 / len(ss)
        for k, (_, values) in enumerate(ss):
            if values:
                svg += box(x0 + slot * 0.15 + k * width, width * 0.85, quartiles(values), sy, COLORS[k % len(COLORS)])
    for k, n in enumerate(names):
        ly = TOP + 10 + 20 * k
        svg.append(f'<rect x="{W - RIGHT + 12}" y="{ly - 6}" width="24" height="12" fill="{COLORS[k]}" fill-opacity="0.4" stroke="{COLORS[k]}"/>')
        svg.append(f'<text x="{W - RIGHT + 42}" y="{ly + 4}">{n}</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


def box_axes(yticks, sy, ylabel, yscale):
    out = [f'<line x1="{LEFT}" y1="{sy(0)}" x2="{W - RIGHT}" y2="{sy(0)}" stroke="black"/>',
           f'<line x1="{LEFT}" y1="{sy(0)}" x2="{LEFT}" y2="{TOP}" stroke="black"/>']
    for t in yticks:
        out.append(f'<line x1="{LEFT}" y1="{sy(t):.1f}" x2="{W - RIGHT}" y2="{sy(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{t / yscale:g}</text>')
    out.append(f'<text transform="translate(18,{(TOP + H - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">{ylabel}</text>')
    return out


def box(x, w, q, sy, color):
    lo, q1, med, q3, hi = q
    mid = x + w / 2
    return [f'<line x1="{mid:.1f}" y1="{sy(lo):.1f}" x2="{mid:.1f}" y2="{sy(hi):.1f}" stroke="{color}"/>',
            f'<rect x="{x:.1f}" y="{sy(q3):.1f}" width="{w:.1f}" height="{max(0.5, sy(q1) - sy(q3)):.1f}" fill="{color}" fill-opacity="0.4" stroke="{color}"/>',
            f'<line x1="{x:.1f}" y1="{sy(med):.1f}" x2="{x + w:.1f}" y2="{sy(med):.1f}" stroke="black" stroke-width="2"/>']
