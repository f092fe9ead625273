"""`nanopu.sort`: validated sorts with per-stage figures (docs/python.md)."""

import pandas.testing as pdt
import pytest

import nanopu


def small(apps, **flags):
    return nanopu.sort(cores=16, keys_per_core=16, apps=apps, **flags)


def test_a_sort_is_validated_with_its_stages(apps):
    s = small(apps)
    assert s.valid and s.summary["records"] == 16 * 16
    assert list(s.stages["stage"]) == ["shuffle", "level 1", "fetch values"]
    assert (s.stages["cores"] == 16).all()
    # Every core logs every stage; no stage outlasts the sort.
    assert len(s.core_stages) == 16 * 3
    assert (s.core_stages["end_ns"] - s.core_stages["start_ns"]).max() <= s.total_ns
    assert s.totals["figures.total_ns"][0] == s.total_ns


def test_flags_reach_the_sort(apps):
    assert small(apps, algorithm="mergemin", incast=4).summary["algorithm"] == "mergemin"
    assert small(apps, seed=2).total_ns != small(apps, seed=1).total_ns


def test_same_seed_same_frames(apps):
    a, b = small(apps, seed=3), small(apps, seed=3)
    pdt.assert_frame_equal(a.stages, b.stages)
    pdt.assert_frame_equal(a.core_stages, b.core_stages)
    host = ["wall_seconds", "threads"]
    pdt.assert_frame_equal(a.totals.drop(columns=host), b.totals.drop(columns=host))


def test_bad_flags_are_errors(apps):
    with pytest.raises(nanopu.NanopuError, match="--buckets: 5 is not 4, 8 or 16"):
        small(apps, buckets=5)
    with pytest.raises(nanopu.NanopuError, match="keys_per_cor: not a keyword of nanopu.sort"):
        nanopu.sort(keys_per_cor=3, apps=apps)


def test_keywords_are_checked_by_their_flags_rules_naming_them(apps):
    """Each keyword's value goes through its flag's own check, and the error names it."""
    for flags, want in [
        ({"cores": 0}, r"cores: invalid value '0'"),
        ({"threads": 0}, r"threads: invalid value '0'"),
        ({"algorithm": "bogosort"}, r"algorithm: invalid value 'bogosort'"),
        ({"multicast": "no"}, r"multicast: invalid value 'no'"),
        ({"cores": [16, 64]}, r"cores: one value, not a list"),
        ({"json": "yes"}, r"json: true or false"),
    ]:
        with pytest.raises(nanopu.NanopuError, match=want):
            nanopu.sort(apps=apps, **flags)
