//! Transport parameters. Every constant: unit, default, provenance.

use nanopu_sim::Time;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    Ndp,
    Homa,
}

/// Parameters of the NIC transport.
#[derive(Clone, Debug, PartialEq)]
pub struct TransportParams {
    pub protocol: Protocol,
    /// Payload bytes per packet. Default 1,024 (`docs/platform.md` section 3).
    pub segment_bytes: u32,
    /// Largest message in packets. Default 64 (`docs/platform.md` section 3 asks for at least 38; the 16-bit length
    /// field caps messages at 65,535 bytes, i.e. 64 packets).
    pub max_msg_packets: u32,
    /// NDP: packets sent before the first PULL. Default 2 (prototype, `docs/platform.md` section 3).
    pub rtt_pkts: u32,
    /// NDP: interval between PULLs sent by one receiver: one MTU time, (1024 + 64) bytes at
    /// 200 Gb/s = 43.52 ns (`docs/platform.md` section 3: one PULL per MTU serialization time).
    pub pull_interval: Time,
    /// Time one byte takes on the node's link: 40 ps at the prototype's 200 Gb/s
    /// (`docs/models/network.md`). The NDP sender uses it to know when a packet it queued
    /// leaves the NIC: its timeout counts from then (same page, "NDP's rules").
    pub byte_time: Time,
    /// Homa: bytes a sender may send unscheduled and the receiver keeps granted ahead.
    /// Default 8 KiB (*estimate*: about one round trip of a leaf-spine at 200 Gb/s).
    pub rtt_bytes: u32,
    /// Homa: messages granted at once. Default 3 (prototype, `docs/platform.md` section 3).
    pub overcommit: u32,
    /// Homa: bands used, 0 = control, 1 = unscheduled, 2.. scheduled by rank. Default 8.
    pub homa_bands: u8,
    /// Sender: resend what is unacknowledged after this long without progress.
    /// Default 20 us (*estimate*: many round trips of a 2-tier fabric). The prototype set
    /// its timeout per run, to 32 link latencies (`docs/models/network.md`, "NDP's rules").
    pub rto: Time,
    /// NDP sender: with nothing in flight, waiting for PULLs, resend one packet after this
    /// long without a word from the receiver about the message (a receiver that delivered the
    /// message, its last ACKs lost, pulls no more). Default 200 us (*estimate*: ten `rto`,
    /// far beyond the longest PULL backlog measured, 22 us for 511 senders;
    /// `docs/models/network.md`, "NDP's rules").
    pub pull_wait: Time,
    /// Fraction of messages held back by `tail_delay` at the sender (fault injection).
    /// Default 0.
    pub tail_fraction: f64,
    /// Extra delay for those messages. Default 0.
    pub tail_delay: Time,
    /// Multicast supported by the switches; if not, the NIC unicasts to each member.
    pub multicast: bool,
}

impl Default for TransportParams {
    fn default() -> Self {
        TransportParams {
            protocol: Protocol::Ndp,
            segment_bytes: 1024,
            max_msg_packets: 64,
            rtt_pkts: 2,
            pull_interval: Time::from_ps(43_520),
            byte_time: Time::from_ps(40),
            rtt_bytes: 8 * 1024,
            overcommit: 3,
            homa_bands: 8,
            rto: Time::from_us(20),
            pull_wait: Time::from_us(200),
            tail_fraction: 0.0,
            tail_delay: Time::ZERO,
            multicast: true,
        }
    }
}

impl TransportParams {
    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, f: &str, why: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("transport.{f}: {why}"))
            }
        };
        check(
            (8..=9000).contains(&self.segment_bytes) && self.segment_bytes.is_multiple_of(8),
            "segment_bytes",
            "must be a multiple of 8 in 8..=9000",
        )?;
        check(self.max_msg_packets >= 1, "max_msg_packets", "must be at least 1")?;
        check(self.rtt_pkts >= 1, "rtt_pkts", "must be at least 1")?;
        check(self.overcommit >= 1, "overcommit", "must be at least 1")?;
        check((3..=8).contains(&self.homa_bands), "homa_bands", "must be 3..=8")?;
        check(self.rtt_bytes >= self.segment_bytes, "rtt_bytes", "must hold at least one segment")?;
        check(self.rto > Time::ZERO, "rto", "must be positive")?;
        check((0.0..=1.0).contains(&self.tail_fraction), "tail_fraction", "must be in 0..=1")
    }
    /// Packets of a message of `len` bytes.
    #[inline]
    pub fn packets(&self, len: u16) -> u32 {
        (len as u32).div_ceil(self.segment_bytes).max(1)
    }
    /// Payload bytes of packet `offset` of a message of `len` bytes.
    #[inline]
    pub fn payload_len(&self, len: u16, offset: u32) -> u16 {
        (len as u32 - offset * self.segment_bytes).min(self.segment_bytes) as u16
    }
    /// NDP: packets of a message of `packets` sent before any PULL (its first window).
    #[inline]
    pub fn initial_window(&self, packets: u32) -> u32 {
        self.rtt_pkts.min(packets)
    }
    /// Homa: packets sent unscheduled.
    #[inline]
    pub fn unscheduled_packets(&self) -> u32 {
        (self.rtt_bytes / self.segment_bytes).max(1)
    }
}
