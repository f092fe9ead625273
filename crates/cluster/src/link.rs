//! The test host's side: its link to node 0's port (one node), or its transport (clusters).

use crate::config::PortParams;
use crate::host::HostMessage;
use crate::port_tx::{Frame, PortTx, CTRL_FRAME_BYTES};
use crate::sim::{Ev, Simulation};
use nanopu_nic::Message;
use nanopu_sim::time::serialization;
use nanopu_sim::Time;

/// Both directions of the test host's link: the host's side towards the node, the node's
/// port (`port_tx`) towards the host.
pub(crate) struct HostLink {
    pub port: PortParams,
    to_node_busy: Time,
    tx: PortTx,
    /// An IceNIC node's frames towards the host (no transport, so no control frames:
    /// docs/models/icenic.md): when the port is free again.
    ice_busy: Time,
}

impl HostLink {
    pub fn new(port: PortParams) -> HostLink {
        let pull_interval = nanopu_nic::transport::TransportParams::default().pull_interval;
        HostLink { port, to_node_busy: Time::ZERO, tx: PortTx::new(pull_interval), ice_busy: Time::ZERO }
    }

    /// Serialization of a message: `ceil(len / segment)` packets of header + segment.
    fn wire_time(&self, msg: &Message) -> Time {
        let p = &self.port;
        let packets = (msg.len as u64).div_ceil(p.segment_bytes as u64).max(1);
        serialization(packets * p.header_bytes as u64 + msg.len as u64, p.rate_bps)
    }

    /// A frame of `ser` serialization ready at `ready` at the node's port: when its last
    /// byte reaches the host.
    pub(crate) fn cross_to_host(l: &mut HostLink, ready: Time, ser: Time) -> Time {
        HostLink::cross(&mut l.ice_busy, ready, ser, Time(l.port.propagation_fs))
    }

    /// A frame of `ser` serialization leaving the host at `ready`: when its last byte
    /// reaches the node's NIC (through the port's MAC).
    pub(crate) fn cross_to_node(l: &mut HostLink, ready: Time, ser: Time) -> Time {
        let prop = Time(l.port.propagation_fs + l.port.mac_fs);
        HostLink::cross(&mut l.to_node_busy, ready, ser, prop)
    }

    /// Occupy one direction from `ready` on; the time the last byte arrives.
    fn cross(busy: &mut Time, ready: Time, ser: Time, propagation: Time) -> Time {
        let depart = ready.max(*busy);
        *busy = depart + ser;
        depart + ser + propagation
    }
}

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
        if self.net.is_some() {
            self.host.sent.push(HostMessage { time: self.now, msg: msg.clone() });
            return self.transport_send(crate::network::End::Host, msg);
        }
        let l = &mut self.link;
        let ser = l.wire_time(&msg);
        let prop = Time(l.port.propagation_fs + l.port.mac_fs);
        let t = HostLink::cross(&mut l.to_node_busy, self.now, ser, prop);
        let left = t - prop;
        self.host.sent.push(HostMessage { time: left, msg: msg.clone() });
        self.q.push(t, Ev::NicArrive { node: 0, msg: Box::new(msg) });
    }

    pub(crate) fn host_arrive(&mut self, msg: Message) {
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
