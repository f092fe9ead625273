//! The test host's side: its link to node 0's port (one node), or its transport (clusters).

use crate::config::PortParams;
use crate::net::port_tx::PortTx;
use nanopu_nic::Message;
use nanopu_sim::Time;

/// Both directions of the test host's link: the host's side towards the node, the node's
/// port (`port_tx`) towards the host.
pub(crate) struct HostLink {
    pub port: PortParams,
    pub(crate) to_node_busy: Time,
    pub(crate) tx: PortTx,
    /// An IceNIC node's frames towards the host (no transport, so no control frames:
    /// docs/models/icenic.md): when the port is free again.
    ice_busy: Time,
}

impl HostLink {
    pub fn new(port: PortParams) -> HostLink {
        let pull_interval = nanopu_nic::transport::TransportParams::default().pull_interval;
        HostLink { port, to_node_busy: Time::ZERO, tx: PortTx::new(pull_interval), ice_busy: Time::ZERO }
    }

    /// Serialization of a message ([`PortParams::wire_time`]).
    pub(crate) fn wire_time(&self, msg: &Message) -> Time {
        self.port.wire_time(msg.len.into())
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
    pub(crate) fn cross(busy: &mut Time, ready: Time, ser: Time, propagation: Time) -> Time {
        let depart = ready.max(*busy);
        *busy = depart + ser;
        depart + ser + propagation
    }
}
