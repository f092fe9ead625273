//! The packet-level fabric: links, output-queued switches with strict-priority bands,
//! trimming, leaf-spine routing, multicast replication made reliable hop by hop, and fault
//! injection (docs/models/network.md).
//!
//! The fabric never schedules anything itself: [`Fabric::send`] and [`Fabric::handle`]
//! give `(time, NetEvent)` pairs to a [`Schedule`] of the caller's, whose event loop hands
//! each back at its time.
//!
//! Packets stay in a store (`store`); queues and events carry a reference and a copy of the
//! few header fields switches read.

mod cut;
pub mod ecn;
mod params;
mod parts;
mod pfc;
mod port;
mod ring;
mod scope;
mod store;
mod topology;

pub use cut::Cut;
pub use params::{FabricParams, LinkFault, LinkId, LinkParams, SwitchParams, Topology, UplinkChoice};
pub use parts::Crossing;
pub use pfc::PfcParams;
pub use scope::{Ranges, Scope};
pub use store::{Hdr, Pkt, PktRef};
pub use topology::{Peer, Wiring, NODE_IP_BASE};

use crate::packet::{Packet, MIN_FRAME};
pub use crate::pcapng::Direction;
use nanopu_sim::time::serialization;
use nanopu_sim::{Rng, Time};
use port::{Admit, Port};
use std::collections::BTreeMap;
use store::Store;

/// The fabric's own events.
#[derive(Clone, Copy, Debug)]
pub enum NetEvent {
    /// The port finished serializing a packet and another one waits. `local` is the port's
    /// index in the fabric (or partition) that scheduled it (`Scope`), which would
    /// otherwise be looked up again at every such event.
    /// `entry` is the host address of the ring entry of the packet it will start, when it
    /// was scheduled (`Port::next_entry`): a prefetch hint only, never read through.
    TxDone { port: u32, local: u32, entry: usize },
    /// A packet's last bit reached node `node`, at the far end of its link (a switch takes
    /// it as a `Forward` a switching latency later). The node, not the port: the sender
    /// knows it (`links`), where the port would be worked out again, with divisions.
    Arrive { node: u32, pkt: Pkt },
    /// A packet leaves a switch's switching pipeline towards its output port(s).
    Forward { sw: u32, inport: u32, pkt: Pkt },
    /// A multicast copy lost on `port`'s hop is sent again.
    Resend { port: u32, pkt: Pkt },
    /// A PFC PAUSE (`on`) or resume reaches the sender of `port`'s link (`pfc`).
    Pause { port: u32, on: bool },
}

/// Where the fabric's events go: the caller's event queue (or a vector, in tests).
pub trait Schedule {
    fn at(&mut self, t: Time, ev: NetEvent);
    /// `pkt` will reach node `node` with the `Arrive` scheduled next, a link's time from now:
    /// the caller may start loading what handling it will read. Only a hint.
    fn arriving(&mut self, _node: u32, _pkt: &Packet) {}
}

impl Schedule for Vec<(Time, NetEvent)> {
    fn at(&mut self, t: Time, ev: NetEvent) {
        self.push((t, ev));
    }
}

/// A packet seen at the capture point: when, which way, and the packet.
pub type Captured = (Time, Direction, Packet);

/// Where packets are captured for pcap output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapturePoint {
    /// Everything node n sends (when it starts leaving) and receives (when it arrives).
    Node(u32),
    /// Everything switch `sw` sends out of port `port` and receives on it.
    SwitchPort { sw: u32, port: u32 },
}

impl std::fmt::Display for CapturePoint {
    /// As `--pcap-at` takes it: "node:N" or "switch:S:P".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CapturePoint::Node(n) => write!(f, "node:{n}"),
            CapturePoint::SwitchPort { sw, port } => write!(f, "switch:{sw}:{port}"),
        }
    }
}

