"""nanopu: the nanoPU full-system simulator, in-process, with results as pandas DataFrames.

Three kinds of run, each described by what the ``nanopu`` command line takes
(docs/python.md; the keys, units and defaults are those of the command's flags and of the
cluster configuration files, each checked by the simulator's own rules):

- ``run(program, sends=..., **flags)``: one node running a RISC-V ELF program, with the
  test host on its port sending messages at given times (``nanopu run PROGRAM.elf``);
- ``run_cluster(config, ...)``: a cluster from a TOML file or a dict of the same keys
  (``nanopu run CLUSTER.toml``);
- ``sort(**flags)``: a validated NanoSort, MilliSort, MergeMin or local sort
  (``nanopu sort``);
- ``load(config, ...)``: an open-loop request load swept over offered loads on a server
  node (``nanopu load CONFIG.toml``);
- ``chain(config, ...)`` and ``raft(config, ...)``: chain replication and Raft under an
  open-loop client, with faults (``nanopu chain``, ``nanopu raft``);
- ``app(name, ...)``: one of the paper's applications, checked against the host's
  computation (``nanopu app NAME``);
- ``bench(name, ...)``: a microbenchmark (``nanopu bench NAME``).

``nanopu.sweep`` runs many of them (configurations x seeds) on a process pool or Ray, into
one DataFrame, with a cache on disk.

Times are simulated nanoseconds unless a name says otherwise (``_us``: microseconds).
The same configuration and seed give the same results. A run the simulator refuses or
stops (a bad key, a program's illegal instruction) raises ``NanopuError`` with its
message; Ctrl-C stops a run and raises ``KeyboardInterrupt``. Python holds no simulation
logic: it renders flags and turns the simulator's JSON and CSV into DataFrames.
"""

import io
import json
import math
import os

import pandas as pd

from . import _native
from ._native import NanopuError
from ._tables import Tables
from ._tables import flat_figures as _flat

__all__ = [
    "run", "run_cluster", "sort", "load", "chain", "raft", "app", "bench", "schema", "send",
    "NanopuError", "ProgramRun", "ClusterRun", "SortRun", "LoadRun", "ChainRun", "RaftRun", "AppRun", "BenchRun",
]


def send(at_ns, context, words, *, src_context=0, node=0):
    """A message from the test host (10.0.0.1): at simulated time ``at_ns`` (ns) to
    ``context`` of node ``node``, from the host's ``src_context``, carrying ``words``
    (unsigned 64-bit integers). Returns the ``--send`` spec the simulator parses."""
    payload = ",".join(str(int(w)) for w in _listed("words", words))
    return f"{float(at_ns)!r}:{int(context)}/{int(src_context)}:{payload}@{int(node)}"


def run(program, *, sends=(), packets=(), args=(), progress=False, **flags):
    """Run ``program`` (an ELF path) on one node; ``flags`` are ``nanopu run``'s, as
    keyword arguments (``cores=4``, ``max_cycles=...``, ``until_us=...``, ``mac_ns=...``,
    ``latency_stamps=False``, ...). ``sends``: ``send(...)`` results or ``--send`` specs;
    ``packets``: ``(at_ns, packet)`` pairs, each a Scapy packet (``layers.data_packet``) or
    a frame's bytes, sent by the test host at that time (a frame the NIC cannot take is
    dropped and listed in ``rejected``); ``args``: the program's arguments. Returns a
    ``ProgramRun``."""
    return _program_run(_raw_program(program, sends, args, progress, flags, packets))


def run_cluster(config, *, sends=(), packets=(), pcap_at=None, threads=None, progress=False):
    """Run a cluster: ``config`` is a configuration file's path (ELF paths relative to its
    directory) or a dict of its keys (ELF paths relative to the working directory).
    ``sends``: ``send(...)`` results or ``--send`` specs; ``packets``: ``(at_ns, packet)``
    pairs as for ``run``, each entering the fabric at the test host's port (on switch 0)
    and carried by the host's transport to the node its addresses name
    (``layers.data_packet(..., dst="10.0.0.3")`` for node 1; a frame no node takes is
    dropped and listed in ``rejected``). ``pcap_at`` captures packets at ``"node:N"`` or
    ``"switch:S:P"``; ``threads``: host threads (the results do not depend on it). Returns
    a ``ClusterRun``."""
    return _cluster_run(_raw_cluster(config, sends, pcap_at, threads, progress, packets))


