"""The kinds of run a sweep fans out (docs/python.md, "Sweeps"), each as what its
configuration is, where its seed goes, which program binaries it can load, and the
package's call that runs it. Paths are made absolute here, in the sweep's own process, so
that a worker anywhere (another process, a Ray worker) reads the same files.
"""

import copy
import os
import pathlib

from . import (_app_run, _bench_run, _chain_run, _cluster_run, _keywords, _load_run, _named, _native,
               _program_run, _raft_run, _raw_app, _raw_bench, _raw_chain, _raw_cluster, _raw_load, _raw_program,
               _raw_raft, _raw_sort, _sort_run)
from ._native import NanopuError

# `nanopu sort --apps`'s default (crates/cli/src/sort.rs), relative to the working directory.
SORT_APPS = "sw/build/apps"


def prepare(kind, config, seed):
    """The configuration a worker runs (seed set, paths absolute) and the program binaries
    the run can load."""
    if kind not in KINDS:
        names = [repr(k) for k in KINDS]
        raise ValueError(f"a sweep runs {', '.join(names[:-1])} or {names[-1]}, not {kind!r}")
    return KINDS[kind][0](config, seed)


def execute(kind, config, threads):
    """Run one prepared configuration; the simulator's raw outputs."""
    return KINDS[kind][1](config, threads)


def wrap(kind, raw):
    """The run object (``SortRun``, ``ClusterRun``, ``ProgramRun``, ``LoadRun``, ``ChainRun``,
    ``RaftRun``, ``AppRun``, ``BenchRun``) of raw outputs."""
    return KINDS[kind][2](raw)


def _seeded(config, seed):
    """The sweep's seed, if it gives one, replaces the configuration's."""
    return dict(config) if seed is None else {**config, "seed": seed}


def _prepare_sort(config, seed):
    flags = _seeded(config, seed)
    flags["apps"] = os.path.abspath(flags.get("apps", SORT_APPS))
    return flags, _sort_program(flags)


def _sort_program(flags):
    """The one program the sort loads, as the simulator picks it from the flags; none if
    it refuses them (the run then fails with the same message, reported as its error)."""
    try:
        return [_native.sort_program(_keywords(flags))]
    except NanopuError:
        return []


def _sort(flags, threads):
    return _raw_sort({"threads": threads, **flags}, False)


def _prepare_cluster(config, seed):
    if not isinstance(config, dict):
        config = cluster_dict(config)
    c = _seeded(copy.deepcopy(config), seed)
    programs = [p for p in c.get("program", []) if "elf" in p]
    for p in programs:
        p["elf"] = os.path.abspath(p["elf"])
    return c, [p["elf"] for p in programs]


def cluster_dict(path):
    """A cluster configuration file as a dict of its keys, its ELF paths (relative to the
    file's directory, as `nanopu run FILE` reads them) made absolute."""
    path = pathlib.Path(path)
    with open(path, "rb") as f:
        c = _toml().load(f)
    for p in c.get("program", []):
        if "elf" in p:
            p["elf"] = os.path.abspath(path.parent / p["elf"])
    return c


def _toml():
    try:
        import tomllib  # Python 3.11 and later
    except ModuleNotFoundError:
        import tomli as tomllib  # before 3.11: `pip install tomli`, or give the keys as a dict
    return tomllib


def _cluster(config, threads):
    return _raw_cluster(config, (), None, threads, False, ())


def _prepare_program(config, seed):
    if seed is not None:
        raise ValueError("a program's run on one node (`nanopu run PROGRAM.elf`) has no seed: give seeds=None")
    c = dict(config)
    if "program" not in c:
        raise ValueError(f"a program run's configuration needs 'program' (the ELF's path): {c!r}")
    c["program"] = os.path.abspath(c["program"])
    return c, [c["program"]]


def _program(config, threads):
    c = dict(config)
    return _raw_program(c.pop("program"), c.pop("sends", ()), c.pop("args", ()), False, c)


def _prepare_load(config, seed):
    c = load_dict(config) if not isinstance(config, dict) else copy.deepcopy(config)
    if seed is not None:
        c.setdefault("load", {})["seed"] = seed
    server = c.get("server", {})
    if "elf" in server:
        server["elf"] = os.path.abspath(server["elf"])
    return c, [server["elf"]] if "elf" in server else []