impl std::str::FromStr for CapturePoint {
    type Err = String;
    /// "node:N" or "switch:S:P".
    fn from_str(s: &str) -> Result<CapturePoint, String> {
        let num = |x: &str| x.parse::<u32>().map_err(|_| format!("\"{s}\": \"{x}\" is not a number"));
        match s.split(':').collect::<Vec<_>>().as_slice() {
            ["node", n] => Ok(CapturePoint::Node(num(n)?)),
            ["switch", sw, p] => Ok(CapturePoint::SwitchPort { sw: num(sw)?, port: num(p)? }),
            _ => Err(format!("\"{s}\" is not \"node:N\" or \"switch:S:P\"")),
        }
    }
}

/// Totals over the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FabricStats {
    /// Packets put on a link (one per hop).
    pub packet_hops: u64,
    pub delivered: u64,
    pub trims: u64,
    pub drops_band_full: u64,
    pub drops_random: u64,
    pub drops_link_down: u64,
    pub drops_no_route: u64,
    /// The lowest destination address among the packets dropped for want of a route (the
    /// lowest, so that partitions merge to the same value whatever their order).
    pub first_no_route: Option<u32>,
    pub drops_multicast_disabled: u64,
    /// Raw frames (IceNIC's, docs/models/icenic.md) among `drops_no_route` and
    /// `drops_band_full`: a switch drops a frame it cannot queue rather than trim it.
    pub frames_no_route: u64,
    pub frames_band_full: u64,
    /// Packets each cut lost (`Fabric::set_cuts`, in its order): a crashed node's, a
    /// partition's.
    pub cut_drops: Vec<u64>,
    /// Packets each link fault lost (`FabricParams::faults`, in its order): those of a link
    /// down, and random losses at the fault's own `drop_prob` (also in `drops_link_down`
    /// and `drops_random`).
    pub link_fault_drops: Vec<u64>,
    pub multicast_resends: u64,
    /// Largest queue at any switch port, bytes.
    pub max_switch_queue_bytes: u32,
    /// The largest time-averaged queue of any switch port, bytes, each port's averaged from
    /// when it first queued a packet to its last change (`Port::mean_bytes`).
    pub mean_switch_queue_bytes: u64,
    /// ECN-capable packets the switches marked CE (`SwitchParams::ecn_k_bytes`; 0 without).
    pub ecn_marks: u64,
    /// PFC PAUSEs and resumes the switches sent (`SwitchParams::pfc`; 0 without PFC).
    pub pfc_pauses: u64,
    pub pfc_resumes: u64,
}

pub struct Fabric {
    p: FabricParams,
    wiring: Wiring,
    ports: Vec<Port>,
    /// Where each port's link leads, in the ports' local order (`links`): asked at every hop.
    links: Vec<Link>,
    link_rng: Vec<Rng>,
    switch_rng: Vec<Rng>,
    /// Links that go down, by port (both directions): when, and the fault's index.
    down_at: BTreeMap<u32, (Time, usize)>,
    /// Links with their own loss probability, by port (both directions).
    loss: BTreeMap<u32, (f64, usize)>,
    /// Crashed nodes and partitions (`cut`).
    cuts: Vec<Cut>,
    /// `no_losses`, kept up to date (`set_cuts`): asked at every hop.
    lossless: bool,
    stats: FabricStats,
    capture: Option<CapturePoint>,
    captured: Vec<Captured>,
    packets: Store,
    /// The ports and switches simulated here; `ports`, `link_rng` and `switch_rng` are in
    /// its local order.
    scope: Scope,
    /// Packets for other partitions, in the order they were sent.
    outbox: Vec<Crossing>,
    /// Femtoseconds per byte on a link, when the rate makes it whole (see `ser`).
    fs_per_byte: Option<u64>,
    /// Priority flow control, when the switches have it (`SwitchParams::pfc`).
    pfc: Option<Box<pfc::Pfc>>,
    /// PAUSEs and resumes that reached nodes' ports since the last `take_node_pauses`.
    node_pauses: Vec<(u32, bool)>,
}

