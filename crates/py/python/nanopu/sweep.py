"""Sweeps: many runs of the simulator, a grid or list of configurations times seeds, fanned
out to a local process pool or to Ray and gathered into one pandas DataFrame, with a cache
on disk so that a rerun is free (docs/python.md, "Sweeps"). Python only fans runs out and
gathers what the simulator returns; every run is the same call as ``nanopu.sort``,
``nanopu.run_cluster``, ``nanopu.run``, ``nanopu.load``, ``nanopu.chain``, ``nanopu.raft``,
``nanopu.app`` or ``nanopu.bench``.

>>> from nanopu import sweep
>>> s = sweep.run("sort", sweep.grid({"cores": 64}, keys_per_core=[16, 32]), seeds=[1, 2])
>>> s.frame[["keys_per_core", "seed", "figures.total_ns"]]
"""

import copy
import itertools
import json
import sys
import time

import pandas as pd

from . import _backends, _cache, _flat, _kinds

__all__ = ["run", "grid", "Sweep", "SweepError", "cluster_config", "load_config", "chain_config", "raft_config",
           "clear_cache", "cache_directory"]

cluster_config = _kinds.cluster_dict
load_config = _kinds.load_dict
chain_config = _kinds.chain_dict
raft_config = _kinds.raft_dict
clear_cache = _cache.clear
cache_directory = _cache.directory


def grid(base=None, axes=None, **more):
    """Every combination of the axes' values, each a copy of ``base`` (a dict) with the
    values set. Axes are keyword arguments (``cores=[16, 64]``) or a dict whose keys name
    nested keys with dots (``{"link.rate_gbps": [100, 200], "program.0.args": [...]}``);
    the last axis varies fastest."""
    axes = {**(axes or {}), **more}
    for name, values in axes.items():
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
            raise ValueError(f"grid axis {name!r}: give a list of values, not {values!r}")
    out = []
    for combo in itertools.product(*(list(v) for v in axes.values())):
        config = copy.deepcopy(base or {})
        for name, value in zip(axes, combo):
            _set(config, name.split("."), value)
        out.append(config)
    return out


