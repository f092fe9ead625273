//! A cluster run across MPI ranks, summarized once (docs/parallel.md, "Across MPI ranks",
//! "Outputs"): each rank summarizes its own nodes and its part of the fabric, and rank 0
//! puts the pieces together in rank order, which is node order, into the summary of the
//! whole cluster, the one a threaded run gives.
//!
//! Counts add up; lists of nodes (consoles, failures, ZeroNIC nodes) follow each other; the
//! largest switch queue and the last arrival are the largest of any rank's; the test host is
//! on rank 0 (switch 0 is in partition 0); a crash is reported in the words of the rank that
//! holds the node, and every rank adds the packets it lost at its own ports.

use super::cluster::{summarize_cluster, ClusterSummary, FabricTotals, IceTotals, TransportTotals};
use super::judge::Judgement;
use super::rdma::RdmaTotals;
use crate::engine::outcome::Outcome;
use crate::engine::ranks::{self, text_words, words_text};
use crate::engine::Simulation;

/// `summarize_cluster`, of the whole cluster on rank 0 across MPI ranks (collective: every
/// rank calls it; the others get None).
pub fn gathered_summary(sim: &mut Simulation, outcome: Outcome) -> Option<ClusterSummary> {
    let mut mine = summarize_cluster(sim, outcome);
    let Some(r) = ranks::current() else { return Some(mine) };
    // Another rank's switches may pause RDMA traffic though this rank has no RDMA node.
    mine.rdma = Some(RdmaTotals::counted(sim));
    let text = serde_json::to_string(&mine).expect("a summary serializes");
    let got = ranks::to_root(r, text_words(&text));
    let parse = |w: &Vec<u64>| serde_json::from_str(&words_text(w)).expect("a rank's summary reads back");
    (r.rank() == 0).then(|| merge(got.iter().map(parse).collect()))
}

/// Every rank's summary, in rank order, as one.
fn merge(parts: Vec<ClusterSummary>) -> ClusterSummary {
    let judgements: Vec<Judgement> = parts.iter().map(judgement).collect();
    let j = Judgement::merged(&judgements.iter().collect::<Vec<_>>());
    let mut parts = parts.into_iter();
    let mut all = parts.next().expect("rank 0's summary");
    parts.for_each(|p| add(&mut all, p));
    (all.complete, all.problems, all.exit_status) = (j.complete, j.problems, j.exit_status);
    all.rdma = all.rdma.filter(|t| t.nodes > 0);
    all
}

fn judgement(s: &ClusterSummary) -> Judgement {
    Judgement { complete: s.complete, problems: s.problems.clone(), exit_status: s.exit_status }
}

/// The next rank's summary `p` added to `s` (the judgement apart: `merge`). Every field is
/// named, so that a field added to the summary cannot be forgotten here.
fn add(s: &mut ClusterSummary, p: ClusterSummary) {
    let ClusterSummary {
        outcome: _,
        complete: _,
        problems: _,
        exit_status: _,
        simulated_ns,
        nodes,
        cores,
        cores_ok,
        cores_crashed,
        faults,
        failures,
        messages_sent,
        messages_received,
        messages_delivered,
        messages_held,
        last_arrival_ns,
        transport,
        fabric,
        consoles,
        host_received,
        host_rejected,
        icenic,
        zeronic,
        rdma,
        host_frames,
    } = p;
    s.simulated_ns = s.simulated_ns.max(simulated_ns);
    s.last_arrival_ns = s.last_arrival_ns.max(last_arrival_ns);
    (s.nodes, s.cores, s.cores_ok, s.cores_crashed) =
        (s.nodes + nodes, s.cores + cores, s.cores_ok + cores_ok, s.cores_crashed + cores_crashed);
    s.messages_sent += messages_sent;
    s.messages_received += messages_received;
    s.messages_delivered += messages_delivered;
    s.messages_held += messages_held;
    for (f, g) in s.faults.iter_mut().zip(faults) {
        f.dropped += g.dropped;
        if f.fault.is_empty() {
            f.fault = g.fault;
        }
    }
    s.failures.extend(failures);
    s.consoles.extend(consoles);
    s.host_received.extend(host_received);
    s.host_rejected.extend(host_rejected);
    s.host_frames.extend(host_frames);
    s.zeronic.extend(zeronic);
    add_transport(&mut s.transport, &transport);
    add_fabric(&mut s.fabric, &fabric);
    s.icenic = add_ice(s.icenic.take(), icenic);
    if let (Some(a), Some(b)) = (s.rdma.as_mut(), rdma.as_ref()) {
        a.add(b);
    }
}

