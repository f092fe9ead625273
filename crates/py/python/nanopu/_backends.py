"""Where a sweep's runs go (docs/python.md, "Backends"): a local pool of processes (the
default), of threads, or Ray core tasks. Each backend takes (index, task) pairs and yields
(index, outcome) as runs finish, in any order; the sweep puts them back in its own order.

A task is (kind, prepared configuration, host threads per run); an outcome is (True, the
simulator's raw outputs) or (False, the error's message). Workers return errors as values,
so that every backend reports them the same way, with the simulator's own message.
"""

import concurrent.futures as cf
import multiprocessing
import os

from . import _kinds
from ._native import NanopuError

BACKENDS = ("process", "thread", "ray")


def work(kind, config, threads):
    """One run, in whichever process or thread the backend chose."""
    try:
        return True, _kinds.execute(kind, config, threads)
    except NanopuError as e:
        return False, str(e)
    except Exception as e:  # a bad flag name reaches Python as TypeError etc.: report, never hide
        return False, f"{type(e).__name__}: {e}"


def host_cpus():
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def results(backend, workers, address, tasks):
    """Run ``tasks`` on ``backend``; yield (index, outcome) as each run ends."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if address is not None and backend != "ray":
        raise ValueError(f"address= is a Ray cluster's address: it needs backend='ray', not {backend!r}")
    if not tasks:
        return iter(())
    if backend == "ray":
        return _ray(workers, address, tasks)
    return _pool(backend, workers or min(host_cpus(), len(tasks)), tasks)


def _pool(backend, workers, tasks):
    if backend == "process":
        ex = cf.ProcessPoolExecutor(workers, mp_context=_start_method())
    else:
        ex = cf.ThreadPoolExecutor(workers)
    try:
        futures = {ex.submit(work, *task): i for i, task in tasks}
        for f in cf.as_completed(futures):
            yield futures[f], f.result()
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _start_method():
    """Never a plain fork: forking a process that runs threads (Jupyter's, Ray's, a
    previous run's) can copy a lock one of them holds. Where it exists, a fork server that
    has imported nanopu once (a single thread) forks the workers, so that a pool starts in
    milliseconds after the session's first; elsewhere each worker starts afresh ("spawn")."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["nanopu"])
    return ctx


def _ray(workers, address, tasks):
    ray = _import_ray()
    if not ray.is_initialized():
        # A local instance of `workers` CPUs, or the cluster at `address`.
        ray.init(address=address, num_cpus=workers if address is None else None)
    remote = ray.remote(num_cpus=1)(work)
    pending = {remote.remote(*task): i for i, task in tasks}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            yield pending.pop(done[0]), ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref)


def _import_ray():
    try:
        import ray
    except ImportError as e:
        raise ImportError("backend='ray' needs Ray: `pip install ray` (scripts/setup-python installs it)") from e
    return ray