impl Fabric {
    pub fn new(p: FabricParams) -> Result<Fabric, String> {
        Fabric::of_parts(p, None)
    }

    /// The ports and switches of partitions `parts` only (`Scope::parts`; None: all), as an
    /// MPI rank builds its share of the fabric: it is split into those partitions when a run
    /// starts (`split`), and what leads to another rank's crosses as packets.
    pub fn of_parts(p: FabricParams, parts: Option<std::ops::Range<u32>>) -> Result<Fabric, String> {
        p.validate()?;
        let wiring = Wiring::new(p.topology.clone()).with_host(p.host);
        let scope = Scope::parts(&wiring, parts.unwrap_or(0..wiring.partitions()));
        let rng = |base: u64| move |i: u32| Rng::stream(p.seed, base + i as u64);
        let link_rng = scope.ports.ids().map(rng(0)).collect();
        let switch_rng = scope.switches.ids().map(rng(1 << 32)).collect();
        let faults = fault_ports(&wiring, &p)?;
        let down_at = faults.iter().filter_map(|(port, k, f)| Some((*port, (f.down_at?, *k)))).collect();
        let loss = faults.iter().filter_map(|(port, k, f)| Some((*port, (f.drop_prob?, *k)))).collect();
        let stats = FabricStats { link_fault_drops: vec![0; p.faults.len()], ..Default::default() };
        let pfc = p.switch.pfc.map(|pp| Box::new(pfc::Pfc::new(pp, &wiring)));
        let port = |g: u32| Port::new(weight_at(&wiring, g, &p.switch));
        let mut f = Fabric {
            pfc,
            node_pauses: Vec::new(),
            ports: scope.ports.ids().map(port).collect(),
            links: links(&wiring, &scope),
            link_rng,
            switch_rng,
            down_at,
            loss,
            cuts: Vec::new(),
            wiring,
            stats,
            capture: None,
            captured: Vec::new(),
            packets: Store::default(),
            scope,
            outbox: Vec::new(),
            fs_per_byte: fs_per_byte(p.link.rate_bps),
            p,
            lossless: false,
        };
        f.lossless = f.no_losses();
        Ok(f)
    }

    pub fn nodes(&self) -> u32 {
        self.wiring.nodes
    }
    pub fn wiring(&self) -> &Wiring {
        &self.wiring
    }

    pub fn stats(&self) -> FabricStats {
        let mut s = self.stats.clone();
        let ports = self.scope.ports.ids().zip(&self.ports);
        let switch_ports = ports.filter(|(g, _)| !self.wiring.is_uplink(*g));
        let (max, mean) =
            switch_ports.fold((0, 0), |(m, a), (_, p)| (m.max(p.max_bytes), a.max(p.mean_bytes())));
        (s.max_switch_queue_bytes, s.mean_switch_queue_bytes) = (max, mean);
        s
    }

    /// Per-port statistics: (port id, packets sent, bytes sent, largest queue in bytes), for
    /// ports that sent anything.
    pub fn port_stats(&self) -> Vec<(u32, u64, u64, u32)> {
        let used = self.scope.ports.ids().zip(&self.ports).filter(|(_, p)| p.sent_packets > 0);
        used.map(|(g, p)| (g, p.sent_packets, p.sent_bytes, p.max_bytes)).collect()
    }

    /// Capture at `point`; an error if the topology has no such node or port.
    pub fn set_capture(&mut self, point: CapturePoint) -> Result<(), String> {
        let w = &self.wiring;
        let ok = match point {
            CapturePoint::Node(n) => n < w.nodes,
            CapturePoint::SwitchPort { sw, port } => sw < w.switches && port < w.ports_of(sw),
        };
        if !ok {
            let (n, sw) = (w.nodes, w.switches);
            let ports = match point {
                CapturePoint::SwitchPort { sw: s, .. } if s < sw => {
                    format!(", switch {s} has {} ports", w.ports_of(s))
                }
                _ => String::new(),
            };
            return Err(format!(
                "capture point {point} does not exist in this topology (nodes: {n}, switches: {sw}{ports}, numbered from 0)"
            ));
        }
        self.capture = Some(point);
        Ok(())
    }
    /// Where packets are captured, if anywhere.
    pub fn capture_point(&self) -> Option<CapturePoint> {
        self.capture
    }

