//! Fault injection in cluster runs: links that go down or lose packets, nodes that crash,
//! network partitions (`[[faults]]` of a cluster file; semantics in docs/faults.md).
//!
//! A fault is checked when the file is parsed (`ClusterFile::validate`), turned into the
//! fabric's link faults and cuts when the network is built (`network`), and a crash is an
//! event of the partition that owns the node (`Simulation::crash`).

use crate::cluster_config::ClusterFile;
use crate::config::check::{loss, time_us};
use crate::node::CoreState;
use crate::sim::{Ev, Simulation};
use nanopu_net::fabric::{Cut, LinkFault, LinkId};
use nanopu_sim::time::show;
use nanopu_sim::Time;
use schemars::JsonSchema;
use serde::Deserialize;

/// One `[[faults]]` entry as written (docs/faults.md). Which keys it may have depends on
/// `kind`: a key of another kind is an error naming it.
#[derive(Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    /// What fails: "link" (default: a link goes down or loses packets), "crash" (a node
    /// stops) or "partition" (nodes are cut off from the others for a while).
    pub kind: Option<String>,
    /// link: which one, "node:N" (node N's link to its switch) or "leaf:L:up:S" (leaf L's
    /// uplink to spine S); it must exist in the topology. Required for a link fault.
    pub link: Option<String>,
    /// link: when it goes down for good, us (absent: it stays up). 0..=3.6e9.
    pub down_at_us: Option<f64>,
    /// link: its own loss probability, replacing `link.drop_prob` (absent: the link's).
    /// [0, 1). A link fault needs this or `down_at_us`.
    pub drop_prob: Option<f64>,
    /// crash: the node that stops (its cores, NIC and transport; what reaches it is lost).
    /// Required; a node of the topology, crashed at most once.
    pub node: Option<u32>,
    /// crash: when it stops, us. Required; 0..=max_us.
    pub at_us: Option<f64>,
    /// partition: the nodes cut off from every node not listed. Required; nodes of the
    /// topology, each once, not empty.
    pub nodes: Option<Vec<u32>>,
    /// partition: the test host (10.0.0.1) is on the listed nodes' side. Default false.
    pub host: Option<bool>,
    /// partition: when the cut begins, us. Required; 0..=max_us.
    pub from_us: Option<f64>,
    /// partition: when the network heals, us. Required; after `from_us`, at most max_us.
    pub to_us: Option<f64>,
}

/// A fault, checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    Link(LinkFault),
    Crash {
        node: u32,
        at: Time,
    },
    /// `nodes` sorted; `host`: the test host is on their side.
    Partition {
        nodes: Vec<u32>,
        host: bool,
        from: Time,
        to: Time,
    },
}

impl FaultFile {
    /// Node `node` crashes at `at_us`.
    pub fn crash(node: u32, at_us: f64) -> FaultFile {
        FaultFile { kind: Some("crash".into()), node: Some(node), at_us: Some(at_us), ..Default::default() }
    }

    /// `nodes` are cut off from every other node and the test host from `from_us` to `to_us`.
    pub fn partition(nodes: &[u32], from_us: f64, to_us: f64) -> FaultFile {
        let (from_us, to_us) = (Some(from_us), Some(to_us));
        let nodes = Some(nodes.to_vec());
        FaultFile { kind: Some("partition".into()), nodes, from_us, to_us, ..Default::default() }
    }

    /// The same partition with the test host on the listed nodes' side.
    pub fn with_host(self) -> FaultFile {
        FaultFile { host: Some(true), ..self }
    }

    /// Link `link` ("node:N", "leaf:L:up:S") goes down at `down_at_us` and/or loses
    /// packets with probability `drop_prob`.
    pub fn link(link: &str, down_at_us: Option<f64>, drop_prob: Option<f64>) -> FaultFile {
        FaultFile { link: Some(link.into()), down_at_us, drop_prob, ..Default::default() }
    }

    fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("link")
    }

    /// The keys given, by name.
    fn given(&self) -> [(&'static str, bool); 9] {
        [
            ("link", self.link.is_some()),
            ("down_at_us", self.down_at_us.is_some()),
            ("drop_prob", self.drop_prob.is_some()),
            ("node", self.node.is_some()),
            ("at_us", self.at_us.is_some()),
            ("nodes", self.nodes.is_some()),
            ("host", self.host.is_some()),
            ("from_us", self.from_us.is_some()),
            ("to_us", self.to_us.is_some()),
        ]
    }

    /// Every key given belongs to the kind.
    fn only_keys(&self, keys: &[&str]) -> Result<(), String> {
        match self.given().iter().find(|(k, given)| *given && !keys.contains(k)) {
            Some((k, _)) => Err(format!(
                "faults.{k}: not a key of a \"{}\" fault (its keys: kind, {})",
                self.kind(),
                keys.join(", ")
            )),
            None => Ok(()),
        }
    }
}

/// A required key.
fn need<T: Clone>(v: &Option<T>, key: &str, kind: &str) -> Result<T, String> {
    v.clone().ok_or_else(|| format!("faults.{key}: required for a \"{kind}\" fault"))
}

impl ClusterFile {
    /// Add a fault (checked against this file, as if it were one of its `[[faults]]`).
    pub fn add_fault(&mut self, f: FaultFile) -> Result<(), String> {
        self.faults.push(f);
        let checked = self.checked_faults().map(|_| ());
        if checked.is_err() {
            self.faults.pop();
        }
        checked
    }

    /// Every `[[faults]]` entry, checked: each key against its range and the topology, and
    /// no node crashed twice.
    pub fn checked_faults(&self) -> Result<Vec<Fault>, String> {
        let all: Vec<Fault> = self.faults.iter().map(|x| self.fault(x)).collect::<Result<_, _>>()?;
        let mut crashes: Vec<(u32, Time)> = all
            .iter()
            .filter_map(|f| if let Fault::Crash { node, at } = f { Some((*node, *at)) } else { None })
            .collect();
        crashes.sort_unstable();
        if let Some(w) = crashes.windows(2).find(|w| w[0].0 == w[1].0) {
            let (a, b) = (w[0].1.as_us_f64(), w[1].1.as_us_f64());
            return Err(format!("faults.node: node {} crashes twice (at {a} us and {b} us)", w[0].0));
        }
        Ok(all)
    }

    fn fault(&self, x: &FaultFile) -> Result<Fault, String> {
        match x.kind() {
            "link" => self.link_fault(x),
            "crash" => self.crash_fault(x),
            "partition" => self.partition_fault(x),
            k => Err(format!("faults.kind: \"{k}\" is not \"link\", \"crash\" or \"partition\"")),
        }
    }

    fn link_fault(&self, x: &FaultFile) -> Result<Fault, String> {
        x.only_keys(&["link", "down_at_us", "drop_prob"])?;
        let text = need(&x.link, "link", "link")?;
        let link: LinkId = text.parse().map_err(|e| format!("faults.link: {e}"))?;
        self.check_link_exists(link, &text)?;
        if x.down_at_us.is_none() && x.drop_prob.is_none() {
            return Err(format!("faults: link \"{text}\" needs down_at_us or drop_prob"));
        }
        let down_at = x.down_at_us.map(|v| time_us(v, "faults.down_at_us")).transpose()?;
        x.drop_prob.map(|v| loss(v, "faults.drop_prob")).transpose()?;
        Ok(Fault::Link(LinkFault { link, down_at, drop_prob: x.drop_prob }))
    }

    fn crash_fault(&self, x: &FaultFile) -> Result<Fault, String> {
        x.only_keys(&["node", "at_us"])?;
        let node = self.fault_node(need(&x.node, "node", "crash")?, "faults.node")?;
        let at = self.fault_time(need(&x.at_us, "at_us", "crash")?, "faults.at_us")?;
        Ok(Fault::Crash { node, at })
    }