fn add_transport(t: &mut TransportTotals, o: &TransportTotals) {
    t.data_packets_sent += o.data_packets_sent;
    t.retransmissions += o.retransmissions;
    t.timeouts += o.timeouts;
    t.pull_timeouts += o.pull_timeouts;
    t.trimmed_received += o.trimmed_received;
    t.duplicates_received += o.duplicates_received;
    t.pulls_sent += o.pulls_sent;
    t.grants_sent += o.grants_sent;
    t.tail_delayed += o.tail_delayed;
}

fn add_fabric(f: &mut FabricTotals, o: &FabricTotals) {
    f.packet_hops += o.packet_hops;
    f.delivered += o.delivered;
    f.trims += o.trims;
    f.drops += o.drops;
    f.drops_band_full += o.drops_band_full;
    f.drops_random += o.drops_random;
    f.drops_link_down += o.drops_link_down;
    f.drops_no_route += o.drops_no_route;
    f.drops_multicast_disabled += o.drops_multicast_disabled;
    f.drops_fault += o.drops_fault;
    f.multicast_resends += o.multicast_resends;
    f.max_switch_queue_bytes = f.max_switch_queue_bytes.max(o.max_switch_queue_bytes);
    f.ecn_marks += o.ecn_marks;
    // The largest of any port's time average: each port is on one rank.
    f.mean_switch_queue_bytes = f.mean_switch_queue_bytes.max(o.mean_switch_queue_bytes);
}

/// IceNIC totals of two ranks: present if either has any.
fn add_ice(a: Option<IceTotals>, b: Option<IceTotals>) -> Option<IceTotals> {
    let (mut a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => return a.or(b),
    };
    a.nodes += b.nodes;
    a.frames_sent += b.frames_sent;
    a.frames_received += b.frames_received;
    a.dropped_buffer_full += b.dropped_buffer_full;
    a.dropped_size += b.dropped_size;
    a.fabric_no_route += b.fabric_no_route;
    a.fabric_queue_full += b.fabric_queue_full;
    a.strays.add(b.strays);
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fault::FaultReport;

    fn part(nodes: usize, crash_text: &str, dropped: u64, queue: u32) -> ClusterSummary {
        let fault = FaultReport { kind: "crash".into(), fault: crash_text.into(), dropped };
        ClusterSummary {
            outcome: "all exited".into(),
            complete: true,
            problems: Vec::new(),
            exit_status: 0,
            simulated_ns: 10.0 * nodes as f64,
            nodes,
            cores: 4 * nodes,
            cores_ok: 4 * nodes,
            cores_crashed: 0,
            faults: vec![fault],
            failures: Vec::new(),
            messages_sent: 3,
            messages_received: 3,
            messages_delivered: 3,
            messages_held: 0,
            last_arrival_ns: 1.0,
            transport: TransportTotals { data_packets_sent: 5, ..Default::default() },
            fabric: FabricTotals { packet_hops: 7, max_switch_queue_bytes: queue, ..Default::default() },
            consoles: vec![format!("node {nodes} core 0: hi")],
            host_received: Vec::new(),
            host_rejected: Vec::new(),
            icenic: None,
            zeronic: Vec::new(),
            rdma: Some(RdmaTotals { pfc_pauses: 2, ..Default::default() }),
            host_frames: Vec::new(),
        }
    }

    #[test]
    fn ranks_summaries_add_up_in_rank_order() {
        let all = merge(vec![part(2, "", 1, 100), part(3, "node 4 crashed at 1.000 us", 2, 50)]);
        assert_eq!(
            (all.nodes, all.cores, all.messages_sent, all.transport.data_packets_sent),
            (5, 20, 6, 10)
        );
        assert_eq!(
            (all.fabric.packet_hops, all.fabric.max_switch_queue_bytes, all.simulated_ns),
            (14, 100, 30.0)
        );
        assert_eq!(all.faults[0].fault, "node 4 crashed at 1.000 us");
        assert_eq!(all.faults[0].dropped, 3);
        assert_eq!(all.consoles, vec!["node 2 core 0: hi", "node 3 core 0: hi"]);
        assert_eq!(all.rdma, None, "PFC counts without RDMA nodes are not reported, as in one process");
    }

    #[test]
    fn a_summary_survives_json() {
        let s = part(2, "x", 1, 3);
        let back: ClusterSummary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