def _set(node, path, value):
    for part in path[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if isinstance(node, list):
        node[int(path[-1])] = value
    else:
        node[path[-1]] = value


def run(kind, configs, seeds=None, *, backend="process", workers=None, address=None, threads=1,
        cache=True, cache_dir=None, progress=True, on_error="raise"):
    """Run every configuration with every seed and gather the results (a ``Sweep``).

    ``kind``: ``"sort"`` (a config is ``nanopu.sort``'s flags as a dict), ``"cluster"`` (a
    cluster configuration's keys as a dict, or a file's path), ``"program"`` (``nanopu.run``'s
    arguments as a dict: ``program``, ``sends``, ``args`` and flags; no seed), ``"load"`` (a
    load configuration's keys as a dict, or a file's path: every offered load of its
    ``load.rates_mrps``), ``"chain"`` and ``"raft"`` (a chain or Raft configuration's keys
    as a dict, or a file's path), ``"app"`` (``nanopu.app``'s arguments as a dict:
    ``name`` and flags, ``nic`` among them) or ``"bench"`` (``nanopu.bench``'s: ``name`` and
    flags; no seed). ``seeds``: each configuration runs once per seed (set as its ``seed``,
    a load's and a chain's as its ``load.seed``); None runs each once as it is.
    ``backend``: ``"process"`` (a local pool of ``workers`` processes, default one per host
    CPU), ``"thread"``, or ``"ray"`` (Ray core tasks on the cluster at ``address``, or on a
    local instance of ``workers`` CPUs). ``threads``: host threads per run (results do not
    depend on it). ``cache``/``cache_dir``: reuse and keep finished runs (``cache_directory()``).
    ``progress``: True prints progress on stderr, a callable gets (done, total, cached, failed).
    ``on_error``: ``"raise"`` raises ``SweepError`` once every run has ended, naming each
    failed run's configuration and the simulator's message; ``"record"`` keeps them in the
    frame's ``error`` column."""
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', not {on_error!r}")
    configs = [configs] if isinstance(configs, (dict, str)) or hasattr(configs, "__fspath__") else list(configs)
    seeds = None if seeds is None else list(seeds)
    points = [(c, s) for c in configs for s in ([None] if seeds is None else seeds)]
    prepared = [_kinds.prepare(kind, c, s) for c, s in points]
    state = _State(kind, points, prepared, _params(configs, seeds), cache_dir if cache else False)
    report = _Progress(progress, state)
    todo = [(i, (kind, prepared[i][0], threads)) for i in state.missing()]
    for i, (ok, out) in _backends.results(backend, workers, address, todo):
        state.finish(i, ok, out)
        report.update(i)
    report.close()
    sweep = Sweep(state)
    if on_error == "raise" and sweep.failures:
        raise SweepError(sweep)
    return sweep


class _State:
    """A sweep's runs as they end: raw outputs, errors, and which came from the cache
    (``cache_dir`` False: no cache)."""

    def __init__(self, kind, points, prepared, params, cache_dir):
        n = len(points)
        self.kind, self.points, self.prepared, self.params = kind, points, prepared, params
        self.cache_dir = cache_dir
        self.errors = [None] * n
        self.keys = [_cache.key(kind, _unseeded(cfg, s), bins, s) for (cfg, bins), (_, s) in zip(prepared, points)]
        self.raw = [None if cache_dir is False else _cache.load(cache_dir, k) for k in self.keys]
        self.cached = [r is not None for r in self.raw]

    def missing(self):
        return [i for i, r in enumerate(self.raw) if r is None]

    def finish(self, i, ok, out):
        if not ok:
            self.errors[i] = out
            return
        self.raw[i] = out
        if self.cache_dir is not False:
            _cache.store(self.cache_dir, self.keys[i], out)

    def describe(self, i):
        """Run i's swept parameters and seed, or its whole configuration if nothing varies."""
        config, seed = self.points[i]
        shown = self.params[i] or {"config": _cache.canonical(config)[:300]}
        text = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"run {i} ({text}, seed={seed!r})" if seed is not None else f"run {i} ({text})"


def _unseeded(config, seed):
    """The configuration without the sweep's seed, which the key holds on its own."""
    return config if seed is None else {k: v for k, v in config.items() if k != "seed"}


def _params(configs, seeds):
    """Each point's swept parameters: the (dotted) keys whose values differ between the
    configurations, repeated for each seed."""
    flat = [dict(_leaves(c)) if isinstance(c, dict) else {"config": str(c)} for c in configs]
    names = list(dict.fromkeys(k for f in flat for k in f))
    swept = [k for k in names if len({_cache.canonical(f.get(k)) for f in flat}) > 1]
    per_config = [{k: f.get(k) for k in swept} for f in flat]
    return [p for p in per_config for _ in ([None] if seeds is None else seeds)]


def _leaves(d, prefix=""):
    """A configuration's values by dotted key, lists of tables by index (``program.0.elf``)."""
    items = d.items() if isinstance(d, dict) else enumerate(d)
    for k, v in items:
        if isinstance(v, dict) or (isinstance(v, list) and v and all(isinstance(x, dict) for x in v)):
            yield from _leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


class Sweep:
    """A finished sweep. ``frame``: one row per run (configuration x seed, in that order):
    the swept parameters, ``seed``, ``cached`` (the run came from the cache), ``error``
    (object: the simulator's message, or None, for every kind of run) and the run's summary figures (its ``totals``).
    ``run(i)``: run i's object (``SortRun``, ``ClusterRun``, ``ProgramRun``, ``LoadRun``,
    ``ChainRun``, ``RaftRun``, ``AppRun``, ``BenchRun``; None if it failed); ``runs``: all of them; ``concat(name)``: one of their DataFrames (``"stages"``,
    ``"messages"``, ...) for every run, with the parameters and seed in front;
    ``failures``: each failed run's index, parameters, seed and message."""

    def __init__(self, state):
        self.kind = state.kind
        self._state = state
        self.failures = [
            {"index": i, "params": state.params[i], "seed": state.points[i][1], "error": e, "run": state.describe(i)}
            for i, e in enumerate(state.errors)
            if e is not None
        ]
        self.frame = pd.DataFrame([self._row(i) for i in range(len(state.points))])
        # One type whatever the runs gave: pandas would make a column of None alone object,
        # and one with a message str with NaN for the rest.
        self.frame["error"] = pd.Series(state.errors, index=self.frame.index, dtype=object)

    def _row(self, i):
        st = self._state
        config, seed = st.prepared[i][0], st.points[i][1]
        figures = dict(_flat(_summary(st.raw[i]))) if st.raw[i] is not None else {}
        row = {**st.params[i], "seed": seed if seed is not None else config.get("seed", figures.get("seed"))}
        row.update(cached=st.cached[i], error=st.errors[i])
        row.update((k, v) for k, v in figures.items() if k not in row)
        return row

    def __len__(self):
        return len(self.frame)

    def run(self, i):
        raw = self._state.raw[i]
        return None if raw is None else _kinds.wrap(self.kind, raw)

    @property
    def runs(self):
        return [self.run(i) for i in range(len(self))]

    def concat(self, name):
        """DataFrame ``name`` of every run, the run's parameters and seed in front (a column
        of the run's named like a parameter becomes ``name.column``)."""
        swept = self._state.params[0] if self._state.params else {}
        keys = [c for c in self.frame.columns if c in swept or c == "seed"]
        parts = [self._keyed(i, getattr(r, name), keys, name) for i, r in enumerate(self.runs) if r is not None]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=keys)

    def _keyed(self, i, df, keys, name):
        df = df.reset_index() if df.index.name else df.reset_index(drop=True)
        df = df.rename(columns={c: f"{name}.{c}" for c in df.columns if c in keys})
        front = self.frame.loc[[i] * len(df), keys].reset_index(drop=True)
        return pd.concat([front, df], axis=1)