    /// The captured packets in time order (a switch's arrivals are captured when they are
    /// sent, ahead of time).
    pub fn take_capture(&mut self) -> Vec<Captured> {
        self.captured.sort_by_key(|(t, _, _)| *t);
        std::mem::take(&mut self.captured)
    }

    /// Packets captured elsewhere (another process's part of the fabric), added to this
    /// part's; `take_capture` puts them in time order.
    pub fn add_capture(&mut self, packets: Vec<Captured>) {
        self.captured.extend(packets);
    }

    /// Node `node`'s NIC hands a packet to its port at `now`.
    pub fn send(&mut self, now: Time, node: u32, pkt: Packet, out: &mut impl Schedule) {
        if pkt.is_multicast() && !self.p.switch.multicast {
            self.stats.drops_multicast_disabled += 1;
            return;
        }
        let r = self.packets.put(pkt);
        self.offer(now, self.wiring.uplink_port(node), r, out);
    }

    /// Start loading what handling `ev` will read first: its packet, or the port that
    /// finishes a packet. The event loop calls it for the queue's next event while it
    /// handles the current step (an event, or a core's run), so that the host has had time
    /// to load it when that event's turn comes. Only a hint.
    #[inline]
    pub fn prefetch_event(&self, ev: &NetEvent) {
        match *ev {
            NetEvent::TxDone { local, entry, .. } => {
                if let Some(p) = self.ports.get(local as usize) {
                    nanopu_sim::hint::prefetch(p);
                }
                nanopu_sim::hint::prefetch_line(entry as *const u8);
            }
            NetEvent::Arrive { pkt, .. } | NetEvent::Forward { pkt, .. } => self.packets.prefetch(pkt),
            NetEvent::Resend { .. } | NetEvent::Pause { .. } => {}
        }
    }

    /// Handle one of the fabric's events at its time (inlined into the caller's event loop,
    /// which hands it most events: network run -1.0% host instructions).
    #[inline]
    pub fn handle(
        &mut self,
        now: Time,
        ev: NetEvent,
        out: &mut impl Schedule,
        delivered: &mut Vec<(u32, Packet)>,
    ) {
        match ev {
            NetEvent::TxDone { port, local, .. } => {
                let i = local as usize;
                self.ports[i].wake = false;
                self.start(now, port, i, out);
            }
            NetEvent::Arrive { node, pkt } => self.arrive(now, node, pkt, delivered),
            NetEvent::Forward { sw, inport, pkt } => self.forward(now, sw, inport, pkt, out),
            NetEvent::Resend { port, pkt } => {
                self.stats.multicast_resends += 1;
                self.offer(now, port, pkt, out);
            }
            NetEvent::Pause { port, on } => self.pause(now, port, on, out),
        }
    }

    /// A PFC PAUSE or resume reached the sender of `port`'s link: it stops starting packets,
    /// or starts again (a port of another partition is not paused: PFC is modelled within
    /// one partition's fabric).
    fn pause(&mut self, now: Time, port: u32, on: bool, out: &mut impl Schedule) {
        let Some(pfc) = self.pfc.as_mut().filter(|_| self.scope.ports.contains(port)) else { return };
        if port < self.wiring.nodes {
            self.node_pauses.push((port, on));
        }
        if on {
            pfc.paused.insert(port);
        } else if pfc.paused.remove(&port) {
            self.kick(now, port, self.scope.ports.local(port), out);
        }
    }

    /// Have PAUSEs or resumes reached node ports since the last `take_node_pauses`? (Asked
    /// after every event; the answer is nearly always no.)
    #[inline]
    pub fn has_node_pauses(&self) -> bool {
        !self.node_pauses.is_empty()
    }

