//! Per-message records of a cluster run: source, destination, size, send and delivery time,
//! joined from the transports' logs by (source, message id).

use crate::engine::Simulation;
use crate::node::boot::ip_text;
use nanopu_nic::transport::MsgEvent;
use nanopu_sim::Time;
use std::collections::BTreeMap;
use std::io::Write;

/// One delivery of a message (a multicast message has one per member), or a message that
/// was never delivered (`delivered` is None).
#[derive(Clone, Debug, PartialEq)]
pub struct MessageRecord {
    pub src_ip: u32,
    pub src_context: u16,
    pub dst_ip: u32,
    pub dst_context: u16,
    pub len: u16,
    pub sent: Time,
    pub delivered: Option<Time>,
}

impl Simulation {
    /// Keep the transports' per-message logs that `message_records` joins (on by default).
    pub fn set_message_log(&mut self, on: bool) {
        self.nodes.iter_mut().filter_map(|n| n.nic.transport_mut()).for_each(|t| t.set_message_log(on));
    }

    /// Every message sent through the network, joined with its deliveries.
    pub fn message_records(&self) -> Vec<MessageRecord> {
        let transports = || self.nodes.iter().filter_map(|n| n.nic.transport());
        join(transports().flat_map(|t| &t.log.sent), transports().flat_map(|t| &t.log.delivered))
    }

    /// `message_records` of the whole cluster on rank 0 across MPI ranks (collective: every
    /// rank calls it; the others get none): every rank's sends and
    /// deliveries go to rank 0 and are joined there, in node order, as in one process.
    pub fn gathered_message_records(&self) -> Vec<MessageRecord> {
        let Some(r) = crate::engine::ranks::current() else { return self.message_records() };
        let transports = || self.nodes.iter().filter_map(|n| n.nic.transport());
        let sent: Vec<u64> = transports().flat_map(|t| &t.log.sent).flat_map(event_words).collect();
        let mut words: Vec<u64> = std::iter::once(sent.len() as u64 / 3).chain(sent).collect();
        words.extend(transports().flat_map(|t| &t.log.delivered).flat_map(event_words));
        let got = crate::engine::ranks::to_root(r, words);
        if r.rank() != 0 {
            return Vec::new();
        }
        let halves: Vec<(&[u64], &[u64])> =
            got.iter().map(Vec::as_slice).filter_map(sends_and_deliveries).collect();
        let sent: Vec<MsgEvent> = halves.iter().flat_map(|h| h.0.chunks(3).map(word_event)).collect();
        let delivered: Vec<MsgEvent> = halves.iter().flat_map(|h| h.1.chunks(3).map(word_event)).collect();
        join(sent.iter(), delivered.iter())
    }
}

/// A rank's words: how many sends, then its sends and its deliveries (none from a rank
/// that sent nothing).
fn sends_and_deliveries(w: &[u64]) -> Option<(&[u64], &[u64])> {
    let (&n, rest) = w.split_first()?;
    Some(rest.split_at(3 * n as usize))
}

/// A send or delivery as 3 words (to cross MPI ranks).
fn event_words(e: &MsgEvent) -> [u64; 3] {
    let ids = u64::from(e.src_context) | u64::from(e.msg_id) << 16 | u64::from(e.dst_context) << 32;
    [u64::from(e.src_ip) | u64::from(e.dst_ip) << 32, ids | u64::from(e.len) << 48, e.time.0]
}

fn word_event(w: &[u64]) -> MsgEvent {
    MsgEvent {
        src_ip: w[0] as u32,
        dst_ip: (w[0] >> 32) as u32,
        src_context: w[1] as u16,
        msg_id: (w[1] >> 16) as u16,
        dst_context: (w[1] >> 32) as u16,
        len: (w[1] >> 48) as u16,
        time: Time(w[2]),
    }
}

/// Every message of `sent` joined with its deliveries among `delivered` (each in node
/// order): a delivery belongs to the latest send of its source and message id before it.
fn join<'a>(
    sent: impl Iterator<Item = &'a MsgEvent>,
    delivered: impl Iterator<Item = &'a MsgEvent>,
) -> Vec<MessageRecord> {
    let mut sends: BTreeMap<(u32, u16), Vec<(&MsgEvent, bool)>> = BTreeMap::new();
    for e in sent {
        sends.entry((e.src_ip, e.msg_id)).or_default().push((e, false));
    }
    let mut out = Vec::new();
    for d in delivered {
        let Some(list) = sends.get_mut(&(d.src_ip, d.msg_id)) else { continue };
        let Some(s) = list.iter_mut().rev().find(|(s, _)| s.time <= d.time) else { continue };
        s.1 = true;
        out.push(record(s.0, d.dst_ip, Some(d.time)));
    }
    let lost = sends.values().flatten().filter(|(_, used)| !used);
    out.extend(lost.map(|(s, _)| record(s, s.dst_ip, None)));
    out.sort_by_key(|r| (r.sent, r.src_ip, r.dst_ip, r.delivered));
    out
}

