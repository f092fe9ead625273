"""Scapy in the loop, as the prototype's authors tested their programs: the test host sends
Scapy packets into a node at given times and gets its replies back as Scapy packets."""

import pytest

import nanopu

layers = pytest.importorskip("nanopu.layers")


def test_a_program_answers_scapy_packets_with_scapy_packets(apps):
    # loopback.elf echoes every message to its sender.
    pkt = layers.data_packet(dst_context=0, words=[0xDEAD_BEEF, 0x8000_0000_0000_0002], src_context=7)
    r = nanopu.run(apps / "loopback.elf", packets=[(1000, pkt), (3000, pkt)], max_cycles=100_000)
    replies = r.packets()
    assert len(replies) == 2 and r.rejected.empty
    t = replies[0][layers.NanopuTransport]
    assert (t.dst_context, t.src_context, t.msg_len) == (7, 0, 16)
    assert layers.payload_words(replies[0]) == [0xDEAD_BEEF, 0x8000_0000_0000_0002]
    assert replies[0]["IP"].src == "10.0.0.2" and replies[0]["IP"].dst == "10.0.0.1"
    assert 1e-6 < replies[0].time < replies[1].time < 4e-6, "replies carry their simulated times"


def test_a_frame_the_nic_cannot_take_is_listed_with_its_reason(apps):
    bad = bytearray(bytes(layers.data_packet(0, [1, 2])))
    bad[14 + 10] ^= 0xFF  # the IPv4 header checksum
    r = nanopu.run(apps / "loopback.elf", packets=[(1000, bytes(bad))], max_cycles=50_000)
    assert r.received.empty
    assert len(r.rejected) == 1 and "checksum" in r.rejected["reason"][0]


def test_a_negative_time_is_an_error_naming_the_packet(apps):
    with pytest.raises(nanopu.NanopuError, match=r"packets\[0\]"):
        nanopu.run(apps / "loopback.elf", packets=[(-5, layers.data_packet(0, [1]))])