    /// The PAUSEs (true) and resumes that reached node ports since the last call, by node:
    /// a NIC that honours PFC stops its transmit side while paused (the caller tells it).
    pub fn take_node_pauses(&mut self) -> Vec<(u32, bool)> {
        std::mem::take(&mut self.node_pauses)
    }

    /// Send a PFC signal upstream: a 64-byte PAUSE frame on the reverse link, one
    /// serialization and propagation away (IEEE 802.1Qbb; it does not queue behind data).
    fn signal(&mut self, now: Time, s: pfc::Signal, out: &mut impl Schedule) {
        if let Some((port, on)) = s {
            *if on { &mut self.stats.pfc_pauses } else { &mut self.stats.pfc_resumes } += 1;
            let at = now + self.ser(64) + Time(self.p.link.propagation_fs);
            out.at(at, NetEvent::Pause { port, on });
        }
    }

    /// Queue a packet at a port (node uplinks are unlimited) and start it if idle.
    fn offer(&mut self, now: Time, port: u32, r: Pkt, out: &mut impl Schedule) {
        self.offer_from(now, port, self.scope.ports.local(port), r, None, out)
    }

    /// `offer`, for a packet that came into a switch through `input` (counted by PFC). `i`
    /// is the port's local index (`scope`), which a switch's forwarding knows. Always
    /// inlined (into `forward` and `offer`): `#[inline]` left it a call at every hop.
    #[inline(always)]
    fn offer_from(
        &mut self,
        now: Time,
        port: u32,
        i: usize,
        r: Pkt,
        input: Option<(u32, u32)>,
        out: &mut impl Schedule,
    ) {
        let sw = &self.p.switch;
        let limits = (!self.wiring.is_uplink(port)).then_some(sw.band_bytes.as_slice());
        let p = &mut self.ports[i];
        // DCTCP's step: the queue as the packet arrives, before it joins (ecn.rs).
        let above = limits.is_some() && ecn::above_threshold(sw.ecn_k_bytes, p.queued_bytes());
        p.advance(now);
        match p.offer(r, limits, sw.trim) {
            Admit::Queued => {
                if above && ecn::mark(self.packets.get_mut(r)) {
                    self.stats.ecn_marks += 1;
                }
                self.pfc_queued(now, r, input, r.hdr.wire_len(), out)
            }
            Admit::Trimmed => {
                self.stats.trims += 1;
                self.packets.get_mut(r).trim();
                self.pfc_queued(now, r, input, MIN_FRAME, out);
            }
            // Refused as it was: a multicast copy is resent as it is.
            Admit::Full => {
                self.stats.frames_band_full += u64::from(r.hdr.is_frame());
                self.lost(now, port, r, out, |s| &mut s.drops_band_full)
            }
        }
        self.kick(now, port, i, out);
    }

    fn pfc_queued(
        &mut self,
        now: Time,
        r: Pkt,
        input: Option<(u32, u32)>,
        len: u32,
        out: &mut impl Schedule,
    ) {
        if let (Some(pfc), Some(input)) = (self.pfc.as_mut(), input) {
            let s = pfc.queued(r, input, len);
            self.signal(now, s, out);
        }
    }

    /// Start the port's next packet if its link is free, else make sure the port wakes
    /// when it is. `i` is the port's local index (`scope`), which its callers know.
    /// Always inlined into `offer_from`, its caller at every hop (`#[inline]` left a call).
    #[inline(always)]
    fn kick(&mut self, now: Time, port: u32, i: usize, out: &mut impl Schedule) {
        let p = &mut self.ports[i];
        if p.wake {
            return;
        }
        if p.free_at <= now {
            return self.start(now, port, i, out);
        }
        p.wake = true;
        let entry = p.next_entry().map_or(0, |(_, entry)| entry);
        out.at(p.free_at, NetEvent::TxDone { port, local: i as u32, entry });
    }

