//! Fault injection in a running cluster: a crash is an event of the partition that owns the
//! node (`Simulation::crash`), and each fault's effect is reported at the end. The faults
//! are checked in `config::cluster::faults` and handed to the fabric by `net::fault`.

use crate::config::cluster::Fault;
use crate::engine::{Ev, Simulation};
use crate::node::CoreState;
use nanopu_net::fabric::LinkId;
use nanopu_sim::Time;

impl Simulation {
    /// Queue the crashes among `faults`: each is an event of its node (so a partitioned run
    /// handles it in the partition that owns the node), and no core of the node runs past it.
    pub(crate) fn schedule_crashes(&mut self, faults: &[Fault]) {
        for f in faults {
            let Fault::Crash { node, at } = *f else { continue };
            let Some(n) = self.held(node) else { continue };
            self.nodes[n].crash_cycle = self.clock.cycle_ceil(at);
            self.q.push(at, Ev::Crash { node: n });
        }
    }

    /// Where node `node` (the cluster's numbering) is among the nodes this simulation holds:
    /// across MPI ranks a rank holds its own nodes only, from `base` on (None: another's).
    pub(crate) fn held(&self, node: u32) -> Option<usize> {
        (node as usize).checked_sub(self.base).filter(|&n| n < self.nodes.len())
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
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
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
            Fault::Crash { node, at } => match self.held(*node).map(|n| self.nodes[n].crashed) {
                Some(Some(t)) => ("crash", format!("node {node} crashed at {}", us(t))),
                Some(None) => {
                    ("crash", format!("node {node} did not crash: the run ended before {}", us(*at)))
                }
                // Another MPI rank's node: that rank's report says (`report::gather`).
                None => ("crash", String::new()),
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