def sort(*, progress=False, **flags):
    """A validated sort; ``flags`` are ``nanopu sort``'s (``algorithm="nanosort"``,
    ``cores=64``, ``keys_per_core=16``, ``seed=1``, ``apps="sw/build/apps"``, ...).
    Returns a ``SortRun``."""
    return _sort_run(_raw_sort(flags, progress))


def load(config, *, seed=None, rates=None, requests=None, warmup=None, drain_us=None, records=False,
         progress=False):
    """Sweep an open-loop request load on a server node (``nanopu load CONFIG.toml``):
    ``config`` is a load configuration file's path (the server's ELF relative to its
    directory) or a dict of its keys (the ELF relative to the working directory). ``seed``
    replaces ``load.seed``; ``rates`` (Mrps, a list), ``requests``, ``warmup`` and
    ``drain_us`` replace the file's values as ``--rates``, ``--requests``, ``--warmup`` and
    ``--drain-us`` do; ``records``: keep every request (``--records``); ``progress``: each
    offered load's end and check on stderr, as the command line prints them. A run whose
    figures would not stand (a wrong reply, a lost request, a failed server) raises
    ``NanopuError`` with the command line's message. Returns a ``LoadRun``."""
    return _load_run(_raw_load(config, seed, rates, requests, warmup, drain_us, records, progress))


def chain(config, *, seed=None, rates=None, requests=None, progress=False):
    """Chain replication under an open-loop key-value load, swept over offered loads
    (``nanopu chain CONFIG.toml``): ``config`` is a chain file's path or a dict of its keys
    (paths as for ``load``). ``seed`` replaces ``load.seed``; ``rates`` and ``requests``
    are ``--rates`` and ``--requests``. A run whose figures would not stand raises
    ``NanopuError`` with the command line's message. Returns a ``ChainRun``."""
    return _chain_run(_raw_chain(config, seed, rates, requests, progress))


def raft(config, *, seed=None, replicas=None, rate=None, requests=None, progress=False):
    """Raft replicas under an open-loop client and faults, with the safety checks (``nanopu
    raft CONFIG.toml``): ``config`` is a Raft file's path or a dict of its keys. ``seed``,
    ``replicas``, ``rate`` (Mrps) and ``requests`` are ``--seed``, ``--replicas``,
    ``--rate`` and ``--requests``. A run that ends with problems (unanswered requests, a
    violation) returns normally, its ``problems`` listing them, as ``nanopu raft`` prints
    them (and exits 1). Returns a ``RaftRun``."""
    return _raft_run(_raw_raft(config, seed, replicas, rate, requests, progress))


def app(name, *, nic="nanopu", progress=False, **flags):
    """One of the paper's applications (``nanopu app NAME``), checked against the host's
    computation: ``name`` is ``"nn-edges"``, ``"nn"``, ``"othello"``, ``"dotprod"``,
    ``"nbody"`` or ``"nbody-root"``; ``nic`` is ``"nanopu"`` or ``"icenic"``; ``flags`` are
    the application's (``layers=[8, 16, 16, 4]``, ``cores=4``, ``copy=True``, ``seed=1``,
    ``sw_build="sw/build"``, ...), checked as the command checks them. An answer that
    differs from the host's returns normally with ``ok`` False (``nanopu app`` exits 1);
    a run the simulator refuses or stops raises ``NanopuError`` with its message (an
    IceNIC receive buffer's drops among them). Returns an ``AppRun``."""
    return _app_run(_raw_app({"name": name, "nic": nic, **flags}, progress))


def bench(name, *, progress=False, **flags):
    """A microbenchmark (``nanopu bench NAME``): ``name`` is one of ``nanopu bench
    --help``'s (``"loopback-latency"``, ``"nic-throughput"``, ``"rx"``, ...); ``flags`` are
    its (``requests=50``, ``app="stream"``, ``nic="icenic"``, ``sw_build=...``), checked by
    the command's own rules. A reply that does not answer its request raises
    ``NanopuError`` with the benchmark's message. Returns a ``BenchRun``."""
    return _bench_run(_raw_bench({"name": name, **flags}, progress))


def _config(config):
    """A configuration file's path, or a dict of its keys as JSON."""
    return (None, _dict_json(config)) if isinstance(config, dict) else (os.fspath(config), None)


