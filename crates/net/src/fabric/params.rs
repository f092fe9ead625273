//! Fabric parameters. Every constant: unit, default, provenance.

use nanopu_sim::Time;
use std::str::FromStr;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One switch, node n on port n.
    Star { nodes: u32 },
    /// Two tiers with full bisection: each leaf has `nodes_per_leaf` down links and one
    /// uplink to each of `spines` spines (docs/platform.md section 4).
    LeafSpine { nodes_per_leaf: u32, leaves: u32, spines: u32 },
}

/// How big a topology is; every count fits its `u32` once [`Topology::size`] accepted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub nodes: u32,
    pub switches: u32,
    /// The largest switch's port count: the stride of switch port ids (`Wiring`; each
    /// switch builds only its own, `Wiring::ports_of`).
    pub ports_per_switch: u32,
    /// The port id space: node ports plus switches x the stride.
    pub ports: u32,
}

impl Topology {
    /// Most nodes a topology may have: 2^20. Node n is 10.0.0.(2+n) (docs/models/network.md),
    /// which stays inside 10.0.0.0/8 up to 2^24 - 3 nodes; 2^20 is the fabric's limit, 64
    /// times the largest cluster run (16,384 nodes, README). Memory, not this
    /// encoding, is what stops most configurations first (checked when a cluster is built).
    pub const MAX_NODES: u64 = 1 << 20;
    /// Most ports on one switch: a star's one switch has a port per node.
    pub const MAX_SWITCH_PORTS: u64 = Self::MAX_NODES;
    /// Most ports (node and switch) in all: port ids are `u32`, and port i's link draws from RNG
    /// stream i, below the switches' streams at 2^32 (`Fabric::new`).
    pub const MAX_PORTS: u64 = u32::MAX as u64;

    /// The topology's counts, computed without wrapping and checked against the limits
    /// above; the error names the `topology.*` key.
    pub fn size(&self) -> Result<Size, String> {
        let (nodes, switches, per_switch) = match *self {
            Topology::Star { nodes } => star_counts(nodes)?,
            Topology::LeafSpine { nodes_per_leaf, leaves, spines } => {
                leaf_spine_counts(nodes_per_leaf as u64, leaves as u64, spines as u64)?
            }
        };
        let ports = nodes + switches * per_switch;
        if ports > Topology::MAX_PORTS {
            return Err(format!(
                "topology: {ports} ports in all ({switches} switches of {per_switch} ports, \
                 {nodes} nodes), more than the limit of {} (port ids are 32-bit)",
                Topology::MAX_PORTS
            ));
        }
        let n = |v: u64| v as u32;
        Ok(Size { nodes: n(nodes), switches: n(switches), ports_per_switch: n(per_switch), ports: n(ports) })
    }
}

/// (nodes, switches, ports per switch) of a star.
fn star_counts(nodes: u32) -> Result<(u64, u64, u64), String> {
    let nodes = nodes as u64;
    at_least_one(nodes, "topology.nodes")?;
    at_most(nodes, Topology::MAX_NODES, "topology.nodes", "nodes")?;
    Ok((nodes, 1, nodes))
}

/// (nodes, switches, ports per switch) of a leaf-spine: a leaf has `d` down and `s` up
/// ports, a spine one port per leaf.
fn leaf_spine_counts(d: u64, l: u64, s: u64) -> Result<(u64, u64, u64), String> {
    at_least_one(d, "topology.nodes_per_leaf")?;
    at_least_one(l, "topology.leaves")?;
    at_least_one(s, "topology.spines")?;
    let what = format!("nodes ({d} x {l})");
    at_most(d * l, Topology::MAX_NODES, "topology.nodes_per_leaf x topology.leaves", &what)?;
    let what = format!("ports on a leaf ({d} down, {s} up)");
    at_most(d + s, Topology::MAX_SWITCH_PORTS, "topology.nodes_per_leaf + topology.spines", &what)?;
    Ok((d * l, l + s, (d + s).max(l)))
}

