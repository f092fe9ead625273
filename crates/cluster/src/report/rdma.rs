//! What the RDMA NIC nodes of a cluster run did (docs/models/rdma-nic.md): their NICs'
//! transport counters summed, and the switches' PFC signals.

use crate::engine::Simulation;
use serde::Serialize;

/// RDMA NIC nodes' transport over a run.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct RdmaTotals {
    pub nodes: usize,
    pub data_packets_sent: u64,
    /// Data packets sent again by go-back-N.
    pub retransmitted: u64,
    pub naks_received: u64,
    /// Local ACK timer expiries.
    pub timeouts: u64,
    /// Request packets past a gap (dropped) and below the expected PSN (acknowledged).
    pub out_of_sequence: u64,
    pub duplicates: u64,
    pub rx_buffer_drops: u64,
    /// PFC PAUSEs and resumes the switches sent.
    pub pfc_pauses: u64,
    pub pfc_resumes: u64,
}

impl RdmaTotals {
    /// The totals of `sim`'s RDMA NIC nodes; none when it has none.
    pub fn of(sim: &Simulation) -> Option<RdmaTotals> {
        Some(RdmaTotals::counted(sim)).filter(|t| t.nodes > 0)
    }

    /// The totals of `sim`'s RDMA NIC nodes, and its switches' PFC signals, even without
    /// RDMA nodes (across MPI ranks another rank's switches may pause them).
    pub(crate) fn counted(sim: &Simulation) -> RdmaTotals {
        let mut t = RdmaTotals::default();
        for c in sim.nodes.iter().filter_map(|n| n.nic.rdma()).map(|r| &r.counters) {
            t.nodes += 1;
            t.data_packets_sent += c.data_packets_sent;
            t.retransmitted += c.retransmitted;
            t.naks_received += c.naks_received;
            t.timeouts += c.timeouts;
            t.out_of_sequence += c.out_of_sequence;
            t.duplicates += c.duplicates;
            t.rx_buffer_drops += c.rx_buffer_drops;
        }
        let f = sim.net_stats().unwrap_or_default();
        (t.pfc_pauses, t.pfc_resumes) = (f.pfc_pauses, f.pfc_resumes);
        t
    }

    /// Another rank's totals added.
    pub(crate) fn add(&mut self, o: &RdmaTotals) {
        self.nodes += o.nodes;
        self.data_packets_sent += o.data_packets_sent;
        self.retransmitted += o.retransmitted;
        self.naks_received += o.naks_received;
        self.timeouts += o.timeouts;
        self.out_of_sequence += o.out_of_sequence;
        self.duplicates += o.duplicates;
        self.rx_buffer_drops += o.rx_buffer_drops;
        self.pfc_pauses += o.pfc_pauses;
        self.pfc_resumes += o.pfc_resumes;
    }

    pub fn line(&self) -> String {
        format!(
            "rdma: {} nodes, {} data packets, {} retransmitted (go-back-N), {} NAKs, {} timeouts, {} out of sequence, {} duplicates, {} receive buffer drops; PFC {} pauses, {} resumes\n",
            self.nodes, self.data_packets_sent, self.retransmitted, self.naks_received, self.timeouts,
            self.out_of_sequence, self.duplicates, self.rx_buffer_drops, self.pfc_pauses, self.pfc_resumes
        )
    }
}
