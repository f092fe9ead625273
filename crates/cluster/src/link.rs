//! The test host's side: its link to node 0's port (one node), or its transport (clusters).

use crate::config::PortParams;
use crate::host::HostMessage;
use crate::sim::{Ev, Simulation};
use nanopu_nic::Message;
use nanopu_sim::time::serialization;
use nanopu_sim::Time;

/// Both directions of the test host's link.
pub(crate) struct HostLink {
    pub port: PortParams,
    to_node_busy: Time,
    to_host_busy: Time,
}

impl HostLink {
    pub fn new(port: PortParams) -> HostLink {
        HostLink { port, to_node_busy: Time::ZERO, to_host_busy: Time::ZERO }
    }

    /// Serialization of a message: `ceil(len / segment)` packets of header + segment.
    fn wire_time(&self, msg: &Message) -> Time {
        let p = &self.port;
        let packets = (msg.len as u64).div_ceil(p.segment_bytes as u64).max(1);
        serialization(packets * p.header_bytes as u64 + msg.len as u64, p.rate_bps)
    }

    /// Occupy one direction from `ready` on; the time the last byte arrives.
    fn cross(busy: &mut Time, ready: Time, ser: Time, propagation: Time) -> Time {
        let depart = ready.max(*busy);
        *busy = depart + ser;
        depart + ser + propagation
    }
}

impl Simulation {
    /// A message from node 0 towards the test host.
    pub(crate) fn port_send(&mut self, msg: Message) {
        let l = &mut self.link;
        let ready = self.now + Time(l.port.mac_fs);
        let ser = l.wire_time(&msg);
        let t = HostLink::cross(&mut l.to_host_busy, ready, ser, Time(l.port.propagation_fs));
        self.q.push(t, Ev::HostArrive { msg: Box::new(msg) });
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
