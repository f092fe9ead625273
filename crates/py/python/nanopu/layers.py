"""Scapy layers for the nanoPU's headers (docs/python.md, "Scapy layers").

- ``NanopuTransport``: the 30-byte transport header that follows IPv4 in every packet of
  the NDP-style (IP protocol 0x99) and Homa-style (0x98) transports, big-endian, as
  crates/net/src/wire/transport.rs lays it out and nanopu's captures carry it. DATA
  packets carry one payload segment after it; trimmed (CHOP) and control packets carry 8
  bytes of zero padding, shown as Scapy's ``Padding``.
- ``NanopuApp``: the application header, the first word of every message as a program
  reads it from netRX or writes it to netTX (docs/platform.md section 2): IPv4 address
  (bits 63..32; the source on receive, the destination on send), context id (31..16) and
  payload length in bytes (15..0). The NIC turns it into the IP and transport headers, so
  it is not on the wire; it describes messages, such as the words of ``nanopu.send``.

Importing this module binds ``NanopuTransport`` to both IP protocol numbers.
"""

import io

from scapy.fields import BitField, ByteField, FlagsField, IntField, IPField, ShortField
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, bind_layers
from scapy.utils import PcapReader

from ._native import NanopuError

# IP protocol numbers (crates/net/src/wire/ipv4.rs): the prototype's NDP, and its
# neighbour for the Homa-style transport.
PROTO_NDP = 0x99
PROTO_HOMA = 0x98

# The flags byte, bit 0 first (crates/net/src/wire/transport.rs): five kinds, CHOP (the
# packet was trimmed to its header by a switch), MCAST (addressed to a group range) and
# RESEND (a modifier of a kind bit, Homa's RESEND request).
FLAG_NAMES = ["DATA", "ACK", "NACK", "PULL", "GRANT", "CHOP", "MCAST", "RESEND"]

# Bytes of zero padding after the header of trimmed and control packets (72-byte frames).
PADDING_BYTES = 8

# Payload bytes per packet (crates/net/src/wire/packet.rs, SEGMENT_BYTES): a single-packet
# message carries at most this many.
SEGMENT_BYTES = 1024


class NanopuTransport(Packet):
    """The nanoPU transport header (30 bytes)."""

    name = "nanoPU transport"
    fields_desc = [
        FlagsField("flags", 0, 8, FLAG_NAMES),
        ByteField("priority", 0),  # Homa: granted priority 0..7; NDP: 0
        ShortField("src_context", 0),
        ShortField("dst_context", 0),
        ShortField("msg_id", 0),  # with (source IP, src_context) names a message
        ShortField("msg_len", 0),  # message payload bytes
        ShortField("pkt_offset", 0),  # index of this packet in its message
        ShortField("credit", 0),  # PULL: packets allowed in total; GRANT: offset; DATA: transmission
        IntField("mcast_first", 0),  # multicast: first node of the group range
        IntField("mcast_count", 0),  # multicast: nodes in the range; 0 = unicast
        IntField("mcast_seq", 0),  # multicast: per-source sequence number
        IntField("reserved", 0),
    ]

    def carries_data(self):
        """A DATA packet that was not trimmed: its payload is a segment of the message."""
        return self.flags.DATA and not self.flags.CHOP

    def extract_padding(self, s):
        if self.carries_data():
            return s, b""
        return b"", s

    def mysummary(self):
        return self.sprintf("nanoPU %flags% ctx %src_context%->%dst_context% msg %msg_id% pkt %pkt_offset%")


class NanopuApp(Packet):
    """The application header word (8 bytes, big-endian as on the wire)."""

    name = "nanoPU application header"
    fields_desc = [
        IPField("ip", "0.0.0.0"),
        BitField("context", 0, 16),
        BitField("length", 0, 16),  # payload bytes, header excluded
    ]

    @classmethod
    def of_word(cls, word):
        """The header of a message's first word, as a program sees it (an integer)."""
        return cls(int(word).to_bytes(8, "big"))

    def word(self):
        return int.from_bytes(bytes(self), "big")


def payload_words(pkt):
    """A DATA packet's segment as 64-bit words (big-endian on the wire; the NIC converts)."""
    data = bytes(pkt[NanopuTransport].payload)
    return [int.from_bytes(data[i : i + 8], "big") for i in range(0, len(data), 8)]


def data_packet(dst_context, words, *, src_context=0, length=None, src="10.0.0.1", dst="10.0.0.2"):
    """A single-packet nanoPU DATA message from the test host (10.0.0.1) to node 0
    (10.0.0.2; ``dst="10.0.0.3"`` for node 1 of a cluster) as Scapy builds it: Ether / IP /
    ``NanopuTransport`` / payload, the payload ``words`` (unsigned 64-bit) big-endian,
    ``length`` bytes of them (all by default; 1 to 1,024, one segment: a longer payload
    raises ``NanopuError``). Send it with ``nanopu.run(..., packets=[(at_ns, pkt)])`` or
    ``nanopu.run_cluster``."""
    if isinstance(words, (str, bytes)):
        raise NanopuError(f"words: a list of integers, not the string {words!r}")
    data = b"".join(int(w).to_bytes(8, "big") for w in words)
    name, length = ("words", len(data)) if length is None else ("length", int(length))
    if not 1 <= length <= SEGMENT_BYTES:
        raise NanopuError(f"{name}: {length} bytes; a single-packet message carries 1 to {SEGMENT_BYTES} bytes "
                          f"(one segment, the NIC's segment size)")
    if length > len(data):
        raise NanopuError(f"length: {length} bytes, more than the {len(data)} bytes of words")
    t = NanopuTransport(flags="DATA", src_context=src_context, dst_context=dst_context, msg_len=length)
    return Ether(src=_mac(src), dst=_mac(dst)) / IP(src=src, dst=dst, proto=PROTO_NDP) / t / Raw(data[:length])


def _mac(ip):
    """A node's MAC: 02:00 and its IPv4 address (crates/cluster/src/net/capture.rs)."""
    return "02:00:" + ":".join(f"{int(b):02x}" for b in ip.split("."))


def replies(received):
    """``ProgramRun.received`` rows as Scapy packets, ``time`` in simulated seconds."""
    from . import _native

    packets = []
    for r in received.itertuples():
        for frame in _native.message_frames(r.src_ip, r.src_context, r.dst_context, r.len, list(r.words)):
            p = Ether(bytes(frame))
            p.time = r.time_ns / 1e9
            packets.append(p)
    return packets


def read_pcap(data):
    """The packets of a capture (``ClusterRun.pcap`` bytes, or a file's path), decoded
    with these layers; each packet's ``time`` is the simulated time in seconds, to the ns."""
    source = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    with PcapReader(source) as reader:
        return list(reader)


bind_layers(IP, NanopuTransport, proto=PROTO_NDP)
bind_layers(IP, NanopuTransport, proto=PROTO_HOMA)
