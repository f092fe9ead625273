//! `[topology]`: how nodes and switches are connected, and which links that makes (what a
//! fault may name). Separate from the other sections because only it says how many nodes
//! there are, which the program ranges and faults are checked against.

use super::ClusterFile;
use crate::config::bounds::{Bounds, OneOf};
use nanopu_net::fabric::{LinkId, Topology};
use schemars::JsonSchema;
use serde::Deserialize;

/// The kinds of topology.
pub const KINDS: OneOf = OneOf(&["star", "leaf-spine"]);
/// Nodes of a star, nodes per leaf, leaves: each at least 1 and at most the fabric's
/// nodes (`nanopu_net::fabric::Topology::size` checks their products).
pub const COUNT: Bounds<u32> = Bounds::closed(1, Topology::MAX_NODES as u32);
/// Spines: a leaf has at least one node port beside them, within a switch's ports.
pub const SPINES: Bounds<u32> = Bounds::closed(1, Topology::MAX_SWITCH_PORTS as u32 - 1);

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// "star" (one switch; `nodes`) or "leaf-spine" (`nodes_per_leaf`, `leaves`, `spines`).
    #[schemars(transform = KINDS.schema())]
    pub kind: String,
    /// Star: the number of nodes. 1..=1,048,576 (2^20).
    #[schemars(transform = COUNT.schema())]
    pub nodes: Option<u32>,
    /// Leaf-spine: nodes under each leaf switch; nodes_per_leaf x leaves at most 2^20, and a
    /// leaf's nodes_per_leaf + spines ports at most 2^20.
    #[schemars(transform = COUNT.schema())]
    pub nodes_per_leaf: Option<u32>,
    /// Leaf-spine: the number of leaf switches.
    #[schemars(transform = COUNT.schema())]
    pub leaves: Option<u32>,
    /// Leaf-spine: the number of spine switches (each leaf has one uplink to each).
    #[schemars(transform = SPINES.schema())]
    pub spines: Option<u32>,
}

impl TopologyFile {
    /// A key of the other kind of topology given is an error naming it, never ignored.
    fn unused(&self, keys: &[(&str, Option<u32>)]) -> Result<(), String> {
        let why = match self.kind.as_str() {
            "star" => {
                "a star is one switch of `nodes` nodes; nodes_per_leaf, leaves and spines are a leaf-spine's"
            }
            _ => "a leaf-spine has nodes_per_leaf x leaves nodes; `nodes` is a star's",
        };
        match keys.iter().find(|(_, v)| v.is_some()) {
            Some((k, _)) => Err(format!("topology.{k}: does not apply to kind \"{}\" ({why})", self.kind)),
            None => Ok(()),
        }
    }

    /// `nodes` nodes on one switch.
    pub fn star(nodes: u32) -> TopologyFile {
        TopologyFile {
            kind: "star".into(),
            nodes: Some(nodes),
            nodes_per_leaf: None,
            leaves: None,
            spines: None,
        }
    }
}

impl ClusterFile {
    /// The fabric's topology (sizes not yet checked: see `Topology::size`).
    pub fn topology(&self) -> Result<Topology, String> {
        let t = &self.topology;
        let need = |v: Option<u32>, k: &str| {
            v.filter(|&x| x > 0).ok_or(format!("topology.{k}: required and positive for kind \"{}\"", t.kind))
        };
        match t.kind.as_str() {
            "star" => {
                t.unused(&[
                    ("nodes_per_leaf", t.nodes_per_leaf),
                    ("leaves", t.leaves),
                    ("spines", t.spines),
                ])?;
                Ok(Topology::Star { nodes: need(t.nodes, "nodes")? })
            }
            "leaf-spine" => {
                t.unused(&[("nodes", t.nodes)])?;
                Ok(Topology::LeafSpine {
                    nodes_per_leaf: need(t.nodes_per_leaf, "nodes_per_leaf")?,
                    leaves: need(t.leaves, "leaves")?,
                    spines: need(t.spines, "spines")?,
                })
            }
            k => Err(KINDS.check(k, "topology.kind").expect_err("star and leaf-spine are matched above")),
        }
    }

    pub(crate) fn check_link_exists(&self, link: LinkId, text: &str) -> Result<(), String> {
        let ok = match (link, self.topology()?) {
            (LinkId::Node(n), _) => n < self.node_count()?,
            (LinkId::Uplink { leaf, spine }, Topology::LeafSpine { leaves, spines, .. }) => {
                leaf < leaves && spine < spines
            }
            (LinkId::Uplink { .. }, Topology::Star { .. }) => false,
        };
        if !ok {
            return Err(format!("faults.link: \"{text}\" does not exist in this topology"));
        }
        Ok(())
    }
}