    fn partition_fault(&self, x: &FaultFile) -> Result<Fault, String> {
        x.only_keys(&["nodes", "host", "from_us", "to_us"])?;
        let mut nodes = need(&x.nodes, "nodes", "partition")?;
        nodes.iter().try_for_each(|&n| self.fault_node(n, "faults.nodes").map(|_| ()))?;
        nodes.sort_unstable();
        if let Some(w) = nodes.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("faults.nodes: node {} is listed twice", w[0]));
        }
        let host = x.host.unwrap_or(false);
        if nodes.is_empty() || (host && nodes.len() as u32 == self.node_count()?) {
            return Err(format!(
                "faults.nodes: {nodes:?} (host = {host}) leaves one side of the partition empty: it would cut nothing off"
            ));
        }
        let from = self.fault_time(need(&x.from_us, "from_us", "partition")?, "faults.from_us")?;
        let (to_us, from_us) = (need(&x.to_us, "to_us", "partition")?, x.from_us.unwrap_or(0.0));
        let to = self.fault_time(to_us, "faults.to_us")?;
        if to <= from {
            return Err(format!(
                "faults.to_us: {} us is not after faults.from_us ({} us)",
                show(to_us),
                show(from_us)
            ));
        }
        Ok(Fault::Partition { nodes, host, from, to })
    }

    /// A node index of this topology.
    fn fault_node(&self, n: u32, key: &str) -> Result<u32, String> {
        let total = self.node_count()?;
        if n >= total {
            return Err(format!("{key}: {n} is not a node of this topology (nodes 0..={})", total - 1));
        }
        Ok(n)
    }

    /// A time within the run's limit (`max_us`).
    fn fault_time(&self, us: f64, key: &str) -> Result<Time, String> {
        let t = time_us(us, key)?;
        if us > self.max_us {
            return Err(format!(
                "{key}: {} us is past the run's time limit (max_us = {} us)",
                show(us),
                show(self.max_us)
            ));
        }
        Ok(t)
    }
}

/// The fabric's link faults and cuts for `faults`, in a cluster of `nodes` nodes (the test
/// host is endpoint `nodes` to the fabric).
pub(crate) fn fabric_faults(faults: &[Fault], nodes: u32) -> (Vec<LinkFault>, Vec<Cut>) {
    let (mut links, mut cuts) = (Vec::new(), Vec::new());
    for f in faults {
        match f {
            Fault::Link(l) => links.push(l.clone()),
            Fault::Crash { node, at } => cuts.push(Cut::Crash { node: *node, at: *at }),
            Fault::Partition { nodes: n, host, from, to } => {
                let members = n.iter().copied().chain(host.then_some(nodes)).collect();
                cuts.push(Cut::Partition { members, from: *from, to: *to })
            }
        }
    }
    (links, cuts)
}

impl Simulation {
    /// Queue the crashes among `faults`: each is an event of its node (so a partitioned run
    /// handles it in the partition that owns the node), and no core of the node runs past it.
    pub(crate) fn schedule_crashes(&mut self, faults: &[Fault]) {
        for f in faults {
            if let Fault::Crash { node, at } = *f {
                self.nodes[node as usize].crash_cycle = self.clock.cycle_ceil(at);
                self.q.push(at, Ev::Crash { node: node as usize });
            }
        }
    }

    /// Node `n` crashes now: its cores execute nothing more (a core that exited stays
    /// exited), and every later event of its NIC and transport is dropped (`for_crashed`).
    pub(crate) fn crash(&mut self, n: usize) {
        let now = self.now;
        let node = &mut self.nodes[n];
        node.crashed = Some(now);
        for s in node.state.iter_mut().filter(|s| !matches!(s, CoreState::Halted(_) | CoreState::Stopped(_)))
        {
            *s = CoreState::Crashed(now);
            self.running_cores -= 1;
        }
    }

