"""Run one case with `nanopu run --json` and judge it: what ran, and what it answered."""
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Callable, List, Optional

LATENCY = 0x1234  # the tester's LATENCY_CONTEXT: the NIC stamps messages to and from it
DEFAULT = 0x5678  # the tester's DEFAULT_CONTEXT
MAX_ROUNDS = 3    # the tester's part answers what arrived at most this many times


@dataclass
class Send:
    """A message from the test host (10.0.0.1): `--send AT_NS:CTX/SRC:WORDS@NODE`."""
    at_ns: float
    ctx: int
    words: List[int]
    src: int = LATENCY
    node: int = 0

    def flag(self, cluster):
        words = ",".join(hex(w) for w in self.words)
        return f"{self.at_ns:.0f}:{self.ctx}/{self.src}:{words}" + (f"@{self.node}" if cluster else "")


@dataclass
class Case:
    """How the tester (or, without a test there, the program itself) is satisfied.

    check(result) returns None when the program answered as asserted, else why not.
    tester names the net-app-tester test reproduced; None: the tester has none, and
    check is the program's own verdict (printed, or its exit code).
    """
    check: Callable
    tester: Optional[str] = None
    sends: Callable = lambda: []
    reply: Optional[Callable] = None  # the tester answering what arrived: result -> Sends
    nodes: int = 1
    args: List[str] = field(default_factory=list)
    until_us: float = 400.0
    max_msg_bytes: Optional[int] = None
    # One node run as its FireSim workload ran it, behind FireSim's switch, which routes a
    # message to the node's own IP back (nanopu's test host does so when it does not
    # sniff), rather than on the tester's tap, which sniffs every frame.
    behind_switch: bool = False


@dataclass
class Outcome:
    runs: str
    answer: str


class Result:
    """What `nanopu run --json` reported, with the sends that produced it."""

    def __init__(self, data, sends):
        self.data, self.sends = data, sends
        self.first_send = min((s.at_ns for s in sends), default=0.0)

    def replies(self, **match):
        """Messages the host received from the first send on (not the boot messages)."""
        msgs = [m for m in self.data.get("host_received", []) if m["time_ns"] >= self.first_send]
        return [m for m in map(decoded, msgs) if all(m[k] == v for k, v in match.items())]

    def console(self, node=None):
        return "\n".join(text for n, _, text in self.consoles() if node is None or n == node)

    def consoles(self):
        """(node, core, text) of every core that printed."""
        if "consoles" in self.data:
            found = (re.match(r"node (\d+) core (\d+): (.*)", c, re.S) for c in self.data["consoles"])
            return [(int(m[1]), int(m[2]), m[3]) for m in found if m]
        return [(0, c["core"], c["console"]) for c in self.data["cores"] if c["console"]]

    def exit_codes(self, node=0):
        """The runtime's "Core N ... exited with code X" lines of a node: {core: X}; on
        one node without them (exit() called directly), the codes nanopu reports."""
        found = re.findall(r"Core (\d+) (?:\(only core\) )?exited with code (-?\d+)", self.console(node))
        if not found and "consoles" not in self.data:
            found = [(c["core"], c["exit_code"]) for c in self.data["cores"] if c["exit_code"] is not None]
        return {int(core): int(code) for core, code in found}


def decoded(msg):
    return dict(msg, words=[int(w, 16) for w in msg["words"]])


def run_case(case, elf, nanopu, scratch):
    sends = case.sends()
    for _ in range(MAX_ROUNDS):
        data, error = run_nanopu(case, elf, nanopu, scratch, sends)
        if error:
            return Outcome(f"no ({error})", "FAIL: it did not run" if case.tester else "n/a")
        result = Result(data, sends)
        more = case.reply(result) if case.reply else []
        if not more:
            break
        sends = sends + more
    return Outcome(ran(data), judge(case, result))


def judge(case, result):
    if case.check is None:
        return "n/a; no own check"
    try:
        why = case.check(result)
    except (IndexError, KeyError, ValueError) as e:
        why = f"unexpected reply ({type(e).__name__}: {e})"
    verdict = "PASS" if why is None else f"FAIL: {why}"
    return verdict if case.tester else f"n/a; own check {verdict}"


# How a cluster of servers that never exit ends: as planned, at the case's time limit.
PLANNED_END = ("incomplete: stopped at the time limit", "not exited:")


def ran(data):
    """"yes", or why not: a problem nanopu reported or a core stopped on an error."""
    problems = [p for p in data.get("problems", []) if not p.startswith(PLANNED_END)]
    if problems:
        return f"no ({problems[0]})"
    for core in data.get("cores", []) if isinstance(data.get("cores"), list) else []:
        if "error" in core["state"] or "fault" in core["state"]:
            return f"no (core {core['core']}: {core['state']})"
    for failure in data.get("failures", []):
        if not re.match(r"node \d+ core \d+: (running|waiting)", failure):
            return f"no ({failure})"
    codes = [c for c in data["cores"] if c.get("exit_code")] if isinstance(data.get("cores"), list) else []
    return "yes" + "".join(f" (core {c['core']} exited with {c['exit_code']})" for c in codes)


def run_nanopu(case, elf, nanopu, scratch, sends):
    """The summary as a dict, or None and the first line nanopu printed on stderr."""
    cluster = case.nodes > 1
    target = cluster_file(case, elf, scratch) if cluster else elf
    cmd = [nanopu, "run", target, "--json", *(f"--send={s.flag(cluster)}" for s in sends)]
    if not cluster:
        # The tester sniffs the node's port: every frame, whatever its address.
        cmd += ["--cores", "4", "--until-us", str(case.until_us)]
        cmd += [] if case.behind_switch else ["--host-sniffs"]
        cmd += ["--max-msg-bytes", str(case.max_msg_bytes)] if case.max_msg_bytes else []
        cmd += ["--"] + case.args if case.args else []
    done = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(done.stdout), None
    except json.JSONDecodeError:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        return None, lines[0].replace("nanopu: error: ", "")


def cluster_file(case, elf, scratch):
    """A star of case.nodes nodes of 4 cores, every one running the program."""
    path = os.path.join(scratch, os.path.basename(elf) + ".toml")
    node = f"max_msg_bytes = {case.max_msg_bytes}\n" if case.max_msg_bytes else ""
    with open(path, "w") as f:
        f.write(f"max_us = {case.until_us}\n[topology]\nkind = \"star\"\nnodes = {case.nodes}\n"
                f"[node]\ncores = 4\n{node}[[program]]\nnodes = \"all\"\nelf = {json.dumps(elf)}\n"
                f"args = {json.dumps(case.args)}\n")
    return path