def _summary(raw):
    return json.loads(raw[0])


class SweepError(Exception):
    """Runs of a sweep failed: ``failures`` names each (index, parameters, seed, the
    simulator's message); ``sweep`` has the others' results."""

    def __init__(self, sweep):
        self.sweep, self.failures = sweep, sweep.failures
        lines = [f"  {f['run']}: {f['error']}" for f in self.failures]
        super().__init__(f"{len(self.failures)} of {len(sweep)} runs failed:\n" + "\n".join(lines))


class _Progress:
    """Progress on stderr (at most twice a second, and at the end; a failure at once), or
    through the caller's function."""

    def __init__(self, progress, state):
        self.progress, self.state = progress, state
        self.total, self.done = len(state.points), sum(state.cached)
        self.started = self.shown = time.monotonic()
        self.shown_done = None

    def update(self, i):
        self.done += 1
        failed = sum(e is not None for e in self.state.errors)
        if callable(self.progress):
            self.progress(self.done, self.total, sum(self.state.cached), failed)
        elif self.progress and self.state.errors[i] is not None:
            print(f"sweep: {self.state.describe(i)} failed: {self.state.errors[i]}", file=sys.stderr)
        elif self.progress and time.monotonic() - self.shown >= 0.5:
            self._line()

    def close(self):
        if self.progress is True and self.shown_done != self.done:
            self._line()

    def _line(self):
        self.shown, self.shown_done = time.monotonic(), self.done
        cached, failed = sum(self.state.cached), sum(e is not None for e in self.state.errors)
        elapsed = self.shown - self.started
        print(f"sweep: {self.done}/{self.total} runs ({cached} from the cache, {failed} failed), {elapsed:.1f} s", file=sys.stderr)