impl Simulation {
    /// Nodes of the whole cluster (across MPI ranks a rank holds its own only).
    pub fn cluster_nodes(&self) -> usize {
        self.net.as_ref().map_or(self.nodes.len(), |n| n.fabric.wiring().nodes as usize)
    }

    /// The fabric's per-port statistics (`Fabric::port_stats`: port, packets, bytes, largest
    /// queue), of the whole cluster on rank 0 across MPI ranks (collective: every rank calls
    /// it; the others get none). A port is one partition's, so one rank's: the ranks' lists,
    /// put in port order, are the threaded run's.
    pub fn gathered_port_stats(&self) -> Vec<(u32, u64, u64, u32)> {
        let mine = self.net.as_ref().map(|n| n.fabric.port_stats()).unwrap_or_default();
        let Some(r) = crate::engine::ranks::current() else { return mine };
        let words = mine.iter().flat_map(|&(p, n, b, q)| [u64::from(p), n, b, u64::from(q)]).collect();
        let got = crate::engine::ranks::to_root(r, words);
        let row = |w: &[u64]| (w[0] as u32, w[1], w[2], w[3] as u32);
        let mut all: Vec<_> = got.iter().flat_map(|w| w.chunks(4).map(row)).collect();
        all.sort_by_key(|r| r.0);
        all
    }

    /// Write per-port statistics of the fabric as CSV: port (see `fabric::Wiring` for the
    /// numbering), where its link leads, packets and bytes sent, largest queue in bytes.
    pub fn write_port_stats<W: Write>(&self, w: W) -> std::io::Result<()> {
        let rows = self.net.as_ref().map(|n| n.fabric.port_stats()).unwrap_or_default();
        self.write_port_rows(&rows, w)
    }

    /// `write_port_stats` of the rows given (across MPI ranks, `gathered_port_stats`).
    pub fn write_port_rows<W: Write>(&self, rows: &[(u32, u64, u64, u32)], mut w: W) -> std::io::Result<()> {
        let Some(net) = &self.net else { return Ok(()) };
        writeln!(w, "port,leads_to,packets,bytes,max_queue_bytes")?;
        for &(port, packets, bytes, max) in rows {
            let wiring = net.fabric.wiring();
            let to = match wiring.peer(port) {
                nanopu_net::fabric::Peer::Node(n) if Some(n) == wiring.host_node() => "host".to_string(),
                nanopu_net::fabric::Peer::Node(n) => format!("node {n}"),
                nanopu_net::fabric::Peer::Switch { sw, inport } => format!("switch {sw} port {inport}"),
            };
            writeln!(w, "{port},{to},{packets},{bytes},{max}")?;
        }
        w.flush()
    }

    /// Write the records as CSV (times in ns; `delivered_ns` empty if never delivered).
    pub fn write_message_records<W: Write>(&self, w: W) -> std::io::Result<()> {
        write_message_csv(&self.message_records(), w)
    }
}

/// `records` as CSV (`Simulation::write_message_records`; across MPI ranks, rank 0 writes
/// `gathered_message_records`).
pub fn write_message_csv<W: Write>(records: &[MessageRecord], mut w: W) -> std::io::Result<()> {
    writeln!(w, "src,src_context,dst,dst_context,bytes,sent_ns,delivered_ns")?;
    for r in records {
        let d = r.delivered.map_or(String::new(), |t| format!("{:.3}", t.as_ns_f64()));
        let (src, dst) = (ip_text(r.src_ip), ip_text(r.dst_ip));
        let (sc, dc, len, sent) = (r.src_context, r.dst_context, r.len, r.sent.as_ns_f64());
        writeln!(w, "{src},{sc},{dst},{dc},{len},{sent:.3},{d}")?;
    }
    w.flush()
}

fn record(s: &MsgEvent, dst_ip: u32, delivered: Option<Time>) -> MessageRecord {
    MessageRecord {
        src_ip: s.src_ip,
        src_context: s.src_context,
        dst_ip,
        dst_context: s.dst_context,
        len: s.len,
        sent: s.time,
        delivered,
    }
}