    /// Packet `r` did not make it across `port`'s hop: count it; a multicast copy is resent
    /// after the hop's timeout (the hop keeps a copy until it is acknowledged), anything else
    /// is gone.
    fn lost(
        &mut self,
        now: Time,
        port: u32,
        r: Pkt,
        out: &mut impl Schedule,
        counter: fn(&mut FabricStats) -> &mut u64,
    ) {
        *counter(&mut self.stats) += 1;
        self.discard(now, port, r, out);
    }

    /// Packet `r` is lost on `port`'s hop: gone, or a multicast copy resent (see `lost`).
    fn discard(&mut self, now: Time, port: u32, r: Pkt, out: &mut impl Schedule) {
        if !r.hdr.is_multicast() {
            self.packets.take(r);
            return;
        }
        out.at(now + Time(self.p.switch.mcast_timeout_fs), NetEvent::Resend { port, pkt: r });
    }

    /// Start serializing the next packet of `port` (local index `i`).
    fn start(&mut self, now: Time, port: u32, i: usize, out: &mut impl Schedule) {
        if self.pfc.as_ref().is_some_and(|p| p.paused.contains(&port)) {
            return; // a PAUSE holds it: the resume kicks it
        }
        let p = &mut self.ports[i];
        p.advance(now);
        let Some(r) = p.pop() else { return };
        if let Some(pfc) = self.pfc.as_mut() {
            let s = pfc.dequeued(r);
            self.signal(now, s, out);
        }
        self.stats.packet_hops += 1;
        self.capture_if(now, self.captures_out(port), r, Direction::Outbound);
        let ser = self.ser(r.hdr.wire_len());
        let p = &mut self.ports[i];
        p.free_at = now + ser;
        if let Some((next, entry)) = p.next_entry() {
            p.wake = true;
            self.packets.prefetch(next);
            out.at(now + ser, NetEvent::TxDone { port, local: i as u32, entry });
        }
        let at = now + ser + Time(self.p.link.propagation_fs);
        if !self.lossless && self.lose(now, at, port, i, r, out) {
            return;
        }
        let Link { peer, cross } = self.links[i];
        if let Some(part) = cross {
            return self.cross(at, port, part, peer, r);
        }
        match peer {
            Peer::Node(n) => {
                out.arriving(n, self.packets.get(r));
                out.at(at, NetEvent::Arrive { node: n, pkt: r })
            }
            Peer::Switch { sw, inport } => self.enter_switch(at, sw, inport, r, out),
        }
    }

    /// Does packet `r`, starting on `port` (local index `i`) at `now` and reaching the far
    /// end at `at`, get lost on the way (random loss, a link down, a cut)? Then it is
    /// counted and handled as lost.
    fn lose(&mut self, now: Time, at: Time, port: u32, i: usize, r: Pkt, out: &mut impl Schedule) -> bool {
        let (p, fault) = self.loss_on(port);
        if p > 0.0 && self.link_rng[i].next_f64() < p {
            fault.iter().for_each(|&k| self.stats.link_fault_drops[k] += 1);
            self.lost(now, port, r, out, |s| &mut s.drops_random);
        } else if let Some(k) = self.down_by(port, at) {
            self.stats.link_fault_drops[k] += 1;
            self.lost(at, port, r, out, |s| &mut s.drops_link_down);
        } else if let Some(k) = (!self.cuts.is_empty()).then(|| self.cut_by(port, r, now, at)).flatten() {
            self.stats.cut_drops[k] += 1;
            self.discard(at, port, r, out);
        } else {
            return false;
        }
        true
    }

    /// Can no packet be lost on a link (no random loss, link fault or cut)? Then a hop
    /// skips `lose` with one test, where it asked three.
    fn no_losses(&self) -> bool {
        self.p.link.drop_prob == 0.0
            && self.loss.is_empty()
            && self.down_at.is_empty()
            && self.cuts.is_empty()
    }

