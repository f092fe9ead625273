//! `[link]` and `[switch]`: the fabric's links and switches, and the round-trip floor their
//! rates and latencies set under every timeout (`rto_us`, `mcast_timeout_us`). A module of its own because
//! the floor is fabric arithmetic that the other sections only call.

use super::ClusterFile;
use crate::config::bounds::{Bounds, Each, OneOf};
use crate::config::check::{loss, time_ns, time_us, LOSS, TIME_NS, TIME_US};
use crate::config::keys::Given;
use nanopu_net::fabric::SwitchParams;
use nanopu_sim::packet::{HEADER_BYTES, MIN_FRAME};
use nanopu_sim::time::serialization;
use nanopu_sim::Time;
use schemars::JsonSchema;
use serde::Deserialize;

/// A link's rate, Gb/s: 1 Mb/s to 100 Tb/s (why: the module's tour).
pub const RATE_GBPS: Bounds<f64> = Bounds::closed(0.001, 100_000.0);
/// Priority bands per switch port.
pub const BANDS: Bounds<u8> = Bounds::closed(1, 8);
/// One band's queue, bytes: at least one minimum-size packet.
pub const BAND_BYTES: Bounds<u32> = Bounds::closed(72, SwitchParams::MAX_BAND_BYTES);
/// How a leaf picks a spine.
pub const UPLINKS: OneOf = OneOf(&["spray", "hash"]);

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct LinkFile {
    /// Line rate of every link, Gb/s. Default 200 (the prototype's); 0.001..=100,000.
    #[schemars(transform = RATE_GBPS.schema())]
    pub rate_gbps: f64,
    /// Propagation delay of every link, ns. Default 43.75; 0..=3.6e12 (1 h).
    #[schemars(transform = TIME_NS.schema())]
    pub propagation_ns: f64,
    /// Probability that a link drops a packet, independently per packet. Default 0; [0, 1).
    #[schemars(transform = LOSS.schema())]
    pub drop_prob: f64,
}

impl Default for LinkFile {
    fn default() -> Self {
        LinkFile { rate_gbps: 200.0, propagation_ns: 43.75, drop_prob: 0.0 }
    }
}

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchFile {
    /// Priority bands per output port. Default 2 (NDP), 8 (Homa); 1..=8.
    #[schemars(transform = BANDS.schema())]
    pub bands: Option<u8>,
    /// Queue capacity of each band, bytes, band 0 first (the last repeated). Default [65536,
    /// 81920]; each 72..=268,435,456.
    #[schemars(transform = Each(BAND_BYTES))]
    pub band_bytes: Option<Vec<u32>>,
    /// Trim the payload of a packet that finds its queue full (NDP) instead of dropping it.
    /// Default true (NDP), false (Homa).
    pub trim: Option<bool>,
    /// How band 0 (control packets and trimmed headers) shares a switch port with the lower
    /// bands: while both hold packets, band 0 sends this many packets for each one of a lower
    /// band (weighted round robin). Default 0: strict priority, as the prototype's switch.
    /// 10 is the NDP paper's switch (SIGCOMM 2017, section 3.1), under which headers cannot
    /// starve data in an oversubscribed core (docs/models/network.md "Bands, trimming,
    /// drops"); 0..=255.
    pub header_weight: Option<u8>,
    /// Switching latency, ns, from a packet's arrival to when it may leave. Default 0;
    /// 0..=3.6e12 (1 h).
    #[schemars(transform = TIME_NS.schema())]
    pub latency_ns: Option<f64>,
    /// How a leaf picks a spine: "spray" (default: a random uplink per packet) or "hash" (one
    /// uplink per message: a hash of source, destination, contexts and message id).
    #[schemars(transform = UPLINKS.schema())]
    pub uplink: Option<String>,
    /// Switches replicate multicast packets (the reliable multicast). Default true.
    pub multicast: Option<bool>,
    /// Multicast hop timeout, us. Default 10; at least one hop's round-trip floor (one full
    /// packet's serialization plus an unloaded hop round trip), at most 3.6e9.
    #[schemars(transform = TIME_US.schema())]
    pub mcast_timeout_us: Option<f64>,
    /// Priority flow control (IEEE 802.1Qbb): a switch pauses an input's upstream sender
    /// while the bytes queued from that input exceed `pfc_xoff_bytes`, until they fall to
    /// `pfc_xon_bytes` (docs/models/network.md "PFC"). Default false.
    pub pfc: Option<bool>,
    /// PFC's XOFF threshold, bytes queued from one input. Default 16,384; with `pfc`.
    pub pfc_xoff_bytes: Option<u32>,
    /// PFC's XON threshold, bytes; below `pfc_xoff_bytes`. Default 8,192; with `pfc`.
    pub pfc_xon_bytes: Option<u32>,
    /// ECN marking threshold K, bytes: a switch marks an ECN-capable IPv4 packet (ECT(0) or
    /// ECT(1)) Congestion Experienced when the output queue it joins already holds more than
    /// K bytes (DCTCP's step marking, SIGCOMM 2010 section 3.1; RFC 3168). Not-ECT packets are
    /// never marked. Below the sum of `band_bytes`. Default: absent, no marking. The DCTCP
    /// paper's guidance: K > C x RTT / 7, 20 packets (30,000 bytes) at 1 Gb/s, 65 (97,500)
    /// at 10 Gb/s (docs/models/network.md "ECN").
    pub ecn_k_bytes: Option<u32>,
}

