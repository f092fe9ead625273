//! Partitions of a fabric, for simulating it on several host threads.
//!
//! A leaf-spine fabric splits into one partition per leaf: the leaf switch, its nodes with
//! their links, and the spines `s` with `s % leaves == leaf`. A port belongs to the
//! partition of the switch or node at its sending end; a packet's arrival is handled by the
//! partition at the receiving end. Packets change partition only on leaf-spine links, so
//! nothing one partition does reaches another sooner than a link's propagation delay later:
//! that delay is the lookahead of the windows in which partitions advance independently.
//! A star fabric (one switch) is one partition.

use super::params::Topology;
use super::topology::{Peer, Wiring};
use std::ops::Range;

impl Wiring {
    /// How many partitions the fabric splits into.
    pub fn partitions(&self) -> u32 {
        match self.topology {
            Topology::Star { .. } => 1,
            Topology::LeafSpine { leaves, .. } => leaves,
        }
    }

    /// The host (node `nodes`) lives with switch 0, in partition 0.
    pub fn part_of_node(&self, n: u32) -> u32 {
        match self.topology {
            _ if n >= self.nodes => 0,
            Topology::Star { .. } => 0,
            Topology::LeafSpine { nodes_per_leaf, .. } => n / nodes_per_leaf,
        }
    }

    pub fn part_of_switch(&self, sw: u32) -> u32 {
        match self.topology {
            Topology::Star { .. } => 0,
            Topology::LeafSpine { leaves, .. } if sw < leaves => sw,
            Topology::LeafSpine { leaves, .. } => (sw - leaves) % leaves,
        }
    }

    /// The partition that handles what arrives over `port`'s link.
    pub fn part_of_peer(&self, port: u32) -> u32 {
        match self.peer(port) {
            Peer::Node(n) => self.part_of_node(n),
            Peer::Switch { sw, .. } => self.part_of_switch(sw),
        }
    }

    /// The switches of partition `p`, in increasing order.
    fn switches_of(&self, p: u32) -> Vec<u32> {
        (0..self.switches).filter(|&sw| self.part_of_switch(sw) == p).collect()
    }
}

/// Global ids owned by a partition, as increasing runs, each mapped onto dense local indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranges {
    /// (first id, ids in the run, local index of the first), in local order.
    runs: Vec<(u32, u32, u32)>,
    /// Are the runs in increasing id order too (then a long list is searched by halves)?
    sorted: bool,
    /// More than `SCAN_RUNS` runs within `DENSE_SPAN` ids (a partition's switches when it has
    /// more spines than leaves, as the 1,024-core sort's 16 a leaf): the local index of
    /// each id from `dense_first` on (`ABSENT` for one not here), read at once instead of
    /// searching the runs by halves, at every switch hop. Else empty.
    dense: Vec<u32>,
    dense_first: u32,
}

/// Runs looked at one by one up to this many (a partition has its nodes', its switches'
/// and perhaps the host's); more (the whole fabric of a leaf-spine: a run per switch) and
/// in id order, by halves.
const SCAN_RUNS: usize = 4;

/// Most ids a `dense` index spans (4 KiB): it exists only with many runs close together.
const DENSE_SPAN: u32 = 1024;

/// A `dense` index's entry for an id outside the runs.
const ABSENT: u32 = u32::MAX;

impl Ranges {
    /// Runs given as (first id, end id), in local order; a run that starts where the one
    /// before it ends joins it.
    pub fn new(spans: &[(u32, u32)]) -> Ranges {
        let mut runs: Vec<(u32, u32, u32)> = Vec::new();
        let mut base = 0;
        for &(s, e) in spans.iter().filter(|(s, e)| e > s) {
            match runs.last_mut() {
                Some(last) if last.0 + last.1 == s => last.1 += e - s,
                _ => runs.push((s, e - s, base)),
            }
            base += e - s;
        }
        let sorted = runs.windows(2).all(|w| w[0].0 < w[1].0);
        let (dense, dense_first) = dense_index(&runs);
        Ranges { runs, sorted, dense, dense_first }
    }

    /// The local index of global id `id` (which the ranges must contain). Asked several
    /// times per packet-hop: one subtraction and one comparison per run, or one read of
    /// the dense index. Always inlined: with the dense index the compiler left it a call
    /// (`nanopu bench network`, 151 M host instructions in it, cachegrind).
    #[inline(always)]
    pub fn local(&self, id: u32) -> usize {
        if !self.dense.is_empty() {
            return self.dense_local(id);
        }
        match self.find(id) {
            Some(&(start, _, base)) => (base + id - start) as usize,
            None => self.outside(id),
        }
    }