fn at_least_one(v: u64, key: &str) -> Result<(), String> {
    if v == 0 {
        return Err(format!("{key}: must be at least 1"));
    }
    Ok(())
}

fn at_most(v: u64, max: u64, key: &str, what: &str) -> Result<(), String> {
    if v > max {
        return Err(format!("{key}: {v} {what}, more than the limit of {max}"));
    }
    Ok(())
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
    /// Bits per second. Default 200 Gb/s (docs/platform.md section 4).
    pub rate_bps: u64,
    /// Femtoseconds. Default 43.75 ns (docs/platform.md section 4).
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
    /// How band 0 (control packets and trimmed headers) shares a switch port with the bands
    /// below it: while both hold packets, band 0 sends this many for each one of a lower
    /// band (weighted round robin); 0 is strict priority. Default 0, the prototype's switch
    /// (l-nic/firesim 09dcba70, `target-design/switch/baseport.h`, `write_flits_to_output`
    /// takes the first band holding a packet). The NDP paper's switch uses 10 (Handley et
    /// al., SIGCOMM 2017, section 3.1), so that headers cannot starve data: with strict
    /// priority an oversubscribed core can carry nothing but headers and control packets
    /// (docs/models/network.md "Bands, trimming, drops"). Nodes' own ports stay strict.
    pub header_weight: u8,
    /// Switching latency, femtoseconds. Default 0 (docs/platform.md section 4: 0 in single-rack runs).
    pub latency_fs: u64,
    pub uplink: UplinkChoice,
    /// Replicate multicast packets. Default true.
    pub multicast: bool,
    /// A multicast copy lost on a hop is resent after this long. Default 10 us (*estimate*:
    /// several hop round trips).
    pub mcast_timeout_fs: u64,
    /// Priority flow control (IEEE 802.1Qbb): pause a switch input's upstream when the
    /// bytes it queued pass XOFF, resume at XON. Default None: off (docs/models/network.md
    /// "PFC").
    pub pfc: Option<super::PfcParams>,
    /// ECN marking threshold K, bytes: an ECN-capable IPv4 packet (ECT(0) or ECT(1))
    /// arriving at a switch output port that already queues more than K bytes is marked CE
    /// (DCTCP, Alizadeh et al. SIGCOMM 2010 section 3.1; RFC 3168 section 5). Default None:
    /// off. The paper's guidance: K > C x RTT / 7 (section 3.3), 20 packets at 1 Gb/s and 65
    /// at 10 Gb/s in its testbed (section 4); docs/models/network.md "ECN".
    pub ecn_k_bytes: Option<u32>,
}

impl SwitchParams {
    /// Largest byte limit of one band: 8 bands of it plus a packet stay within a port's `u32`
    /// byte count (port.rs); 256 MiB is thousands of times the 80 KB the prototype used.
    pub const MAX_BAND_BYTES: u32 = 1 << 28;
}

