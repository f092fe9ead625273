//! The network in the event loop: fabric events, packets between the fabric and the
//! transport endpoints (the nodes' NICs and the test host's), and what a transport asks for
//! turned into events (`Carry`, `Queue`). The fabric's state is `crate::net`'s.

use crate::engine::{Ev, Simulation};
use crate::net::{End, Network};
use crate::node::Node;
use nanopu_net::fabric::{Crossing, Fabric, NetEvent, Schedule};
use nanopu_net::packet::Packet;
use nanopu_nic::transport::retired::Retired;
use nanopu_nic::transport::sender::OutMsg;
use nanopu_nic::transport::{Actions, TAction, Transport};
use nanopu_nic::Message;
use nanopu_sim::packet::HOST_IP;
use nanopu_sim::{EventQueue, Time};
use std::sync::{Mutex, MutexGuard};
impl Simulation {
    /// Every transport endpoint simulated here: the nanoPU nodes', then the test host's.
    pub(crate) fn transports(&self) -> impl Iterator<Item = &Transport> {
        let nodes = self.nodes.iter().filter_map(|n| n.nic.transport());
        nodes.chain(self.net.as_ref().and_then(|n| n.host.as_ref()))
    }
}

impl Simulation {
    fn net(&mut self) -> &mut Network {
        self.net.as_mut().expect("cluster run")
    }

    /// A message left node `n`'s TX path towards another node.
    pub(crate) fn transport_send(&mut self, end: End, msg: Message) {
        self.with_transport(end, |t, now, out| t.send_message(now, msg, out));
    }

    pub(crate) fn transport_timer(&mut self, end: End, timer: nanopu_nic::transport::Timer) {
        self.with_transport(end, |t, now, out| t.on_timer(now, timer, out));
    }

    /// Call an endpoint's transport with what carries out its actions as it takes them;
    /// then a node's NIC takes the messages its transport completed, within the same event
    /// (the transport is part of the NIC: docs/models/icenic.md "One NIC component").
    fn with_transport(&mut self, end: End, f: impl FnOnce(&mut Transport, Time, &mut Carry)) {
        self.call_transport(end, f);
        let End::Node(n) = end else { return };
        // Most calls complete no message (a packet of one not yet whole, an ACK, a PULL), and
        // nearly all others one, taken off as it is.
        match self.net().completed.len() {
            0 => return,
            1 => {
                let msg = self.net().completed.pop().expect("one");
                return self.nic_arrive(n, msg);
            }
            _ => {}
        }
        let mut done = std::mem::take(&mut self.net().completed);
        for msg in done.drain(..) {
            self.nic_arrive(n, msg);
        }
        self.net().completed = done;
    }

    fn call_transport(&mut self, end: End, f: impl FnOnce(&mut Transport, Time, &mut Carry)) {
        let net = self.net.as_mut().expect("cluster run");
        let Network { fabric, host, next_packet, completed, retired, .. } = net;
        let (t, node) = match end {
            End::Node(n) => {
                let t = self.nodes[n].nic.transport_mut().expect("only nanoPU nodes send messages");
                (t, (n + self.base) as u32)
            }
            End::Host => (host.as_mut().expect("the host's partition"), fabric.wiring().nodes),
        };
        let (now, q, last_arrival) = (self.now, &mut self.q, &mut self.last_arrival);
        f(t, now, &mut Carry { fabric, next_packet, q, last_arrival, completed, retired, now, end, node });
    }

    /// Which endpoint a packet the fabric delivered to `node` is for.
    fn end_of(&self, node: u32) -> End {
        let host = self.net.as_ref().and_then(|n| n.fabric.wiring().host_node());
        if Some(node) == host {
            End::Host
        } else {
            End::Node(node as usize - self.base)
        }
    }

