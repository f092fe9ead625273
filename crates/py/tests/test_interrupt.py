"""Long runs: the GIL is released while a run goes on, and Ctrl-C stops it (docs/python.md)."""

import os
import signal
import threading
import time

import pytest

import nanopu


def test_ctrl_c_stops_a_run_and_the_next_runs(apps):
    # A timer thread sends SIGINT: it can only run if the simulation released the GIL.
    # The 4,096-core sort takes several seconds; the interrupt comes after 0.5 s. Python
    # raises KeyboardInterrupt on SIGINT only if SIGINT was not ignored when it started (a
    # process started in the background by a non-interactive shell ignores it): install the
    # handler for this test, whatever the tests inherited.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        nanopu.sort(cores=4096, keys_per_core=16, apps=apps)
    signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 6
    # The stop request was withdrawn: the next run goes to its end.
    s = nanopu.sort(cores=16, keys_per_core=16, apps=apps)
    assert s.summary["complete"] and s.valid


def test_ctrl_c_stops_an_app(apps):
    # 800 senders of 300 bodies each at the N-body root: more than 40 s to simulate
    # (measured); the interrupt comes after 0.5 s, as above.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        nanopu.app("nbody-root", per_sender=300, sw_build=apps.parent)
    signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 6
    assert nanopu.app("nbody-root", senders=4, per_sender=2, sw_build=apps.parent).ok
