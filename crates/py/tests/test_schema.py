"""Every configuration file in the repository is valid under the JSON Schema generated
from the types that parse it (docs/config.md), and the schema refuses what the parser does."""

import pathlib

import jsonschema
import pytest

import nanopu

tomllib = pytest.importorskip("tomllib", reason="tomllib is in Python 3.11 and later")

ROOT = pathlib.Path(__file__).resolve().parents[3]
SKIP = {"Cargo.toml", "pyproject.toml", "rustfmt.toml"}


def configs():
    """Every nanopu configuration file in the repository (the build's own TOML aside)."""
    files = [p for p in ROOT.rglob("*.toml") if p.name not in SKIP and "target" not in p.parts]
    return sorted(p for p in files if ".git" not in p.parts)


def kind_of(doc):
    if "server" in doc:
        return "load"
    if "chain" in doc:
        return "chain"
    return "raft" if "raft" in doc else "cluster"


def test_the_repository_has_configs_of_every_kind():
    kinds = {kind_of(tomllib.loads(p.read_text())) for p in configs()}
    assert kinds == {"cluster", "load", "raft", "chain"}


@pytest.mark.parametrize("path", configs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_config_in_the_repository_is_valid(path):
    doc = tomllib.loads(path.read_text())
    jsonschema.validate(doc, nanopu.schema(kind_of(doc)))


def test_an_unknown_key_or_a_wrong_type_is_refused():
    schema = nanopu.schema("cluster")
    good = {"topology": {"kind": "star", "nodes": 2}, "program": [{"nodes": "all", "elf": "x.elf"}]}
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError, match="nodez"):
        jsonschema.validate({**good, "topology": {"kind": "star", "nodez": 2}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "max_us": "soon"}, schema)


def test_an_unknown_kind_is_an_error_naming_it():
    with pytest.raises(nanopu.NanopuError, match="clusters"):
        nanopu.schema("clusters")