    /// The loss probability of `port`'s link, and its fault's index if it has one of its
    /// own. Asked at every hop: a fabric without such faults skips the map.
    #[inline]
    fn loss_on(&self, port: u32) -> (f64, Option<usize>) {
        let own = if self.loss.is_empty() { None } else { self.loss.get(&port) };
        own.map_or((self.p.link.drop_prob, None), |&(p, k)| (p, Some(k)))
    }

    /// The fault whose link `port`'s is, if it is down by `at`.
    #[inline]
    fn down_by(&self, port: u32, at: Time) -> Option<usize> {
        if self.down_at.is_empty() {
            return None;
        }
        self.down_at.get(&port).filter(|&&(t, _)| at >= t).map(|&(_, k)| k)
    }

    /// Serialization time of `bytes` on a link: a multiplication when a byte takes a whole
    /// number of femtoseconds (200 Gb/s: 40,000), else the exact division. The same value
    /// either way; the division would be a visible part of a hop's cost.
    #[inline]
    fn ser(&self, bytes: u32) -> Time {
        match self.fs_per_byte {
            Some(f) => Time(bytes as u64 * f),
            None => serialization(bytes as u64, self.p.link.rate_bps),
        }
    }

    /// A packet reached node `n`.
    fn arrive(&mut self, now: Time, n: u32, r: Pkt, delivered: &mut Vec<(u32, Packet)>) {
        self.stats.delivered += 1;
        self.capture_if(now, self.capture == Some(CapturePoint::Node(n)), r, Direction::Inbound);
        delivered.push((n, self.packets.take(r)));
    }

    /// A packet's last bit will reach input `inport` of switch `sw` at `at`: the switch
    /// captures it then and forwards it after the switching latency. Nothing at the switch
    /// depends on the arrival itself, so it needs no event of its own.
    fn enter_switch(&mut self, at: Time, sw: u32, inport: u32, r: Pkt, out: &mut impl Schedule) {
        let seen = self.capture == Some(CapturePoint::SwitchPort { sw, port: inport });
        self.capture_if(at, seen, r, Direction::Inbound);
        out.at(at + Time(self.p.switch.latency_fs), NetEvent::Forward { sw, inport, pkt: r });
    }

    /// Route a packet through switch `sw` to its output port(s).
    fn forward(&mut self, now: Time, sw: u32, inport: u32, r: Pkt, out: &mut impl Schedule) {
        let choice = self.p.switch.uplink;
        if r.hdr.is_multicast() {
            return self.replicate(now, sw, inport, r, out);
        }
        let j = self.scope.switches.local(sw);
        let (rng, packets) = (&mut self.switch_rng[j], &self.packets);
        match self.wiring.node_of(r.hdr.dst_ip) {
            Some(dst) => {
                let port = self.wiring.out_port(sw, dst, || topology::flow_hash(packets.get(r)), choice, rng);
                let i = self.out_local(sw, j, port);
                self.offer_from(now, port, i, r, Some((sw, inport)), out);
            }
            None => {
                self.stats.drops_no_route += 1;
                self.stats.frames_no_route += u64::from(r.hdr.is_frame());
                let lowest = self.stats.first_no_route.map_or(r.hdr.dst_ip, |ip| ip.min(r.hdr.dst_ip));
                self.stats.first_no_route = Some(lowest);
                self.packets.take(r);
            }
        }
    }

    /// The local index of output `port` of switch `sw` (local index `j`): from the switch's
    /// first port where it is one of its own (all but the host's, past every switch's),
    /// without searching the scope's runs (a search by halves in a partition with more
    /// spines than leaves, as the 1,024-core sort's 16 spines per leaf).
    #[inline]
    fn out_local(&self, sw: u32, j: usize, port: u32) -> usize {
        let k = port.wrapping_sub(self.wiring.switch_port(sw, 0));
        if k < self.wiring.ports_per_switch {
            return self.scope.switch_port(j, k);
        }
        self.scope.ports.local(port)
    }