    /// `local` was asked for an id these ranges do not hold: a bug. Out of line, so that
    /// `local` stays small enough to be inlined at every hop.
    #[cold]
    #[inline(never)]
    fn outside(&self, id: u32) -> ! {
        panic!("fabric: id {id} is outside this partition's {:?}", self.runs)
    }

    /// `local` by the dense index.
    #[inline(always)]
    fn dense_local(&self, id: u32) -> usize {
        match self.dense.get(id.wrapping_sub(self.dense_first) as usize) {
            Some(&l) if l != ABSENT => l as usize,
            _ => self.outside(id),
        }
    }

    /// The run holding `id`, if any.
    #[inline]
    fn find(&self, id: u32) -> Option<&(u32, u32, u32)> {
        if self.runs.len() > SCAN_RUNS && self.sorted {
            // The first run first: a partition's nodes (each packet's entry, `Fabric::send`).
            if id.wrapping_sub(self.runs[0].0) < self.runs[0].1 {
                return self.runs.first();
            }
            let after = self.runs.partition_point(|&(start, _, _)| start <= id);
            return self.runs[..after].last().filter(|&&(start, len, _)| id - start < len);
        }
        self.runs.iter().find(|&&(start, len, _)| id.wrapping_sub(start) < len)
    }

    /// Is global id `id` in these ranges?
    pub fn contains(&self, id: u32) -> bool {
        self.find(id).is_some()
    }

    pub fn len(&self) -> usize {
        self.runs.iter().map(|&(_, n, _)| n as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The runs as (first id, end id), in local order.
    fn spans(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.runs.iter().map(|&(s, n, _)| (s, s + n))
    }

    /// The global ids in local order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(s, n, _)| s..s + n)
    }
}

/// What one fabric instance simulates: every port and switch, one partition's, or (across
/// MPI ranks) a block of partitions', the ports and switches one rank builds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    /// The one partition simulated (None: several, or all of them).
    pub part: Option<u32>,
    /// The partitions whose ports and switches are here.
    pub parts: Range<u32>,
    pub ports: Ranges,
    pub switches: Ranges,
    /// By local port: the partition that handles what crosses its link, when that is
    /// another. (Empty for the whole fabric; kept rather than recomputed, as it is asked at
    /// every hop, and carried with each packet that crosses, so that the exchange between
    /// windows need not work it out again: `Wiring::part_of_peer` was 38 host instructions
    /// of the exchange's 107 a packet, callgrind, `nanopu bench network`.)
    cross: Vec<Option<u32>>,
    /// By local switch: the local index of its port 0, so that a switch's output port is
    /// found without searching `ports`' runs (`switch_port`).
    first_port: Vec<u32>,
}

impl Scope {
    /// Every port and switch, in global order.
    pub fn whole(w: &Wiring) -> Scope {
        let mut ports = vec![(0, w.nodes)];
        ports.extend((0..w.switches).map(|sw| w.switch_ports(sw)));
        ports.extend(w.host_node().map(|h| (w.uplink_port(h), w.port_id_end())));
        let (ports, switches) = (Ranges::new(&ports), Ranges::new(&[(0, w.switches)]));
        let first_port = first_ports(w, &ports, &switches);
        Scope { part: None, parts: 0..w.partitions(), ports, switches, cross: Vec::new(), first_port }
    }

    /// Partitions `parts` together, as one MPI rank builds them: every partition's ports,
    /// then its switches, partition after partition (the whole fabric, in global order,
    /// when `parts` is every partition). Such a fabric is split into its partitions before
    /// a run and joined after it, never run itself (nothing crosses from it: `crosses`).
    pub fn parts(w: &Wiring, parts: Range<u32>) -> Scope {
        if parts == (0..w.partitions()) {
            return Scope::whole(w);
        }
        let each: Vec<Scope> = parts.clone().map(|p| Scope::part(w, p)).collect();
        let ports: Vec<(u32, u32)> = each.iter().flat_map(|s| s.ports.spans()).collect();
        let switches: Vec<(u32, u32)> = each.iter().flat_map(|s| s.switches.spans()).collect();
        let (ports, switches) = (Ranges::new(&ports), Ranges::new(&switches));
        let first_port = first_ports(w, &ports, &switches);
        Scope { part: None, parts, ports, switches, cross: Vec::new(), first_port }
    }