def _dict_json(config):
    """A configuration dict as JSON; a number JSON cannot carry (NaN, an infinity) raises
    ``NanopuError`` naming its key, as the simulator names the others."""
    def check(v, path):
        if isinstance(v, float) and not math.isfinite(v):
            raise NanopuError(f"{path}: {v} is not a number a configuration takes")
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            check(x, f"{path}.{k}" if path else str(k))
    check(config, "")
    return json.dumps(config)


def _listed(name, values):
    """``values`` as a list; a string (which Python would iterate letter by letter) raises
    ``NanopuError`` naming the keyword."""
    if isinstance(values, (str, bytes)):
        raise NanopuError(f"{name}: a list of values, not the string {values!r}")
    return list(values)


# Each kind of run in two halves: the simulator's raw outputs (JSON and CSV text, capture
# bytes: what a sweep's worker sends back and its cache keeps), and the object made of them.


def _raw_program(program, sends, args, progress, flags, packets=()):
    words = {**flags, "sends": _specs(sends), "args": _words(args), "progress": bool(progress)}
    return [_native.run_program(os.fspath(program), _keywords(words), _frames(packets))]


def _frames(packets):
    """``(at_ns, packet)`` pairs as (time, the frame's bytes)."""
    return [(float(at_ns), bytes(p)) for at_ns, p in _listed("packets", packets)]


def _program_run(raw):
    return ProgramRun(json.loads(raw[0]))


def _raw_cluster(config, sends, pcap_at, threads, progress, packets=()):
    _unsigned(threads=threads)
    path, text = _config(config)
    return list(_native.run_cluster(path, text, _specs(sends), pcap_at, threads, progress, _frames(packets)))


def _cluster_run(raw):
    summary, messages, ports, pcap = raw
    return ClusterRun(json.loads(summary), messages, ports, pcap)


def _raw_sort(flags, progress):
    return list(_native.sort(_keywords(flags), progress))


def _sort_run(raw):
    summary, stages = raw
    return SortRun(json.loads(summary), stages)


def _unsigned(**values):
    """The overrides the simulator takes as unsigned 64-bit integers: one out of range raises
    ``NanopuError`` naming it (the native module's conversion would say only "can't convert
    negative int to unsigned")."""
    for name, v in values.items():
        if isinstance(v, int) and not isinstance(v, bool) and not 0 <= v < 2**64:
            raise NanopuError(f"{name}: {v} is not within 0..=18446744073709551615")


def _raw_chain(config, seed, rates, requests, progress):
    _unsigned(seed=seed, requests=requests)
    path, text = _config(config)
    rates = _rates(rates)
    return list(_native.chain(path, text, rates, requests, seed, progress))


def _chain_run(raw):
    return ChainRun(*raw)


def _raw_raft(config, seed, replicas, rate, requests, progress):
    _unsigned(seed=seed, replicas=replicas, requests=requests)
    path, text = _config(config)
    return list(_native.raft(path, text, seed, replicas, rate, requests, progress))


def _raft_run(raw):
    return RaftRun(*raw)


def _raw_app(config, progress):
    """``config``: the application's name and flags, as ``app`` takes them."""
    return [_native.app(*_named(config), progress)]


def _app_run(raw):
    return AppRun(json.loads(raw[0]))


def _raw_bench(config, progress):
    return [_native.bench(*_named(config), progress)]


def _bench_run(raw):
    return BenchRun(json.loads(raw[0]))


def _named(config):
    """An app's or benchmark's name and the rest of its configuration as keywords."""
    return str(config["name"]), _keywords({k: v for k, v in config.items() if k != "name"})


def _raw_load(config, seed, rates, requests, warmup, drain_us, records, progress):
    _unsigned(seed=seed, requests=requests, warmup=warmup)
    path, text = _config(config)
    rates = _rates(rates)
    return list(_native.load(path, text, rates, requests, warmup, drain_us, seed, records, progress))


def _load_run(raw):
    summary, table, cost, records = raw
    return LoadRun(json.loads(summary), table, cost, records)


def schema(kind):
    """The JSON Schema of a configuration file, ``"cluster"``, ``"load"``, ``"raft"`` or ``"chain"``, as a dict: the
    keys a ``run_cluster`` dict or TOML file may hold (docs/config.md)."""
    return json.loads(_native.schema(kind))