    /// Offer a copy of multicast packet `r` to each output port leading to members.
    fn replicate(&mut self, now: Time, sw: u32, inport: u32, r: Pkt, out: &mut impl Schedule) {
        let rng = &mut self.switch_rng[self.scope.switches.local(sw)];
        let ports = self.wiring.replicate(sw, inport, self.packets.get(r), self.p.switch.uplink, rng);
        let pkt = self.packets.take(r);
        for k in ports {
            let copy = self.packets.put(pkt.clone());
            self.offer(now, self.wiring.switch_port(sw, k), copy, out);
        }
    }

    /// Does the capture point see packets leaving `port`?
    #[inline(always)]
    fn captures_out(&self, port: u32) -> bool {
        match self.capture {
            Some(CapturePoint::Node(n)) => port == n,
            Some(CapturePoint::SwitchPort { sw, port: k }) => port == self.wiring.switch_port(sw, k),
            None => false,
        }
    }

    /// Capture packet `r` at `now`, going `dir` through the capture point, if `yes`
    /// (inlined: it is asked at every hop, and the answer is nearly always no).
    #[inline(always)]
    fn capture_if(&mut self, now: Time, yes: bool, r: Pkt, dir: Direction) {
        if yes {
            self.capture_now(now, r, dir);
        }
    }

    #[cold]
    fn capture_now(&mut self, now: Time, r: Pkt, dir: Direction) {
        self.captured.push((now, dir, self.packets.get(r).clone()));
    }
}

/// Where a port's link leads: the far end (`Wiring::peer`, which takes divisions) and the
/// partition that handles what arrives there when that is another (`Scope::crosses`). Kept
/// together, a hop reads both with one look-up and one bounds check, from one array where
/// two were read (a 16,384-core fabric's outgrow the host's caches).
#[derive(Clone, Copy, Debug)]
struct Link {
    peer: Peer,
    cross: Option<u32>,
}

/// The links of `scope`'s ports, in its local order.
fn links(w: &Wiring, scope: &Scope) -> Vec<Link> {
    let ports = scope.ports.ids().enumerate();
    ports.map(|(i, g)| Link { peer: w.peer(g), cross: scope.crosses(i) }).collect()
}

/// Port `port`'s header weight: the switches', a node's own port strict (its NIC sends
/// control frames strictly before data: docs/models/node.md, "The port towards the test host").
fn weight_at(w: &Wiring, port: u32, s: &SwitchParams) -> u8 {
    if w.is_uplink(port) {
        0
    } else {
        s.header_weight
    }
}

/// Femtoseconds per byte at `rate_bps`, if whole.
fn fs_per_byte(rate_bps: u64) -> Option<u64> {
    let fs_per_byte_bits = 8 * nanopu_sim::time::FS_PER_S;
    (rate_bps > 0 && fs_per_byte_bits.is_multiple_of(rate_bps)).then(|| fs_per_byte_bits / rate_bps)
}

/// The ports (both directions) of every faulty link, with its fault.
fn fault_ports(w: &Wiring, p: &FabricParams) -> Result<Vec<(u32, usize, LinkFault)>, String> {
    let mut m = Vec::new();
    for (k, f) in p.faults.iter().enumerate() {
        let (a, b) = match (f.link, &p.topology) {
            (LinkId::Node(n), _) if n < w.nodes => (n, w.port_to_node(n)),
            (LinkId::Uplink { leaf, spine }, Topology::LeafSpine { nodes_per_leaf: d, leaves, spines })
                if leaf < *leaves && spine < *spines =>
            {
                (w.switch_port(leaf, d + spine), w.switch_port(leaves + spine, leaf))
            }
            (l, _) => return Err(format!("fabric.faults: link {l:?} does not exist in this topology")),
        };
        m.push((a, k, f.clone()));
        m.push((b, k, f.clone()));
    }
    Ok(m)
}
