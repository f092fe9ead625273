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
        let mut sends: BTreeMap<(u32, u16), Vec<(&MsgEvent, bool)>> = BTreeMap::new();
        for e in transports().flat_map(|t| &t.log.sent) {
            sends.entry((e.src_ip, e.msg_id)).or_default().push((e, false));
        }
        let mut out = Vec::new();
        for d in transports().flat_map(|t| &t.log.delivered) {
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

    /// Write per-port statistics of the fabric as CSV: port (see `fabric::Wiring` for the
    /// numbering), where its link leads, packets and bytes sent, largest queue in bytes.
    pub fn write_port_stats<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        let Some(net) = &self.net else { return Ok(()) };
        writeln!(w, "port,leads_to,packets,bytes,max_queue_bytes")?;
        for (port, packets, bytes, max) in net.fabric.port_stats() {
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
    pub fn write_message_records<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        writeln!(w, "src,src_context,dst,dst_context,bytes,sent_ns,delivered_ns")?;
        for r in self.message_records() {
            let d = r.delivered.map_or(String::new(), |t| format!("{:.3}", t.as_ns_f64()));
            let (src, dst) = (ip_text(r.src_ip), ip_text(r.dst_ip));
            let (sc, dc, len, sent) = (r.src_context, r.dst_context, r.len, r.sent.as_ns_f64());
            writeln!(w, "{src},{sc},{dst},{dc},{len},{sent:.3},{d}")?;
        }
        w.flush()
    }
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
