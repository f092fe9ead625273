"""The results tables of the experiments' READMEs, generated from the rows written to the
results CSV, so a README's table never disagrees with its CSV.

table(rows, columns, across=False): columns is a list of (label, function of a row -> text);
across=True puts the first column's values across the top (one column per row) and every
other column as a line. update(readme, name, text) replaces what lies between the README's
markers `<!-- results:NAME -->` and `<!-- /results:NAME -->`.
"""
import re


def us(ns, digits=2):
    """A time in ns as us, with thousands separators."""
    return f"{float(ns) / 1000:,.{digits}f}"


def num(x):
    """A count with thousands separators."""
    return f"{int(float(x)):,}"


def table(rows, columns, across=False):
    cells = [[f(r) for _, f in columns] for r in rows]
    labels = [label for label, _ in columns]
    if across:
        head = [labels[0]] + [c[0] for c in cells]
        lines = [[labels[i]] + [c[i] for c in cells] for i in range(1, len(labels))]
    else:
        head, lines = labels, cells
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(out + ["| " + " | ".join(line) + " |" for line in lines]) + "\n"


def update(readme, name, text):
    with open(readme) as f:
        s = f.read()
    pattern = re.compile(rf"(<!-- results:{name} -->\n).*?(<!-- /results:{name} -->)", re.S)
    if not pattern.search(s):
        raise SystemExit(f"{readme}: no <!-- results:{name} --> ... <!-- /results:{name} --> markers")
    with open(readme, "w") as f:
        f.write(pattern.sub(lambda m: m.group(1) + text + m.group(2), s))