    pub(crate) fn net_event(&mut self, ev: NetEvent) {
        let now = self.now;
        let net = self.net.as_mut().expect("cluster run");
        let mut out = Queue { q: &mut self.q, nodes: &self.nodes, base: self.base };
        net.fabric.handle(now, ev, &mut out, &mut net.delivered);
        // Most of the fabric's events (a port's next packet, a switch forwarding) deliver
        // nothing and pause nothing: they end here.
        if !net.delivered.is_empty() {
            self.deliver();
        }
        if self.net().fabric.has_node_pauses() {
            for (node, on) in self.net().fabric.take_node_pauses() {
                self.rdma_pause(self.end_of(node), on);
            }
        }
    }

    /// Hand the packets the fabric just delivered to their endpoints. Nearly always one,
    /// taken off as it is; several are taken apart from the list, in order.
    fn deliver(&mut self) {
        if self.net().delivered.len() == 1 {
            let (node, pkt) = self.net().delivered.pop().expect("one");
            return self.deliver_one(node, pkt);
        }
        let mut delivered = std::mem::take(&mut self.net().delivered);
        for (node, pkt) in delivered.drain(..) {
            self.deliver_one(node, pkt);
        }
        self.net().delivered = delivered;
    }

    /// Hand a packet the fabric delivered to node `node` to its endpoint.
    fn deliver_one(&mut self, node: u32, pkt: Packet) {
        let end = self.end_of(node);
        if pkt.is_frame() {
            self.frame_arrived(end, pkt);
        } else if matches!(end, End::Node(n) if self.nodes[n].nic.takes_frames()) {
            self.net().strays.transport_at_icenic_nodes += 1;
        } else {
            self.with_transport(end, |t, now, out| t.on_packet(now, pkt, out));
        }
    }

    /// A raw frame's last byte reached an endpoint: an IceNIC takes it, the test host
    /// records it, a nanoPU node's NIC cannot (it is counted).
    fn frame_arrived(&mut self, end: End, pkt: Packet) {
        match end {
            End::Host => self.host_frame_arrive(pkt.frame_bytes()),
            End::Node(n) if self.nodes[n].nic.is_ice() => self.ice_arrive(n, pkt.frame_bytes()),
            End::Node(n) if self.nodes[n].nic.rdma().is_some() => self.rdma_arrive(n, pkt.frame_bytes()),
            End::Node(_) => self.net().strays.frames_at_nanopu_nodes += 1,
        }
    }

    /// An endpoint without the transport (an IceNIC node, or the test host sending raw
    /// frames) puts a frame on its link: a packet routed by the frame's IPv4 destination
    /// (none if it is not IPv4: the first switch then drops it as unroutable, counted).
    pub(crate) fn frame_onto_fabric(&mut self, end: End, frame: &[u8]) {
        let (own, node) = match end {
            End::Node(n) => (self.nodes[n].ip, (n + self.base) as u32),
            End::Host => (HOST_IP, self.net().fabric.wiring().nodes),
        };
        let (src, dst) = crate::net::frame::route_ips(frame).unwrap_or((own, 0));
        let net = self.net.as_mut().expect("cluster run");
        net.next_packet += 1;
        let pkt = Packet { id: net.next_packet, ..Packet::frame(src, dst, frame) };
        let mut out = Queue { q: &mut self.q, nodes: &[], base: 0 };
        net.fabric.send(self.now, node, pkt, &mut out);
    }

