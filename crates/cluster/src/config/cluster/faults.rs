//! The `[[faults]]` entries of a cluster file: links that go down or lose packets, nodes
//! that crash, network partitions (semantics in docs/faults.md), each checked when the file
//! is parsed (`ClusterFile::validate`) with errors that name the key.

use super::ClusterFile;
use crate::config::bounds::OneOf;
use crate::config::check::{loss, time_us, LOSS, TIME_US};
use nanopu_net::fabric::{LinkFault, LinkId};
use nanopu_sim::time::show;
use nanopu_sim::Time;
use schemars::JsonSchema;
use serde::Deserialize;

/// The kinds of fault.
pub const KINDS: OneOf = OneOf(&["link", "crash", "partition"]);

/// One `[[faults]]` entry as written (docs/faults.md). Which keys it may have depends on
/// `kind`: a key of another kind is an error naming it.
#[derive(Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    /// What fails: "link" (default: a link goes down or loses packets), "crash" (a node
    /// stops) or "partition" (nodes are cut off from the others for a while).
    #[schemars(transform = KINDS.schema())]
    pub kind: Option<String>,
    /// link: which one, "node:N" (node N's link to its switch) or "leaf:L:up:S" (leaf L's
    /// uplink to spine S); it must exist in the topology. Required for a link fault.
    pub link: Option<String>,
    /// link: when it goes down for good, us (absent: it stays up). 0..=3.6e9.
    #[schemars(transform = TIME_US.schema())]
    pub down_at_us: Option<f64>,
    /// link: its own loss probability, replacing `link.drop_prob` (absent: the link's).
    /// [0, 1). A link fault needs this or `down_at_us`.
    #[schemars(transform = LOSS.schema())]
    pub drop_prob: Option<f64>,
    /// crash: the node that stops (its cores, NIC and transport; what reaches it is lost).
    /// Required; a node of the topology, crashed at most once.
    pub node: Option<u32>,
    /// crash: when it stops, us. Required; 0..=max_us.
    #[schemars(transform = TIME_US.schema())]
    pub at_us: Option<f64>,
    /// partition: the nodes cut off from every node not listed. Required; nodes of the
    /// topology, each once, not empty.
    pub nodes: Option<Vec<u32>>,
    /// partition: the test host (10.0.0.1) is on the listed nodes' side. Default false.
    pub host: Option<bool>,
    /// partition: when the cut begins, us. Required; 0..=max_us.
    #[schemars(transform = TIME_US.schema())]
    pub from_us: Option<f64>,
    /// partition: when the network heals, us. Required; after `from_us`, at most max_us.
    #[schemars(transform = TIME_US.schema())]
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
            k => Err(KINDS.check(k, "faults.kind").expect_err("every kind is matched above")),
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