def load_dict(path):
    """A load configuration file as a dict of its keys, the server's ELF path (relative to
    the file's directory, as `nanopu load FILE` reads it) made absolute."""
    path = pathlib.Path(path)
    with open(path, "rb") as f:
        c = _toml().load(f)
    if "elf" in c.get("server", {}):
        c["server"]["elf"] = os.path.abspath(path.parent / c["server"]["elf"])
    return c


def _load(config, threads):
    return _raw_load(config, None, None, None, None, None, False, False)


def _prepare_chain(config, seed):
    c = _keys(config, lambda f: f.get("chain", {}))
    if seed is not None:
        c.setdefault("load", {})["seed"] = seed
    return c, _elf(c.get("chain", {}))


def _keys(config, section):
    """A chain or Raft configuration's keys (a file read, its ELF path made absolute) and
    the section holding its ``elf``."""
    if isinstance(config, dict):
        c = copy.deepcopy(config)
        _absolute(section(c), pathlib.Path("."))
        return c
    path = pathlib.Path(config)
    with open(path, "rb") as f:
        c = _toml().load(f)
    _absolute(section(c), path.parent)
    return c


def _absolute(section, base):
    if "elf" in section:
        section["elf"] = os.path.abspath(base / section["elf"])


def _elf(section):
    return [section["elf"]] if "elf" in section else []


def chain_dict(path):
    """A chain configuration file as a dict of its keys, ``chain.elf`` (relative to the
    file's directory, as `nanopu chain FILE` reads it) made absolute."""
    return _keys(pathlib.Path(path), lambda f: f.get("chain", {}))


def raft_dict(path):
    """A Raft configuration file as a dict of its keys, its ``elf`` made absolute."""
    return _keys(pathlib.Path(path), lambda f: f)


def _chain(config, threads):
    return _raw_chain(config, None, None, None, False)


def _prepare_raft(config, seed):
    c = _keys(config, lambda f: f)
    if seed is not None:
        c["seed"] = seed
    return c, _elf(c)


def _raft(config, threads):
    return _raw_raft(config, None, None, None, None, False)


# `nanopu app`'s and `nanopu bench`'s `--sw-build` default (crates/cli/src/app.rs).
SW_BUILD = "sw/build"


def _prepare_app(config, seed):
    c = _built(_seeded(config, seed))
    return c, _programs(_native.app_programs, c)


def _built(config):
    """An app's or benchmark's flags, ``name`` required and ``sw_build`` absolute (as the
    command's default: ``$NANOPU_SW_BUILD``, else ``sw/build``)."""
    if "name" not in config:
        raise ValueError(f"an app's or benchmark's configuration needs 'name' (as `nanopu app NAME`): {config!r}")
    c = dict(config)
    c["sw_build"] = os.path.abspath(c.get("sw_build") or os.environ.get("NANOPU_SW_BUILD") or SW_BUILD)
    return c


def _programs(listing, flags):
    """The programs the run loads, as the simulator picks them from the flags; none if it
    refuses them (the run then fails with the same message, reported as its error)."""
    try:
        return list(listing(*_named(flags)))
    except NanopuError:
        return []


def _app(config, threads):
    return _raw_app(config, False)


def _prepare_bench(config, seed):
    if seed is not None:
        raise ValueError("a benchmark (`nanopu bench`) has no seed: give seeds=None")
    c = _built(config)
    return c, _programs(_native.bench_programs, c)


def _bench(config, threads):
    # Only the network benchmark runs on several host threads (`--threads`).
    extra = {"threads": threads} if config["name"] == "network" and "threads" not in config else {}
    return _raw_bench({**config, **extra}, False)


KINDS = {
    "sort": (_prepare_sort, _sort, _sort_run),
    "cluster": (_prepare_cluster, _cluster, _cluster_run),
    "program": (_prepare_program, _program, _program_run),
    "load": (_prepare_load, _load, _load_run),
    "chain": (_prepare_chain, _chain, _chain_run),
    "raft": (_prepare_raft, _raft, _raft_run),
    "app": (_prepare_app, _app, _app_run),
    "bench": (_prepare_bench, _bench, _bench_run),
}
