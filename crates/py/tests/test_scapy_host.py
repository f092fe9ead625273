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


def test_frames_to_another_mac_or_ip_are_dropped_and_listed(apps):
    other_mac = layers.data_packet(0, [1, 2])
    other_mac["Ether"].dst = "02:00:0a:00:00:63"
    other_ip = layers.data_packet(0, [1, 2])
    other_ip["IP"].dst = "192.168.1.1"  # at node 0's MAC; Scapy redoes the checksum
    r = nanopu.run(apps / "loopback.elf", packets=[(1000, other_mac), (2000, other_ip)], max_cycles=50_000)
    assert r.received.empty, "neither is answered"
    reasons = list(r.rejected["reason"])
    assert len(reasons) == 2, reasons
    assert "02:00:0a:00:00:63" in reasons[0] and "192.168.1.1" in reasons[1], reasons


def test_a_control_packet_is_named_by_its_kind(apps):
    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether
    from scapy.packet import Padding

    def control(flags):
        t = layers.NanopuTransport(flags=flags)  # msg_len 0, as Scapy builds it by default
        ip = IP(src="10.0.0.1", dst="10.0.0.2", proto=layers.PROTO_NDP)
        return Ether(src="02:00:0a:00:00:01", dst="02:00:0a:00:00:02") / ip / t / Padding(bytes(8))

    packets = [(1000, control("PULL")), (2000, control("ACK")), (3000, control("GRANT"))]
    r = nanopu.run(apps / "loopback.elf", packets=packets, max_cycles=50_000)
    reasons = list(r.rejected["reason"])
    assert [w.split(":")[0] for w in reasons] == ["PULL packet", "ACK packet", "GRANT packet"], reasons
    assert "NDP PULL" in reasons[0] and not any("msg_len" in w for w in reasons), reasons


def test_a_payload_over_one_segment_is_refused_naming_it():
    with pytest.raises(nanopu.NanopuError, match=r"words: 1600 bytes; .* 1 to 1024 .*segment"):
        layers.data_packet(0, words=range(200))
    with pytest.raises(nanopu.NanopuError, match=r"length: 24 bytes, more than the 16 bytes"):
        layers.data_packet(0, words=[1, 2], length=24)
    assert len(layers.data_packet(0, words=range(128))) == 64 + 1024  # one whole segment


def test_a_cluster_takes_packets_to_the_node_they_name(apps):
    config = {
        "max_us": 100.0,
        "topology": {"kind": "star", "nodes": 2},
        "node": {"cores": 1},
        "program": [{"nodes": "all", "elf": str(apps / "loopback.elf")}],
    }
    to_node1 = layers.data_packet(0, [0xAB, 7], src_context=3, dst="10.0.0.3")
    nowhere = layers.data_packet(0, [1], dst="10.0.0.99")
    r = nanopu.run_cluster(config, packets=[(1000, to_node1), (2000, nowhere)])
    got = r.received
    assert list(got["src_ip"]) == ["10.0.0.3"] and list(got["dst_context"]) == [3], got
    assert got["words"][0] == [0xAB, 7]
    assert len(r.rejected) == 1 and "02:00:0a:00:00:63" in r.rejected["reason"][0], r.rejected