    /// Partition `p`: its nodes' ports, then each of its switches' ports.
    pub fn part(w: &Wiring, p: u32) -> Scope {
        let nodes: Vec<u32> = (0..w.nodes).filter(|&n| w.part_of_node(n) == p).collect();
        let mut ports = runs(&nodes);
        let switches = w.switches_of(p);
        ports.extend(switches.iter().map(|&sw| w.switch_ports(sw)));
        if let Some(h) = w.host_node().filter(|&h| w.part_of_node(h) == p) {
            ports.push((w.uplink_port(h), w.port_id_end()));
        }
        let ports = Ranges::new(&ports);
        let cross = ports.ids().map(|g| Some(w.part_of_peer(g)).filter(|&q| q != p)).collect();
        let switches = Ranges::new(&runs(&switches));
        let first_port = first_ports(w, &ports, &switches);
        Scope { part: Some(p), parts: p..p + 1, ports, switches, cross, first_port }
    }

    /// The local index of port `k` of the switch with local index `j` (a port it has).
    #[inline]
    pub fn switch_port(&self, j: usize, k: u32) -> usize {
        (self.first_port[j] + k) as usize
    }

    /// The partition that handles an arrival over the link of the port with local index
    /// `i`, if that is another.
    #[inline]
    pub fn crosses(&self, i: usize) -> Option<u32> {
        self.cross.get(i).copied().flatten()
    }
}

/// The dense index of `runs` (see `Ranges::dense`), and its first id; empty where it is
/// not kept.
fn dense_index(runs: &[(u32, u32, u32)]) -> (Vec<u32>, u32) {
    let first = runs.iter().map(|r| r.0).min().unwrap_or(0);
    let end = runs.iter().map(|r| r.0 + r.1).max().unwrap_or(0);
    if runs.len() <= SCAN_RUNS || end - first > DENSE_SPAN {
        return (Vec::new(), 0);
    }
    let mut dense = vec![ABSENT; (end - first) as usize];
    for &(start, len, base) in runs {
        (0..len).for_each(|k| dense[(start - first + k) as usize] = base + k);
    }
    (dense, first)
}

/// By local switch, the local index of its port 0 (every switch's ports are with it).
fn first_ports(w: &Wiring, ports: &Ranges, switches: &Ranges) -> Vec<u32> {
    switches.ids().map(|sw| ports.local(w.switch_port(sw, 0)) as u32).collect()
}