impl Default for SwitchParams {
    fn default() -> Self {
        SwitchParams {
            bands: 2,
            band_bytes: vec![64 * 1024, 80 * 1024],
            trim: true,
            header_weight: 0,
            latency_fs: 0,
            uplink: UplinkChoice::Spray,
            multicast: true,
            mcast_timeout_fs: 10_000_000_000,
            pfc: None,
            ecn_k_bytes: None,
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
    /// Attach the test host (10.0.0.1) to switch 0 by a link of its own (`Wiring`).
    pub host: bool,
}

impl FabricParams {
    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let check =
            |ok: bool, f: &str, why: &str| if ok { Ok(()) } else { Err(format!("fabric.{f}: {why}")) };
        self.topology.size()?;
        check(self.link.rate_bps > 0, "link.rate_bps", "must be positive")?;
        check((0.0..1.0).contains(&self.link.drop_prob), "link.drop_prob", "must be in [0, 1)")?;
        check((1..=8).contains(&self.switch.bands), "switch.bands", "must be 1..=8")?;
        let n = self.switch.band_bytes.len();
        check(n == self.switch.bands as usize, "switch.band_bytes", "needs one limit per band")?;
        check(
            self.switch.band_bytes.iter().all(|&b| (72..=SwitchParams::MAX_BAND_BYTES).contains(&b)),
            "switch.band_bytes",
            "each limit must be 72 (a header)..=268435456 bytes",
        )?;
        let probs_ok = self.faults.iter().all(|f| f.drop_prob.is_none_or(|p| (0.0..1.0).contains(&p)));
        check(probs_ok, "faults.drop_prob", "must be in [0, 1)")?;
        let pfc_ok = self.switch.pfc.is_none_or(|p| p.xon_bytes < p.xoff_bytes);
        check(pfc_ok, "switch.pfc_xon_bytes", "must be below pfc_xoff_bytes")?;
        let queue_max: u64 = self.switch.band_bytes.iter().map(|&b| u64::from(b)).sum();
        let ecn_ok = self.switch.ecn_k_bytes.is_none_or(|k| u64::from(k) < queue_max);
        check(
            ecn_ok,
            "switch.ecn_k_bytes",
            "must be below the port's queue limit (the sum of band_bytes): nothing would be marked",
        )?;
        check(self.switch.mcast_timeout_fs > 0, "switch.mcast_timeout", "must be positive")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ls(d: u32, l: u32, s: u32) -> Result<Size, String> {
        Topology::LeafSpine { nodes_per_leaf: d, leaves: l, spines: s }.size()
    }

    #[test]
    fn sizes_of_valid_topologies() {
        let s = ls(64, 256, 64).unwrap();
        assert_eq!((s.nodes, s.switches, s.ports_per_switch, s.ports), (16_384, 320, 256, 98_304));
        let s = Topology::Star { nodes: 1 << 20 }.size().unwrap();
        assert_eq!((s.nodes, s.switches, s.ports), (1 << 20, 1, 1 << 21));
    }

    #[test]
    fn an_ecn_threshold_the_queue_cannot_pass_is_refused() {
        let with_k = |k| FabricParams {
            topology: Topology::Star { nodes: 2 },
            link: LinkParams::default(),
            switch: SwitchParams { ecn_k_bytes: Some(k), ..SwitchParams::default() },
            faults: vec![],
            seed: 1,
            host: false,
        };
        let limit = 64 * 1024 + 80 * 1024; // the default bands'
        assert!(with_k(limit - 1).validate().is_ok());
        let e = with_k(limit).validate().unwrap_err();
        assert!(e.starts_with("fabric.switch.ecn_k_bytes: "), "{e}");
    }

    #[test]
    fn sizes_that_wrapped_or_overflowed_are_refused() {
        // 65,536 x 65,536 nodes wrapped to 0 in u32; 65,537 x 65,537 indexed out of bounds.
        let e = ls(65_536, 65_536, 1).unwrap_err();
        assert!(e.contains("topology.nodes_per_leaf x topology.leaves") && e.contains("4294967296"), "{e}");
        assert!(ls(65_537, 65_537, 1).unwrap_err().contains("1048576"));
        let e = ls(4, 4, u32::MAX).unwrap_err();
        assert!(e.contains("topology.nodes_per_leaf + topology.spines"), "{e}");
        // 100,000 spines: 10^10 ports (45-68 GB) once allocated.
        let e = ls(4, 4, 100_000).unwrap_err();
        assert!(e.starts_with("topology: ") && e.contains("4294967295"), "{e}");
        let e = Topology::Star { nodes: 1_048_577 }.size().unwrap_err();
        assert!(e.starts_with("topology.nodes: 1048577") && e.contains("1048576"), "{e}");
        assert!(ls(0, 4, 1).unwrap_err().contains("topology.nodes_per_leaf"));
        assert!(Topology::Star { nodes: 0 }.size().unwrap_err().contains("topology.nodes"));
    }
}
