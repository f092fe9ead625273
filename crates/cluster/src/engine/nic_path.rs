//! The nanoPU NIC's message path in the event loop: a complete message reaching a node's
//! NIC (from its transport endpoint or the single node's port), a message
//! leaving a core's TX path, and the prototype's latency stamps on the way
//! (docs/platform.md; `NodeNic` holds the NIC itself).

use crate::engine::cores::Cid;
use crate::engine::Simulation;
use crate::net::End;
use nanopu_nic::Message;
use nanopu_sim::Time;

impl Simulation {
    /// Node `n`'s nanoPU NIC: only a nanoPU node's NIC sends and receives messages.
    pub(crate) fn nanopu_nic(&mut self, n: usize) -> &mut nanopu_nic::Nic {
        self.nodes[n].nic.nanopu_mut().expect("messages come from and go to nanoPU nodes only")
    }

    /// A complete message reaches node `n`'s NIC. An IceNIC node has no transport and
    /// takes raw frames only: the message is dropped there and counted (a stray in a
    /// cluster, a rejection by the NIC on a single node), never silently.
    pub(crate) fn nic_arrive(&mut self, n: usize, mut msg: Message) {
        if self.nodes[n].nic.takes_frames() {
            return match self.net.as_mut() {
                Some(net) => net.strays.transport_at_icenic_nodes += 1,
                None => self.host.rejected.push((self.now, crate::node::nic::NO_NANOPU_NIC.into())),
            };
        }
        let mut out = std::mem::take(&mut self.spare_actions);
        let now = self.cycles();
        self.stamp_arrival(n, &mut msg);
        if self.net.is_none() {
            self.port_acks(&msg);
        }
        self.nanopu_nic(n).receive(now, msg, &mut out);
        self.apply(n, out);
    }

    /// A message left a core's TX path: it goes to the network port, whatever its
    /// destination. The prototype's NIC writes its own IP only as the source and never
    /// compares the destination with it (l-nic/lnic `Egress.scala`), so a message to the
    /// node's own address comes back through the switch (a single node's: `host_arrive`).
    pub(crate) fn nic_send(&mut self, (n, c): Cid, mut msg: Message) {
        self.nanopu_nic(n).tx_taken(c, &msg);
        self.tx_room((n, c));
        if self.net.is_some() {
            self.stamp_departure(n, &mut msg);
            self.transport_send(End::Node(n), msg);
        } else {
            self.port_send(msg);
        }
    }

    /// The prototype's stamp module sat on the port (between network and NIC); every
    /// message arriving has passed it.
    /// (The per-packet wire times are worked out only for the testers' messages: every
    /// message of every run passes here.)
    fn stamp_arrival(&self, n: usize, msg: &mut Message) {
        let node = &self.nodes[n];
        let stamped = nanopu_nic::stamp::stamped_on_arrival(msg);
        let on = node.nic.nanopu().is_some_and(|n| n.params().latency_stamps);
        if stamped && on {
            let wire = self.packet_wire_fs(msg.len);
            let first_word =
                |i: usize| self.clock.cycle_floor(Time(self.now.0.saturating_sub(wire[i..].iter().sum())));
            nanopu_nic::stamp::on_arrival(msg, self.segment_bytes(), first_word);
        }
    }

    pub(crate) fn stamp_departure(&self, n: usize, msg: &mut Message) {
        let on = self.nodes[n].nic.nanopu().is_some_and(|n| n.params().latency_stamps);
        if nanopu_nic::stamp::stamped_on_departure(msg) && on {
            let wire = self.packet_wire_fs(msg.len);
            let last_word = |i: usize| self.clock.cycle_ceil(self.now + Time(wire[..=i].iter().sum()));
            nanopu_nic::stamp::on_departure(msg, self.segment_bytes(), last_word);
        }
    }

    /// Packet payload bytes at the port (the stamps go into each packet's last bytes).
    fn segment_bytes(&self) -> usize {
        self.link.port.segment_bytes as usize
    }

    /// How long each packet of a `len`-byte message takes on the node's link (header and
    /// payload at the port's rate; in clusters the node's port parameters are the defaults,
    /// 200 Gb/s, as the fabric's).
    fn packet_wire_fs(&self, len: u16) -> Vec<u64> {
        let p = &self.link.port;
        let (seg, n) = (p.segment_bytes as u64, (len as u64).div_ceil(p.segment_bytes as u64).max(1));
        let payload = |i: u64| seg.min(len as u64 - (i * seg).min(len as u64));
        let wire = |i: u64| nanopu_sim::time::serialization(p.header_bytes as u64 + payload(i), p.rate_bps).0;
        (0..n).map(wire).collect()
    }
}
