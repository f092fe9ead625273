//! The test host's link to node 0's port in the event loop (runs of one node): messages
//! and frames crossing it, and the port's transmit queue (`net::link`, `net::port_tx`).

use crate::engine::{Ev, Simulation};
use crate::host::HostMessage;
use crate::net::link::HostLink;
use crate::net::port_tx::{Frame, CTRL_FRAME_BYTES};
use nanopu_nic::Message;
use nanopu_sim::time::serialization;
use nanopu_sim::Time;

impl Simulation {
    /// A message from node 0 towards the test host: it waits its turn at the port.
    pub(crate) fn port_send(&mut self, msg: Message) {
        self.link.tx.data(msg);
        self.port_kick();
    }

    /// A message from the test host reached node 0's NIC: each of its packets has the
    /// transport answer with an ACK (and a PULL) on the port (`port_tx`).
    pub(crate) fn port_acks(&mut self, msg: &Message) {
        let packets = (msg.len as u64).div_ceil(self.link.port.segment_bytes as u64).max(1);
        for _ in 0..packets {
            let frames = self.link.tx.pacer.on_data(self.now);
            self.link.tx.ctrl(frames);
        }
        self.port_kick();
    }

    /// The port finished a frame, or a PULL's token came: start the next frame if it is free.
    pub(crate) fn port_kick(&mut self) {
        if self.now < self.link.tx.free_at {
            return;
        }
        match self.link.tx.next(self.now) {
            Some(Frame::Ctrl) => self.port_start(serialization(CTRL_FRAME_BYTES, self.link.port.rate_bps)),
            Some(Frame::Data(msg)) => self.port_start_data(msg),
            None => self.port_wait_token(),
        }
    }

    /// Start a reply: the latency module stamps it as it starts (`stamp`); its last byte
    /// reaches the host after the MAC, serialization and propagation.
    fn port_start_data(&mut self, mut msg: Message) {
        self.stamp_departure(0, &mut msg);
        let ser = self.link.wire_time(&msg);
        let t = self.now + Time(self.link.port.mac_fs + self.link.port.propagation_fs) + ser;
        self.q.push(t, Ev::HostArrive { msg: Box::new(msg) });
        self.port_start(ser);
    }

    fn port_start(&mut self, ser: Time) {
        self.link.tx.free_at = self.now + ser;
        self.q.push(self.now + ser, Ev::PortFree);
    }

    /// Nothing to send now: wake up when the next waiting PULL may leave.
    fn port_wait_token(&mut self) {
        let tx = &mut self.link.tx;
        if let Some(t) = tx.pacer.next_pull().filter(|&t| tx.wake_at != Some(t)) {
            tx.wake_at = Some(t);
            self.q.push(t, Ev::PortFree);
        }
    }

    /// A message from the test host: over its own link (one node) or its transport into
    /// switch 0 (cluster runs).
    pub(crate) fn host_send(&mut self, msg: Message) {
        self.host.sends += 1;
        if self.net.is_some() {
            self.host.sent.push(HostMessage { time: self.now, msg: msg.clone() });
            return self.transport_send(crate::net::End::Host, msg);
        }
        let left = self.down_the_link(msg.clone());
        self.host.sent.push(HostMessage { time: left, msg });
    }

    /// `msg` crosses the host's link to the node's NIC from now on; when it left the host.
    fn down_the_link(&mut self, msg: Message) -> Time {
        let l = &mut self.link;
        let ser = l.wire_time(&msg);
        let t = HostLink::cross_to_node(l, self.now, ser);
        self.q.push(t, Ev::NicArrive { node: 0, msg: Box::new(msg) });
        t - Time(l.port.propagation_fs + l.port.mac_fs)
    }

    /// A message reached the host's end of node 0's link. The test host stands where the
    /// prototype's FireSim runs of one node had their switch (l-nic/firesim `lnic-dev`,
    /// `target-design/switch/switch.cc`, which routes on the destination IP): a message
    /// to the node's own address goes back down the link, one to the host is the host's,
    /// any other is dropped and counted. A sniffing host (the tester on a tap, no switch)
    /// takes every message, the node's own included.
    pub(crate) fn host_arrive(&mut self, msg: Message) {
        if !self.host.sniffs && msg.dst_ip == self.nodes[0].ip {
            self.host.routed_back += 1;
            self.down_the_link(msg);
            return;
        }
        if msg.dst_ip != crate::host::HOST_IP && !self.host.sniffs {
            return self.host.not_for_host.add(msg.dst_ip);
        }
        let now = self.now;
        let mut replies = self.host.responder.as_mut().map(|f| f(now, &msg)).unwrap_or_default();
        replies.extend(self.host.scripted(now, &msg));
        self.host_done |= self.host.count_arrival(&msg);
        self.host.received.push(HostMessage { time: now, msg });
        for (t, m) in replies {
            self.q.push(t.max(now), Ev::HostSend { msg: Box::new(m) });
        }
    }
}
