"""`nanopu.run`: one node, the test host on its port (docs/python.md)."""

import pandas.testing as pdt
import pytest

import nanopu


def stream(apps, **flags):
    """stream.elf returns every word plus one (sw/apps/stream.c)."""
    sends = [nanopu.send(2000, 0, [1, 2, 0xFF]), nanopu.send(3000.5, 0, [2**64 - 2])]
    return nanopu.run(apps / "stream.elf", sends=sends, **{"cores": 1, "until_us": 10, **flags})


def test_replies_come_back_with_their_times(apps):
    r = stream(apps)
    got = r.received
    assert list(got["words"]) == [[2, 3, 0x100], [2**64 - 1]]
    assert list(got["len"]) == [24, 8]
    assert (got["src_ip"] == "10.0.0.2").all()
    # Each reply arrives after its request was sent, in order.
    assert 2000 < got["time_ns"][0] < 3000.5 < got["time_ns"][1] < 10_000
    # The server waits for more: nothing is left to simulate before the deadline.
    assert r.totals["outcome"][0] == "quiescent" and bool(r.totals["complete"][0])
    assert r.totals["nic.messages_received"][0] == 2


def test_per_core_summary(apps):
    r = stream(apps)
    assert list(r.cores.index) == [0]
    core = r.cores.loc[0]
    assert core["instructions"] > 0 and core["cycles"] >= core["stall_netrx_cycles"] > 0


def test_flags_reach_the_node(apps):
    # Four cores instead of one; a MAC latency delays every reply by twice its value.
    assert len(stream(apps, cores=4).cores) == 4
    slow = stream(apps, mac_ns=100).received["time_ns"][0]
    assert slow == pytest.approx(stream(apps).received["time_ns"][0] + 200)


def test_same_run_same_frames(apps):
    a, b = stream(apps), stream(apps)
    pdt.assert_frame_equal(a.cores, b.cores)
    pdt.assert_frame_equal(a.received, b.received)


def test_errors_carry_the_simulators_message(apps, tmp_path):
    with pytest.raises(nanopu.NanopuError, match="bogus: not a keyword of nanopu.run"):
        nanopu.run(apps / "stream.elf", bogus=1)
    with pytest.raises(nanopu.NanopuError, match="cannot read"):
        nanopu.run(tmp_path / "missing.elf")
    with pytest.raises(nanopu.NanopuError, match="args: a list of values, not"):
        nanopu.run(apps / "stream.elf", args="4 1000")
    with pytest.raises(nanopu.NanopuError, match="jbsq-n: 0 is not within 1..="):
        nanopu.run(apps / "stream.elf", jbsq_n=0)
    with pytest.raises(nanopu.NanopuError, match="sched-timer-us: .* shorter than a context switch"):
        nanopu.run(apps / "stream.elf", sched_timer_us=1e-9)
    with pytest.raises(nanopu.NanopuError, match="--pcap does not apply to a single node"):
        nanopu.run(apps / "stream.elf", pcap=tmp_path / "x.pcap")
    with pytest.raises(nanopu.NanopuError, match="a single node is node 0"):
        nanopu.run(apps / "stream.elf", sends=[nanopu.send(0, 0, [1], node=3)])