def _keywords(flags):
    """Keyword arguments as the JSON object the simulator puts onto its structs, each
    checked there by its flag's own rules (paths as strings; a value of another shape,
    a string where a list goes among them, is an error naming the keyword)."""
    def plain(v):
        if isinstance(v, os.PathLike):
            return os.fspath(v)
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v
    return json.dumps({k: plain(v) for k, v in flags.items()})


def _words(args):
    """A program's arguments as strings (numbers written out); a string is left whole, and
    refused as a list's stand-in by the simulator."""
    return [str(a) for a in args] if isinstance(args, (list, tuple)) else args


def _specs(sends):
    """``--send`` specs of ``send(...)`` results, specs, or dicts of ``send``'s arguments."""
    return [s if isinstance(s, str) else send(**s) for s in _listed("sends", sends)]


def _rates(rates):
    """Offered loads overriding the file's, Mrps: None keeps the file's; an empty list or a
    string raises ``NanopuError`` naming ``rates``."""
    if rates is None:
        return []
    rates = _listed("rates", rates)
    if not rates:
        raise NanopuError("rates: an empty list runs nothing; give at least one rate, or None for the file's")
    return [float(r) for r in rates]


def _csv(text, **options):
    """One of the simulator's CSV files as a DataFrame whose column types never depend on
    the values: times (``_ns``) and rates (``_mrps``) are always float64 (the simulator
    writes an offered load of 1 Mrps as ``1``, which pandas would read as an integer)."""
    df = pd.read_csv(io.StringIO(text), **options)
    return df.astype({c: "float64" for c in df.columns if c.endswith(("_ns", "_mrps"))})


def _totals(summary):
    """The summary's single figures as a one-row DataFrame (nested ones as ``a.b``)."""
    return pd.DataFrame([dict(_flat(summary))])


def _received(records):
    """Messages the test host received: arrival time (ns), source, contexts, length
    (bytes) and payload words (integers)."""
    cols = ["time_ns", "src_ip", "src_context", "dst_context", "len", "words"]
    df = pd.DataFrame(records, columns=cols)
    df["words"] = [[int(w, 16) for w in ws] for ws in df["words"]]
    return df


def _rejected(records):
    """Raw frames the test host sent that were dropped: time (ns) and why."""
    return pd.DataFrame(records, columns=["time_ns", "reason"]).astype({"time_ns": "float64", "reason": "object"})


class ProgramRun(Tables):
    """One node's run. ``summary``: everything ``nanopu run --json`` prints (dict);
    ``cores``: one row per core (exit code, instructions, cycles, misses, stall cycles,
    console); ``received``: what reached the test host, with times; ``totals``: the
    outcome and simulated time as one row; ``rejected``: frames from ``packets`` the NIC
    dropped, with the reason; ``packets()``: what reached the test host as Scapy packets.
    ``save(directory, format=None)`` writes the tables (``tables()``) as Parquet or
    CSV."""

    TABLES = ("cores", "received", "rejected", "totals")
    FIGURES = ("outcome", "simulated_ns")

    def __init__(self, summary):
        self.summary = summary
        self.cores = pd.DataFrame(summary["cores"]).set_index("core")
        self.received = _received(summary["host_received"])
        self.rejected = _rejected(summary["host_rejected"])
        self.totals = _totals(summary)

    def packets(self):
        """The messages that reached the test host as Scapy packets (Ether / IP /
        ``NanopuTransport`` / payload; one per 1,024-byte segment), each with ``time`` its
        arrival in simulated seconds. A single node's port has no transport, so message ids
        are 0 (``layers.replies``; needs Scapy)."""
        from . import layers

        return layers.replies(self.received)

    def counts(self):
        return {"cores": len(self.cores), "received": len(self.received), "rejected": len(self.rejected)}


class ClusterRun(Tables):
    """A cluster's run. ``summary``: ``nanopu run CLUSTER.toml --json`` (dict); ``totals``:
    its counts as one row (``transport.*``, ``fabric.*``); ``received``: what reached the
    test host; ``messages``: one row per message delivery (source, destination, bytes,
    send and delivery time in ns; delivery empty if never delivered; ``messages_csv``: the
    bytes ``--messages`` writes); ``ports``: packets, bytes and largest queue per fabric
    port; ``rejected``: frames from ``packets`` that no node took, with the reason;
    ``pcap``: the capture's bytes, if asked.
    ``save(directory, format=None)`` writes the tables as Parquet or CSV."""

    TABLES = ("totals", "received", "rejected", "messages", "ports")
    FIGURES = ("outcome", "nodes", "cores", "messages_delivered", "simulated_ns")

    def __init__(self, summary, messages, ports, pcap):
        self.summary = summary
        self.totals = _totals(summary)
        self.received = _received(summary["host_received"])
        self.rejected = _rejected(summary.get("host_rejected", []))
        self.messages_csv = messages
        self.messages = _csv(messages)
        self.ports = _csv(ports)
        self.pcap = pcap

    def packets(self):
        """The captured packets as Scapy packets, with the nanoPU layers bound
        (``nanopu.layers``; needs Scapy)."""
        from . import layers

        return layers.read_pcap(self.pcap)

    def counts(self):
        return {"received": len(self.received), "rejected": len(self.rejected)}


