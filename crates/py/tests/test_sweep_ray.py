"""`nanopu.sweep` on Ray core tasks: a small sweep on a local Ray instance gives the
process pool's results (docs/python.md, "Backends"). Skipped, with the reason, only when
Ray is not installed (scripts/setup-python installs it)."""

import pandas.testing as pdt
import pytest

from nanopu import sweep

ray = pytest.importorskip("ray", reason="Ray is not installed: the Ray backend is untested here (pip install ray)")


@pytest.fixture(scope="module")
def local_ray():
    # The first sweep starts a local instance (about 8 s); both tests use it, then it stops.
    yield
    ray.shutdown()


def test_a_sweep_on_local_ray_matches_the_process_pool(apps, tmp_path, local_ray):
    configs = sweep.grid({"cores": 16, "keys_per_core": 16, "apps": str(apps)}, algorithm=["nanosort", "mergemin"])
    assert not ray.is_initialized()
    on_ray = sweep.run("sort", configs, seeds=[1, 2], backend="ray", workers=2, cache_dir=tmp_path, progress=False)
    assert ray.cluster_resources()["CPU"] == 2
    pooled = sweep.run("sort", configs, seeds=[1, 2], cache=False, progress=False)
    host = ["cached", "wall_seconds", "threads"]
    pdt.assert_frame_equal(on_ray.frame.drop(columns=host), pooled.frame.drop(columns=host))
    assert on_ray.frame["valid"].all() and list(on_ray.frame["algorithm"])[::2] == ["nanosort", "mergemin"]
    # Ray's results went into the cache like any other.
    again = sweep.run("sort", configs, seeds=[1, 2], backend="ray", cache_dir=tmp_path, progress=False)
    assert again.frame["cached"].all()


def test_ray_reports_a_failed_run(apps, tmp_path, local_ray):
    config = {"cores": 16, "keys_per_core": 16, "apps": str(apps), "algorithm": "bogosort"}
    with pytest.raises(sweep.SweepError, match="bogosort"):
        sweep.run("sort", [config], seeds=[1], backend="ray", cache_dir=tmp_path, progress=False)


def test_apps_and_chains_run_on_ray_as_on_threads(apps, root, tmp_path, local_ray):
    dots = sweep.grid({"name": "dotprod", "requests": 10, "sw_build": str(apps.parent)}, nic=["nanopu", "icenic"])
    chain = sweep.chain_config(root / "experiments" / "chain" / "crash-head.toml")
    chain["load"]["requests"] = 3000
    for kind, configs in [("app", dots), ("chain", [chain])]:
        on_ray = sweep.run(kind, configs, seeds=[1, 2], backend="ray", workers=2, cache_dir=tmp_path, progress=False)
        threads = sweep.run(kind, configs, seeds=[1, 2], backend="thread", cache=False, progress=False)
        pdt.assert_frame_equal(on_ray.frame.drop(columns="cached"), threads.frame.drop(columns="cached"))
        assert on_ray.frame["error"].isna().all() and not on_ray.frame["cached"].any()