    /// Let in the packets other partitions sent here, at `at` (sender, index) in their
    /// outboxes `outs` (taken out, leaving empty packets): a sender's outbox is locked for
    /// the run of its packets (`partition::Handoff`: other threads let in other partitions'
    /// packets from the same outboxes meanwhile).
    pub(crate) fn accept_from(&mut self, outs: &[Mutex<Vec<Crossing>>], at: &[(u32, u32)]) {
        let fabric = &mut self.net.as_mut().expect("cluster run").fabric;
        let mut held: Option<(u32, MutexGuard<'_, Vec<Crossing>>)> = None;
        let take = |&(i, j): &(u32, u32)| {
            if held.as_ref().is_none_or(|(h, _)| *h != i) {
                // Unlock the last sender's outbox before locking the next: a thread never
                // holds two, so two threads letting in from the same outboxes cannot wait
                // on each other.
                held = None;
                held = Some((i, outs[i as usize].lock().expect("an outbox")));
            }
            let c = &mut held.as_mut().expect("locked above").1[j as usize];
            (c.at, Ev::Net(fabric.accept(c.port, std::mem::take(&mut c.pkt))))
        };
        self.q.push_aside(at.iter().map(take));
    }

    /// Let in the packets other MPI ranks' partitions sent here (`distributed`), the way a
    /// threaded run's enter (`accept_from`): a second way into `push_aside`, its own copy of
    /// the event queue's code, cost 0.9% of the 1,024-core sort's host instructions and 2.1%
    /// of the network benchmark's (the `fast` build inlined the queue's code differently).
    pub(crate) fn accept_inbox(&mut self) {
        let net = self.net.as_mut().expect("cluster run");
        let inbox = std::mem::take(&mut net.inbox);
        let at: Vec<(u32, u32)> = (0..inbox.len() as u32).map(|j| (0, j)).collect();
        let inbox = [Mutex::new(inbox)];
        self.accept_from(&inbox, &at);
        let [inbox] = inbox;
        let mut inbox = inbox.into_inner().expect("the inbox");
        inbox.clear();
        crate::net::release_packets(&mut inbox);
        self.net.as_mut().expect("cluster run").inbox = inbox;
    }
}

/// Carries out an endpoint's transport's actions at `now`: packets onto the fabric (numbered
/// here), delivered messages to the NIC (or the host), timers into the queue.
struct Carry<'a> {
    fabric: &'a mut Fabric,
    next_packet: &'a mut u64,
    q: &'a mut EventQueue<Ev>,
    last_arrival: &'a mut Time,
    completed: &'a mut Vec<Message>,
    retired: &'a mut Retired,
    now: Time,
    /// The endpoint, and its node number in the fabric.
    end: End,
    node: u32,
}

impl Actions for Carry<'_> {
    fn push(&mut self, a: TAction) {
        match a {
            TAction::Transmit(mut s) => {
                *self.next_packet += 1;
                s.id = *self.next_packet;
                self.fabric.send(self.now, self.node, s, &mut Queue { q: self.q, nodes: &[], base: 0 });
            }
            TAction::Deliver(msg) => {
                *self.last_arrival = self.now;
                match self.end {
                    End::Node(_) => self.completed.push(msg),
                    End::Host => self.q.push(self.now, Ev::HostArrive { msg: Box::new(msg) }),
                }
            }
            TAction::Timer(t, timer) => match self.end {
                End::Node(node) => self.q.push(t, Ev::Transport { node, timer }),
                End::Host => self.q.push(t, Ev::HostTimer { timer }),
            },
        }
    }

    fn retire(&mut self, m: Box<OutMsg>) {
        self.retired.retire(m);
    }
}

/// The fabric's events go straight into the simulation's queue; a packet about to reach a
/// node has that node's transport start loading the state it will need (`nodes` is empty
/// while a transport is busy sending: a node's own sends arrive nowhere near it).
struct Queue<'a> {
    q: &'a mut EventQueue<Ev>,
    nodes: &'a [Node],
    /// Cluster index of `nodes[0]`.
    base: usize,
}

impl Schedule for Queue<'_> {
    /// Inlined into the fabric's code (every hop schedules one or two events through it):
    /// network run -1.1% host instructions.
    #[inline]
    fn at(&mut self, t: Time, ev: NetEvent) {
        self.q.push(t, Ev::Net(ev));
    }
    /// Only loads whose addresses need no other load: the payload's first words, through
    /// the packet at hand (a message of several packets copies them; the counts before
    /// them are written when a packet of it is dropped), and the node's NIC with its
    /// transport in place. Looking up the message an answer is for read the endpoint's
    /// table on the way, whose lines, in a run of thousands of nodes all sending, were
    /// rarely cached: the host waited on them a link's time early.
    fn arriving(&mut self, node: u32, pkt: &Packet) {
        if let Some(words) = pkt.payload.as_deref() {
            nanopu_sim::hint::prefetch(words);
        }
        if let Some(n) = self.nodes.get((node as usize).wrapping_sub(self.base)) {
            n.nic.prefetch();
        }
    }
}