/// Increasing ids as maximal runs [start, end).
fn runs(ids: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &id in ids {
        match out.last_mut() {
            Some(last) if last.1 == id => last.1 = id + 1,
            _ => out.push((id, id + 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf_spine() -> Wiring {
        Wiring::new(Topology::LeafSpine { nodes_per_leaf: 4, leaves: 3, spines: 4 })
    }

    /// Every port and switch is in exactly one partition, and local indices are dense.
    #[test]
    fn partitions_cover_everything_once() {
        cover_everything_once(leaf_spine());
        cover_everything_once(leaf_spine().with_host(true));
        for (d, leaves, spines) in [(3, 6, 2), (2, 3, 5), (4, 1, 6)] {
            let w = Wiring::new(Topology::LeafSpine { nodes_per_leaf: d, leaves, spines });
            cover_everything_once(w.clone().with_host(true));
            let whole = Scope::whole(&w);
            assert_eq!(whole.ports.len() as u64, w.port_count(), "no id past a switch's own ports");
            let narrow = (0..w.switches).find(|&sw| w.ports_of(sw) < w.ports_per_switch).unwrap();
            assert!(!whole.ports.contains(w.switch_port(narrow, w.ports_of(narrow))), "an id past its ports");
        }
    }

    /// The local index of an id is the same whether the runs are scanned, halved or indexed.
    #[test]
    fn many_runs_are_searched_by_halves_alike() {
        let spans: Vec<(u32, u32)> = (0..20).map(|k| (10 * k, 10 * k + 3 + k % 4)).collect();
        let r = Ranges::new(&spans);
        let ids: Vec<u32> = spans.iter().flat_map(|&(s, e)| s..e).collect();
        assert_eq!(ids.iter().map(|&g| r.local(g)).collect::<Vec<_>>(), (0..ids.len()).collect::<Vec<_>>());
        assert!(!r.contains(9) && !r.contains(200) && r.contains(190));
        assert!(!r.dense.is_empty(), "20 runs within 200 ids: indexed densely");
        let wide: Vec<(u32, u32)> = spans.iter().map(|&(s, e)| (100 * s, 100 * s + e - s)).collect();
        let r = Ranges::new(&wide);
        let ids: Vec<u32> = wide.iter().flat_map(|&(s, e)| s..e).collect();
        assert!(r.dense.is_empty(), "runs over 20,000 ids: searched by halves");
        assert_eq!(ids.iter().map(|&g| r.local(g)).collect::<Vec<_>>(), (0..ids.len()).collect::<Vec<_>>());
        assert_eq!(Ranges::new(&[(0, 4), (4, 9), (12, 13)]).runs.len(), 2, "touching runs join");
    }

    /// The host's two ports live with switch 0 and cross nowhere; packets to it leave
    /// other leaves towards leaf 0 and switch 0 by the host's own port.
    #[test]
    fn the_host_hangs_off_switch_0() {
        let w = leaf_spine().with_host(true);
        let h = w.host_node().unwrap();
        assert_eq!((h, w.node_of(super::super::topology::HOST_IP)), (12, Some(12)));
        let (up, down) = (w.uplink_port(h), w.uplink_port(h) + 1);
        assert_eq!(w.port_id_end(), down + 1);
        assert_eq!(w.peer(up), Peer::Switch { sw: 0, inport: w.ports_per_switch });
        assert_eq!(w.peer(down), Peer::Node(h));
        let s0 = Scope::part(&w, 0);
        assert!(s0.crosses(s0.ports.local(up)).is_none() && s0.crosses(s0.ports.local(down)).is_none());
        let mut rng = nanopu_sim::Rng::stream(1, 1);
        let choice = super::super::params::UplinkChoice::Hash;
        assert_eq!(w.out_port(0, h, || 0, choice, &mut rng), down);
        let from_leaf_2 = w.out_port(2, h, || 1, choice, &mut rng);
        assert_eq!(from_leaf_2, w.switch_port(2, 4 + 1), "up to spine 1");
        assert_eq!(
            w.out_port(3 + 1, h, || 0, choice, &mut rng),
            w.switch_port(4, 0),
            "spine 1 down to leaf 0"
        );
        assert!(w.is_uplink(up) && !w.is_uplink(down));
        assert_eq!(leaf_spine().node_of(super::super::topology::HOST_IP), None, "no host, no route");
    }

    fn cover_everything_once(w: Wiring) {
        let scopes: Vec<Scope> = (0..w.partitions()).map(|p| Scope::part(&w, p)).collect();
        let mut ports: Vec<u32> = scopes.iter().flat_map(|s| s.ports.ids().collect::<Vec<_>>()).collect();
        ports.sort_unstable();
        assert_eq!(ports, Scope::whole(&w).ports.ids().collect::<Vec<_>>());
        assert_eq!(ports.len() as u64, w.port_count());
        let switches: usize = scopes.iter().map(|s| s.switches.len()).sum();
        assert_eq!(switches, w.switches as usize);
        for s in &scopes {
            let locals: Vec<usize> = s.ports.ids().map(|g| s.ports.local(g)).collect();
            assert_eq!(locals, (0..s.ports.len()).collect::<Vec<_>>());
        }
    }

    /// A block of partitions (an MPI rank's) holds exactly their ports and switches, with
    /// dense local indices; every partition is the whole fabric in global order.
    #[test]
    fn a_block_of_partitions_holds_theirs_only() {
        let w = leaf_spine().with_host(true);
        let block = Scope::parts(&w, 1..3);
        let (one, two) = (Scope::part(&w, 1), Scope::part(&w, 2));
        let ids = |s: &Scope| s.ports.ids().collect::<Vec<_>>();
        assert_eq!(ids(&block), [ids(&one), ids(&two)].concat());
        let sws = |s: &Scope| s.switches.ids().collect::<Vec<_>>();
        assert_eq!(sws(&block), [sws(&one), sws(&two)].concat());
        assert!(ids(&block).iter().all(|&g| block.ports.local(g) < block.ports.len()));
        assert!(!block.ports.contains(w.uplink_port(0)), "node 0 is partition 0's");
        assert_eq!(Scope::parts(&w, 0..3), Scope::whole(&w));
    }

    /// Only leaf-spine links cross partitions.
    #[test]
    fn only_uplinks_cross() {
        let w = leaf_spine();
        for p in 0..w.partitions() {
            let s = Scope::part(&w, p);
            for port in s.ports.ids() {
                let node_link = port < w.nodes || matches!(w.peer(port), Peer::Node(_));
                assert!(!(node_link && s.crosses(s.ports.local(port)).is_some()), "port {port}");
            }
        }
        // Spine 3 (switch 6) lives with leaf 0; its port to leaf 1 crosses.
        let s0 = Scope::part(&w, 0);
        let local = |port: u32| s0.ports.local(port);
        assert_eq!(s0.crosses(local(w.switch_port(6, 1))), Some(1), "to leaf 1's partition");
        assert_eq!(s0.crosses(local(w.switch_port(6, 0))), None);
        let whole = Scope::whole(&w);
        assert_eq!(whole.crosses(whole.ports.local(w.switch_port(6, 1))), None);
    }
}