    /// Is `ev` an event of a node that crashed (dropped: a crashed node does nothing)?
    pub(crate) fn for_crashed(&self, ev: &Ev) -> bool {
        let node = match ev {
            Ev::NicSend { node, .. }
            | Ev::NicArrive { node, .. }
            | Ev::NicUpdate { node, .. }
            | Ev::CoreTimer { node, .. }
            | Ev::Inject { node, .. }
            | Ev::Transport { node, .. } => *node,
            _ => return false,
        };
        self.nodes[node].crashed.is_some()
    }
}

/// A link as the configuration names it: "node:N" or "leaf:L:up:S".
fn link_text(l: LinkId) -> String {
    match l {
        LinkId::Node(n) => format!("node:{n}"),
        LinkId::Uplink { leaf, spine } => format!("leaf:{leaf}:up:{spine}"),
    }
}

/// Sorted node numbers as the command line writes them: "0,1,4-9" (runs of three or more
/// as A-B).
fn runs(nodes: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < nodes.len() {
        let j = (i..nodes.len()).take_while(|&k| nodes[k] - nodes[i] == (k - i) as u32).last().unwrap_or(i);
        match j - i {
            0 => out.push(nodes[i].to_string()),
            1 => out.extend([nodes[i].to_string(), nodes[j].to_string()]),
            _ => out.push(format!("{}-{}", nodes[i], nodes[j])),
        }
        i = j + 1;
    }
    out.join(",")
}

/// What a fault did in a run, for its summary.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct FaultReport {
    /// "crash", "partition" or "link".
    pub kind: String,
    /// What it is and whether it happened, in words.
    pub fault: String,
    /// Packets it lost (also among the fabric's drops by cause: a link fault's in link down
    /// and random, a crash's or partition's in `drops_fault`).
    pub dropped: u64,
}

impl FaultReport {
    pub fn line(&self) -> String {
        format!("fault: {}: {} packets dropped\n", self.fault, self.dropped)
    }
}

impl Simulation {
    /// Each fault of the run, in the file's order, with the packets it lost.
    pub fn fault_reports(&self) -> Vec<FaultReport> {
        let stats = self.net.as_ref().map(|n| n.fabric.stats()).unwrap_or_default();
        let (mut cut, mut link) = (stats.cut_drops.into_iter(), stats.link_fault_drops.into_iter());
        let mut drops = |f: &Fault| match f {
            Fault::Link(_) => link.next(),
            _ => cut.next(),
        };
        self.faults.iter().map(|f| self.fault_report(f, drops(f).unwrap_or(0))).collect()
    }

    fn fault_report(&self, f: &Fault, dropped: u64) -> FaultReport {
        let us = |t: Time| format!("{:.3} us", t.as_us_f64());
        let (kind, fault) = match f {
            Fault::Crash { node, at } => match self.nodes[*node as usize].crashed {
                Some(t) => ("crash", format!("node {node} crashed at {}", us(t))),
                None => ("crash", format!("node {node} did not crash: the run ended before {}", us(*at))),
            },
            Fault::Partition { nodes, host, from, to } => {
                let with = if *host { " and the test host" } else { "" };
                let what = format!("nodes {}{with} cut off from {} to {}", runs(nodes), us(*from), us(*to));
                ("partition", what)
            }
            Fault::Link(l) => {
                let down = l.down_at.map_or(String::new(), |t| format!(" down at {}", us(t)));
                let p = l.drop_prob.map_or(String::new(), |p| format!(" losing {p}"));
                ("link", format!("link {}{down}{p}", link_text(l.link)))
            }
        };
        FaultReport { kind: kind.into(), fault, dropped }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn node_lists_are_written_as_runs() {
        assert_eq!(super::runs(&[0, 1]), "0,1");
        assert_eq!(super::runs(&[0, 1, 2, 5, 7, 8, 9, 10]), "0-2,5,7-10");
        assert_eq!(super::runs(&[3]), "3");
    }
}
