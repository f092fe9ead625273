"""What `bench/sort-vs` and `bench/network-vs` share: one command run by two builds, either
both at once, each pinned to a host core of its own, then swapped (both runs of a pair meet
the same drift of the host, which runs one after the other measure as much as the builds:
docs/profile.md "Against the targets"), or once each under cachegrind's model of fixed
caches (host instructions, L1 data misses and last-level misses, the same on any host
within 0.03%: the model's sets follow the host addresses, which move from run to run)."""
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

# cachegrind's cache model: fixed, so that the counts do not depend on the host.
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=16777216,16,64"]
COUNTS = [("host instructions", r"I\s+refs:\s+([\d,]+)"), ("L1 data misses", r"D1\s+misses:\s+([\d,]+)"),
          ("last-level misses", r"LL misses:\s+([\d,]+)")]


def cpu_seconds():
    """User + system CPU seconds of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pinned(cmd, core, cwd=None, out=None):
    """(stdout, user + system CPU seconds) of `cmd`, run to its end pinned to host core
    `core`; with `out`, a path, its stdout goes to that file instead (and the text is
    None), for outputs too large to hold. A failed run ends the script with its errors."""
    before = cpu_seconds()
    sink = open(out, "w") if out else None
    try:
        p = subprocess.run(cmd, stdout=sink or subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                           preexec_fn=lambda: os.sched_setaffinity(0, {core}))
    finally:
        if sink:
            sink.close()
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    return p.stdout, cpu_seconds() - before


def parse(cmd, out, err):
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        sys.exit(f"{' '.join(cmd)} printed no JSON:\n{err[-2000:]}")


def start(cmd, cpu, cwd):
    """Start `cmd`, pinned to host core `cpu` if given; its output and errors go to temporary
    files (a pipe left unread could fill and stop it)."""
    out, err = tempfile.TemporaryFile(mode="w+"), tempfile.TemporaryFile(mode="w+")
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, cwd=cwd, preexec_fn=pin)
    return p, out, err


def finish(runs):
    """Wait for the runs: each one's (JSON document, CPU seconds, peak MiB), in `runs`' order."""
    done = {}
    while len(done) < len(runs):
        pid, status, ru = os.wait4(-1, 0)
        done[pid] = (status, ru)
    results = []
    for p, out, err in runs:
        status, ru = done[p.pid]
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(p.args)} failed:\n{errors[-2000:]}")
        results.append((parse(p.args, text, errors), ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024))
    return results


def paired(commands, rounds, cwd):
    """`rounds` rounds of both builds' commands ({"old": cmd, "new": cmd}) at once, pinned
    and swapped (one after the other where the host lets this process use one core only):
    ({build: [(doc, CPU s, peak MiB)]}, whether they ran at once)."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    together = len(cpus) == 2
    got = {w: [] for w in commands}
    for _ in range(rounds):
        for order in (("old", "new"), ("new", "old")):
            if together:
                runs = [start(commands[w], cpu, cwd) for w, cpu in zip(order, cpus)]
                for w, res in zip(order, finish(runs)):
                    got[w].append(res)
            else:
                for w in order:
                    got[w].append(finish([start(commands[w], None, cwd)])[0])
    return got, together


def report_paired(got, together, figures):
    """A row per pair of each figure (name, unit, f(doc, CPU s, MiB)) of both builds, their
    ratio old/new, and the ratios' median and range."""
    how = "at once, pinned to two host cores and swapped" if together else "alternated (one host core)"
    print(f"{len(got['old'])} runs of each build, {how}")
    for name, unit, f in figures:
        print(f"{name:<28} {'old':>10} {'new':>10} {'old/new':>8}")
        ratios = []
        for i, (o, n) in enumerate(zip(got["old"], got["new"])):
            vo, vn = f(*o), f(*n)
            ratios.append(vo / vn)
            print(f"  pair {i + 1:<21} {vo:>10.3f} {vn:>10.3f} {vo / vn:>8.3f}")
        print(f"  {name}, old/new: median {statistics.median(ratios):.3f}, from {min(ratios):.3f} to "
              f"{max(ratios):.3f} ({unit})")


def counted(cmd, cwd):
    """(JSON document, {figure: count}) of one run of `cmd` under cachegrind's cache model."""
    with tempfile.TemporaryDirectory() as d:
        vg = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", *CACHES, f"--cachegrind-out-file={d}/cg.out"]
        p = subprocess.run(vg + cmd, capture_output=True, text=True, cwd=cwd)
    counts = {}
    for name, pattern in COUNTS:
        m = re.search(pattern, p.stderr)
        if not m:
            sys.exit(f"valgrind printed no {name} for {' '.join(cmd)}:\n{p.stderr[-2000:]}")
        counts[name] = int(m.group(1).replace(",", ""))
    return parse(cmd, p.stdout, p.stderr), counts


def report_counted(counts, per=None):
    """Each count of both builds and their ratio; with `per` = (name, n), each divided by n too."""
    print(f"{'':<20} {'old':>18} {'new':>18} {'old/new':>8}")
    for name in counts["old"]:
        o, n = counts["old"][name], counts["new"][name]
        print(f"{name:<20} {o:>18,} {n:>18,} {o / n:>8.4f}")
        if per:
            print(f"{'  per ' + per[0]:<20} {o / per[1]:>18,.1f} {n / per[1]:>18,.1f}")
