"""The Scapy layers (nanopu.layers) decode nanopu's captures as the run counted them, and
lay the headers out as crates/net/src/wire/transport.rs and docs/platform.md say."""

from collections import Counter

from scapy.layers.inet import IP
from scapy.packet import Padding, Raw

import nanopu
from nanopu.layers import PROTO_HOMA, PROTO_NDP, NanopuApp, NanopuTransport, payload_words


def kinds(packets):
    return Counter(int(p[NanopuTransport].flags) for p in packets)


DATA, ACK, NACK, PULL, GRANT, CHOP = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20


def test_an_ndp_incast_capture_agrees_with_the_counters(root):
    run = nanopu.run_cluster(root / "experiments" / "incast" / "ndp-trim.toml", pcap_at="node:0")
    packets = run.packets()
    t = run.summary["transport"]
    assert all(p.haslayer(NanopuTransport) and p[IP].proto == PROTO_NDP for p in packets)
    n = kinds(packets)
    trimmed = t["trimmed_received"]
    assert trimmed > 0 and n[DATA | CHOP] == trimmed
    assert n[NACK] == trimmed  # one per trimmed packet
    assert n[PULL] == t["pulls_sent"]
    assert n[DATA] == t["data_packets_sent"] - trimmed  # every whole DATA packet reaches node 0
    assert n[ACK] == n[DATA]  # one per whole DATA packet
    assert sum(n.values()) == len(packets) == n[DATA | CHOP] + n[NACK] + n[PULL] + n[DATA] + n[ACK]
    times = [float(p.time) for p in packets]
    assert times == sorted(times) and times[-1] * 1e9 <= run.summary["simulated_ns"]


def test_payloads_and_padding(root):
    run = nanopu.run_cluster(root / "experiments" / "incast" / "ndp-trim.toml", pcap_at="node:0")
    for p in run.packets():
        h = p[NanopuTransport]
        if h.carries_data():
            # One 1,024-byte message per packet: the whole message, as 128 words.
            assert h.msg_len == 1024 and len(h[Raw].load) == 1024 and len(payload_words(p)) == 128
        else:
            assert h[Padding].load == bytes(8) and not h.haslayer(Raw)


def test_a_homa_capture_has_its_grants(apps):
    # 8 senders of 2 KiB with 1 KiB unscheduled: every message's second packet is granted.
    config = {
        "transport": "homa",
        "transport_params": {"rtt_bytes": 1024},
        "topology": {"kind": "star", "nodes": 9},
        "node": {"cores": 1},
        "program": [{"nodes": "all", "elf": str(apps / "incast.elf"), "args": ["8", "2048"]}],
    }
    run = nanopu.run_cluster(config, pcap_at="node:0")
    packets = run.packets()
    t = run.summary["transport"]
    assert all(p[IP].proto == PROTO_HOMA for p in packets)
    n = kinds(packets)
    assert n[GRANT] == t["grants_sent"] == 8
    assert n[DATA] == t["data_packets_sent"] == 16
    assert n[ACK] == run.summary["messages_delivered"]  # Homa acknowledges whole messages
    granted = [p[NanopuTransport] for p in packets if int(p[NanopuTransport].flags) == GRANT]
    assert all(g.priority > 0 and g.credit > 0 for g in granted)


def test_transport_header_layout():
    h = NanopuTransport(
        flags="NACK+RESEND", priority=5, src_context=0x0102, dst_context=0x0304, msg_id=0x0506,
        msg_len=0x0708, pkt_offset=0x090A, credit=0x0B0C, mcast_first=0x0D0E0F10,
        mcast_count=0x11121314, mcast_seq=0x15161718,
    )
    b = bytes(h)
    assert len(b) == 30
    assert b[0] == NACK | 0x80 and b[1] == 5
    assert b[2:26] == bytes(range(1, 0x19))
    assert b[26:30] == bytes(4)
    for bit, name in enumerate(["DATA", "ACK", "NACK", "PULL", "GRANT", "CHOP", "MCAST", "RESEND"]):
        assert bytes(NanopuTransport(flags=name))[0] == 1 << bit


def test_application_header_word():
    # IPv4 address in bits 63..32, context 31..16, length 15..0 (docs/platform.md section 2).
    h = NanopuApp(ip="10.0.0.2", context=3, length=24)
    assert h.word() == (0x0A000002 << 32) | (3 << 16) | 24
    back = NanopuApp.of_word(h.word())
    assert (back.ip, back.context, back.length) == ("10.0.0.2", 3, 24)
