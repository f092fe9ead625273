"""Paths the tests run on: the repository's C programs (built by `make sw`) and its
configurations."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
APPS = ROOT / "sw" / "build" / "apps"


@pytest.fixture
def apps():
    return APPS


@pytest.fixture
def root():
    return ROOT