class SortRun(Tables):
    """A sort's run. ``summary``: ``nanopu sort --json`` (dict; ``wall_seconds`` is host
    time, the only figure that varies between identical runs); ``valid``: the validator's
    verdict; ``total_ns``: sort time; ``stages``: per-stage compute and idle time over the
    cores (mean and maximum, ns); ``core_stages``: every core's stages (start, end,
    compute, idle, ns); ``totals``: the single figures as one row.
    ``save(directory, format=None)`` writes the tables as Parquet or CSV."""

    TABLES = ("stages", "core_stages", "totals")
    FIGURES = ("algorithm", "cores", "keys_per_core", "seed", "valid", "figures.total_ns")

    def __init__(self, summary, stages):
        self.summary = summary
        self.valid = summary["valid"]
        self.total_ns = summary["figures"]["total_ns"]
        self.stages = pd.DataFrame(summary["figures"]["stages"])
        self.core_stages = _csv(stages)
        self.totals = _totals(summary)


class LoadRun(Tables):
    """A load sweep's results (``nanopu load``). ``summary``: what ``nanopu load --json``
    prints, as a dict: ``complete`` and ``problems``, the settings run (``seed``,
    ``rates_mrps``, ``requests``, ``warmup``), ``rows`` (the table) and ``points`` (each
    offered load's end, ``complete``, ``problems`` and check); ``results``: one
    row per offered load and request class (class ``all`` for every request together):
    requests measured and replied, achieved throughput (Mrps), median, p99 and p99.9
    latency (ns; ``inf`` where the quantile fell on unanswered requests), the bytes of
    ``--out``; ``checks``: per offered load, how the run ended and what the check of the
    replies found (``checked``, ``wrong``, ``lost``, ...; empty for a workload without
    one); ``cost``: the server's instructions, busy cycles and cache misses per reply
    (``--cost``); ``requests``: every request (class, context, send and reply time and
    ``latency_ns``, ns; NaN without a reply) if ``records=True`` was asked, else empty.
    ``save(directory, format=None)`` writes the tables as Parquet or CSV."""

    TABLES = ("results", "checks", "cost", "requests")
    FIGURES = ("seed", "requests")
    REQUEST_COLUMNS = ["offered_mrps", "request", "class", "context", "service_cycles", "sent_ns", "replied_ns"]

    def __init__(self, summary, table, cost, records):
        self.summary = summary
        self.table_csv, self.cost_csv, self.records_csv = table, cost, records
        self.results = _csv(table, keep_default_na=False, dtype={"class": str})
        self.cost = _csv(cost)
        self.checks = pd.DataFrame([_check_row(p) for p in summary["points"]])
        # Without records, the same columns of the same types, no rows.
        self.requests = _requests(",".join(self.REQUEST_COLUMNS) + "\n" if records is None else records)

    def counts(self):
        return {"rates_mrps": self.summary["rates_mrps"], "points": len(self.checks)}


