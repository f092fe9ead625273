"""Long runs: the GIL is released while a run goes on, and Ctrl-C stops it (docs/python.md)."""

import os
import signal
import threading
import time

import pytest

import nanopu


def test_ctrl_c_stops_a_run_and_the_next_runs(apps):
    # A timer thread sends SIGINT: it can only run if the simulation released the GIL.
    # The interrupt comes after 0.5 s; the 16,384-core sort would take some 20 s, so
    # that a timer made late by a loaded machine still finds it running (a 4,096-core one,
    # a few seconds, once ended first in CI while another simulation held both cores).
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        nanopu.sort(cores=16384, keys_per_core=16, apps=apps)
    assert time.monotonic() - started < 20
    # The stop request was withdrawn: the next run goes to its end.
    s = nanopu.sort(cores=16, keys_per_core=16, apps=apps)
    assert s.summary["complete"] and s.valid
