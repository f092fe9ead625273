//! Faults as the fabric takes them: a checked fault (`config::cluster::faults`) becomes a link fault
//! or a cut of the fabric when the network is built.

use crate::config::cluster::Fault;
use nanopu_net::fabric::{Cut, LinkFault};

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