impl ClusterFile {
    pub(super) fn check_switch(&self) -> Result<(), String> {
        let s = &self.switch;
        s.check(&self.transport, Given::Section("switch"))?;
        let Some(v) = s.mcast_timeout_us else { return Ok(()) };
        self.at_least_round_trip(time_us(v, "switch.mcast_timeout_us")?, v, 1, "switch.mcast_timeout_us")
    }
}

impl SwitchFile {
    /// Each key given against its range, named as `at` (the timeout's floor depends on the
    /// links: `ClusterFile::check_switch`).
    pub fn check(&self, transport: &str, at: Given) -> Result<(), String> {
        let bands = self.bands.unwrap_or(if transport == "homa" { 8 } else { 2 });
        BANDS.check(bands, &at.name("bands"), "")?;
        if let Some(b) = &self.band_bytes {
            check_band_bytes(b, bands, &at.name("band_bytes"))?;
        }
        self.latency_ns.map(|v| time_ns(v, &at.name("latency_ns"))).transpose()?;
        self.uplink.as_deref().map(|u| UPLINKS.check(u, &at.name("uplink"))).transpose()?;
        self.pfc_params(at).map(|_| ())
    }

    /// PFC's thresholds when `pfc` is on; a threshold given without it, or XON not below
    /// XOFF, is an error naming the key.
    pub fn pfc_params(&self, at: Given) -> Result<Option<nanopu_net::fabric::PfcParams>, String> {
        let d = nanopu_net::fabric::PfcParams::default();
        let given = self.pfc_xoff_bytes.is_some() || self.pfc_xon_bytes.is_some();
        if self.pfc != Some(true) {
            return match given {
                true => Err(format!(
                    "{}: PFC thresholds need {} = true",
                    at.name("pfc_xoff_bytes"),
                    at.name("pfc")
                )),
                false => Ok(None),
            };
        }
        let p = nanopu_net::fabric::PfcParams {
            xoff_bytes: self.pfc_xoff_bytes.unwrap_or(d.xoff_bytes),
            xon_bytes: self.pfc_xon_bytes.unwrap_or(d.xon_bytes),
        };
        if p.xon_bytes >= p.xoff_bytes {
            return Err(format!(
                "{}: {} must be below {}",
                at.name("pfc_xon_bytes"),
                p.xon_bytes,
                p.xoff_bytes
            ));
        }
        Ok(Some(p))
    }
}

/// One queue limit per band, each within what a switch's queue can be.
fn check_band_bytes(b: &[u32], bands: u8, key: &str) -> Result<(), String> {
    if b.len() != bands as usize {
        return Err(format!("{key}: {} limits for {bands} bands", b.len()));
    }
    b.iter().try_for_each(|&x| BAND_BYTES.check(x, key, " bytes").map(|_| ()))
}

/// Timeout floors.
impl ClusterFile {
    /// The shortest time in which a sender can learn that a packet arrived, over `links`
    /// links one way, unloaded: a full packet (1,024 + 64 bytes, docs/platform.md section 3) serialized
    /// on every link on the way there, a control packet (72 bytes) on every link back, each
    /// link's propagation both ways, and the switching latency of every switch crossed
    /// (one per link but the last, each way). A retransmission timeout below it resends
    /// every packet before its acknowledgement can come back, every time.
    pub fn round_trip_floor(&self, links: u64) -> Time {
        let rate = (self.link.rate_gbps * 1e9).round() as u64;
        let data = serialization((HEADER_BYTES + 1024) as u64, rate).as_fs();
        let ctrl = serialization(MIN_FRAME as u64, rate).as_fs();
        let prop = Time::from_ns_f64(self.link.propagation_ns).as_fs();
        let latency = Time::from_ns_f64(self.switch.latency_ns.unwrap_or(0.0)).as_fs();
        let switches = if links == 1 { 1 } else { links - 1 };
        // In u128: four hour-long propagations pass u64 (the floor then exceeds any rto).
        let fs = links as u128 * (data as u128 + ctrl as u128 + 2 * prop as u128)
            + 2 * switches as u128 * latency as u128;
        Time(u64::try_from(fs).unwrap_or(u64::MAX))
    }

    pub(super) fn at_least_round_trip(&self, t: Time, v: f64, links: u64, key: &str) -> Result<(), String> {
        let floor = self.round_trip_floor(links);
        if t >= floor {
            return Ok(());
        }
        Err(format!(
            "{key}: {} us is shorter than {:.4} us, one full packet's serialization plus an \
             unloaded round trip over {links} link(s) at {} Gb/s and {} ns propagation: a \
             timeout that short resends before any acknowledgement can arrive",
            nanopu_sim::time::show(v),
            floor.as_us_f64(),
            self.link.rate_gbps,
            self.link.propagation_ns
        ))
    }
}

impl LinkFile {
    /// Each key against its range, named as `at`.
    pub fn check(&self, at: Given) -> Result<(), String> {
        RATE_GBPS.check(self.rate_gbps, &at.name("rate_gbps"), " Gb/s")?;
        time_ns(self.propagation_ns, &at.name("propagation_ns"))?;
        loss(self.drop_prob, &at.name("drop_prob"))?;
        Ok(())
    }
}
