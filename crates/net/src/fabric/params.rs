//! Fabric parameters. Every constant: unit, default, provenance.

use nanopu_sim::Time;
use std::str::FromStr;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One switch, node n on port n.
    Star { nodes: u32 },
    /// Two tiers with full bisection: each leaf has `nodes_per_leaf` down links and one
    /// uplink to each of `spines` spines (SPEC section 4).
    LeafSpine { nodes_per_leaf: u32, leaves: u32, spines: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UplinkChoice {
    /// A random uplink per packet (the switch's RNG stream).
    Spray,
    /// One uplink per flow: a hash of source, destination, contexts and message id.
    Hash,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    /// Bits per second. Default 200 Gb/s (SPEC section 4).
    pub rate_bps: u64,
    /// Femtoseconds. Default 43.75 ns (SPEC section 4).
    pub propagation_fs: u64,
    /// Probability that a packet crossing a link is lost. Default 0.
    pub drop_prob: f64,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams { rate_bps: 200_000_000_000, propagation_fs: 43_750_000, drop_prob: 0.0 }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchParams {
    /// Strict-priority bands per output port. Default 2 (NDP: control + trimmed, data).
    pub bands: u8,
    /// Byte limit of each band, band 0 first. Default [64 KiB, 80 KiB]: the data band holds
    /// about 74 full packets (*estimate*, the size the prototype's incast experiment used).
    pub band_bytes: Vec<u32>,
    /// Trim data that does not fit to its header instead of dropping it. Default true (NDP).
    pub trim: bool,
    /// Switching latency, femtoseconds. Default 0 (SPEC section 4: 0 in single-rack runs).
    pub latency_fs: u64,
    pub uplink: UplinkChoice,
    /// Replicate multicast packets. Default true.
    pub multicast: bool,
    /// A multicast copy lost on a hop is resent after this long. Default 10 us (*estimate*:
    /// several hop round trips).
    pub mcast_timeout_fs: u64,
}

impl Default for SwitchParams {
    fn default() -> Self {
        SwitchParams {
            bands: 2,
            band_bytes: vec![64 * 1024, 80 * 1024],
            trim: true,
            latency_fs: 0,
            uplink: UplinkChoice::Spray,
            multicast: true,
            mcast_timeout_fs: 10_000_000_000,
        }
    }
}

/// A directed link, named from its sending end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkId {
    /// Node n's link to its switch ("node:N"); both directions.
    Node(u32),
    /// Leaf l's uplink to spine s ("leaf:L:up:S"); both directions.
    Uplink { leaf: u32, spine: u32 },
}

impl FromStr for LinkId {
    type Err = String;
    fn from_str(s: &str) -> Result<LinkId, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let num = |x: &str| x.parse::<u32>().map_err(|_| format!("\"{s}\": \"{x}\" is not a number"));
        match parts.as_slice() {
            ["node", n] => Ok(LinkId::Node(num(n)?)),
            ["leaf", l, "up", sp] => Ok(LinkId::Uplink { leaf: num(l)?, spine: num(sp)? }),
            _ => Err(format!("\"{s}\" is not \"node:N\" or \"leaf:L:up:S\"")),
        }
    }
}

/// A fault of one link (both directions): it goes down at a time (everything crossing it
/// afterwards is lost), and/or it loses packets with its own probability.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkFault {
    pub link: LinkId,
    pub down_at: Option<Time>,
    /// Replaces `link.drop_prob` on this link.
    pub drop_prob: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FabricParams {
    pub topology: Topology,
    pub link: LinkParams,
    pub switch: SwitchParams,
    pub faults: Vec<LinkFault>,
    pub seed: u64,
}

impl FabricParams {
    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let check =
            |ok: bool, f: &str, why: &str| if ok { Ok(()) } else { Err(format!("fabric.{f}: {why}")) };
        let (nodes, ok_topo) = match self.topology {
            Topology::Star { nodes } => (nodes, nodes >= 1),
            Topology::LeafSpine { nodes_per_leaf: d, leaves: l, spines: s } => {
                (d * l, d >= 1 && l >= 1 && s >= 1)
            }
        };
        check(ok_topo && nodes <= 1 << 20, "topology", "needs at least one node, leaf and spine")?;
        check(self.link.rate_bps > 0, "link.rate_bps", "must be positive")?;
        check((0.0..1.0).contains(&self.link.drop_prob), "link.drop_prob", "must be in [0, 1)")?;
        check((1..=8).contains(&self.switch.bands), "switch.bands", "must be 1..=8")?;
        let n = self.switch.band_bytes.len();
        check(n == self.switch.bands as usize, "switch.band_bytes", "needs one limit per band")?;
        check(
            self.switch.band_bytes.iter().all(|&b| b >= 72),
            "switch.band_bytes",
            "each limit must hold a 72-byte header",
        )?;
        let probs_ok = self.faults.iter().all(|f| f.drop_prob.is_none_or(|p| (0.0..1.0).contains(&p)));
        check(probs_ok, "faults.drop_prob", "must be in [0, 1)")?;
        check(self.switch.mcast_timeout_fs > 0, "switch.mcast_timeout", "must be positive")
    }
}
