"""Verdicts on a Result: each returns None (as asserted) or why not."""
import re


def all_of(*checks):
    def check(r):
        return next((why for why in (c(r) for c in checks) if why), None)
    return check


def replies_of(n, **match):
    """Exactly n messages reached the host (from the first send on), matching `match`."""
    def check(r):
        got = len(r.replies(**match))
        return None if got == n else f"{got} replies{described(match)}, the tester waits for {n}"
    return check


def at_least(n, **match):
    def check(r):
        got = len(r.replies(**match))
        return None if got >= n else f"{got} replies{described(match)}, the tester waits for {n}"
    return check


def described(match):
    return "".join(f" with {k} {v:#x}" if isinstance(v, int) else f" with {k} {v}" for k, v in match.items())


def exited_zero(*nodes, cores=1):
    """Each node's runtime printed `cores` exits ("Core N exited with code X"), all 0."""
    def check(r):
        for node in nodes:
            codes = r.exit_codes(node)
            bad = [f"core {c} exited with {x}" for c, x in sorted(codes.items()) if x != 0]
            if bad:
                return f"node {node}: " + ", ".join(bad)
            if len(codes) < cores:
                return f"node {node}: {len(codes)} of {cores} cores exited ({last_line(r, node)})"
        return None
    return check


def prints(text, node=None):
    def check(r):
        return None if text in r.console(node) else f"no \"{text}\"" + (f" on node {node}" if node is not None else "")
    return check


def no_errors(pattern=r"ERROR|Error|Expected:|ASSERTION FAILED|failed"):
    """No console line the program prints when it finds a wrong value."""
    def check(r):
        for line in r.console().splitlines():
            if re.search(pattern, line):
                return f"printed \"{line.strip()[:90]}\""
        return None
    return check


def last_line(r, node):
    lines = [l for l in r.console(node).splitlines() if l.strip()]
    return f"last printed: \"{lines[-1][:60]}\"" if lines else "printed nothing"
