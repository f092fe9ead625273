"""docs/python.md's table of calls says what the package takes: every documented call's
parameters are the function's, in order (a renamed or missing parameter fails here)."""

import inspect
import pathlib
import re

import nanopu

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"


def documented():
    """Each `nanopu.NAME(PARAMS)` that opens a row of the table."""
    return re.findall(r"^\| `nanopu\.(\w+)\((.*?)\)` \|", DOC.read_text(), re.M)


def test_documented_signatures_are_the_packages():
    calls = documented()
    assert len(calls) >= 10, calls
    for name, params in calls:
        written = [p.split("=")[0].strip().lstrip("*") for p in params.split(",") if p.strip()]
        sig = inspect.signature(getattr(nanopu, name))
        assert written == list(sig.parameters), f"docs/python.md: nanopu.{name}({params}); the package: {sig}"