class ChainRun(Tables):
    """A chain replication sweep's results (``nanopu chain``). ``results``: one row per
    offered load and request type (``get``, ``set``): the type's offered load
    (``class_offered_mrps``), requests measured and replied, achieved throughput, median,
    p99 and p99.9 latency (ns; ``inf`` where the quantile fell on unanswered requests;
    ``--out``); ``requests``: every request of the load, the node it went to, its send and
    reply time (``--records``) and ``latency_ns``; ``reconfigs``: each reconfiguration
    after a crash (crash, detection, new chain, client told, ns; ``--reconfigs``);
    ``summary``: the settings run, the reconfigurations in words (``timeline``),
    ``complete`` and ``problems``; ``problems``: why figures that stand are still not what
    the file asked for (a crash the load ended before), as ``nanopu chain`` prints them
    (and exits 2); empty when there is none.
    ``save(directory, format=None)`` writes the tables as Parquet or CSV."""

    TABLES = ("results", "requests", "reconfigs")
    FIGURES = ("seed", "requests")

    def __init__(self, summary, table, records, reconfigs):
        self.summary = json.loads(summary)
        self.problems = self.summary["problems"]
        self.table_csv, self.records_csv, self.reconfigs_csv = table, records, reconfigs
        self.results = _csv(table, keep_default_na=False, dtype={"class": str})
        self.requests = _requests(records)
        self.reconfigs = _csv(reconfigs)

    def counts(self):
        return {"rates_mrps": self.summary["rates_mrps"], "reconfigs": len(self.reconfigs)}


class RaftRun(Tables):
    """A Raft run's results (``nanopu raft``). ``summary``: ``nanopu raft --json`` (dict:
    answered requests, throughput, write and read latency, leaders, faults, violations,
    ``problems``); ``problems``: why the run's figures do not stand (empty when they do);
    ``results``: the figures as one row (``--out``'s columns; ``results_csv`` is its bytes);
    ``requests``: every request (op, key, due time, latency, sends, the replica that
    answered and its log index; ``--records``); ``timeline``: each leader's election (time
    in us, term, node; ``--timeline``); ``text``: what ``nanopu raft`` prints.
    ``save(directory, format=None)`` writes the tables as Parquet or CSV."""

    TABLES = ("results", "requests", "timeline")
    FIGURES = ("replicas", "offered_mrps", "requests", "answered", "throughput_mrps", "write.median_ns",
               "read.median_ns")

    def complete(self):
        return not self.problems

    def __init__(self, summary, row, records, timeline, text):
        self.summary = json.loads(summary)
        self.problems = self.summary["problems"]
        self.results_csv, self.records_csv, self.timeline_csv, self.text = row, records, timeline, text
        self.results = _csv(row)
        self.requests = _csv(records)
        self.timeline = _csv(timeline)

    def counts(self):
        return {"problems": len(self.problems)}


class AppRun(Tables):
    """An application's run (``nanopu app``). ``summary``: the JSON document ``nanopu app``
    prints (dict: the settings, ``ok``, the latencies, ``nic``); ``ok``: every answer was
    the host's; ``totals``: the summary's single figures as one row (``latency_ns.median``,
    ...). ``save(directory, format=None)`` writes the table as Parquet or CSV."""

    TABLES = ("totals",)
    FIGURES = ("app", "nic", "ok", "latency_ns.median")

    def __init__(self, summary):
        self.summary = summary
        self.ok = summary["ok"]
        self.totals = _totals(summary)


class BenchRun(Tables):
    """A benchmark's run (``nanopu bench``). ``summary``: the JSON document ``nanopu bench``
    prints (dict); ``totals``: its single figures as one row (nested ones as ``a.b``:
    ``rx.mpps``); and each of its lists of rows as a DataFrame of that name: ``sizes``
    (the latency benchmarks: one row per payload size), ``rows`` (``rx``, the eRPC
    benchmarks), ``loopback`` and ``stream`` (``nic-throughput``: request rates per payload
    size); ``TABLES`` names those the benchmark has. ``save(directory, format=None)``
    writes them as Parquet or CSV."""

    FIGURES = ("benchmark", "app", "nic", "requests", "payload_bytes")

    def __init__(self, summary):
        self.summary = summary
        self.totals = _totals(summary)
        lists = [k for k, v in summary.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
        for name in lists:
            setattr(self, name, pd.DataFrame(summary[name]))
        self.TABLES = ("totals", *lists)


def _requests(records):
    """Every request of a sweep's records (``--records``), with ``latency_ns``: NaN for
    one without a reply."""
    df = _csv(records, keep_default_na=False, na_values={"replied_ns": [""]}, dtype={"class": str})
    df = df.astype({c: "int64" for c in df.columns if c in ("request", "context", "service_cycles", "node")})
    df["latency_ns"] = df["replied_ns"] - df["sent_ns"]
    return df


def _check_row(point):
    """One offered load's end and check as one flat row."""
    check = point.get("check") or {}
    return {**{k: v for k, v in point.items() if k != "check"}, **check}


# Last: the sweeps' module builds on everything above.
from . import sweep  # noqa: E402
