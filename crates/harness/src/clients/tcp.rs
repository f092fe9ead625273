//! The test host's end of a TCP connection to `sw/apps/tcp_bulk.c` (the C TCP of `sw/tcp`,
//! docs/apps/tcp.md): an independent, well-kept TCP, the `smoltcp` crate, driving the
//! host's side of an IceNIC node's link, so that the C TCP is checked against a TCP it was
//! not written with.
//!
//! The peer is a state machine driven by the host's frame responder
//! ([`nanopu_cluster::TestHost::on_frame`]): each call hands it the simulated time and a
//! frame (or an empty frame: a timer it asked for); it feeds the frame to smoltcp, polls
//! smoltcp's interface at that time, moves the application's bytes, and returns the frames
//! smoltcp sent and a timer for when smoltcp next wants to be polled. smoltcp runs over an
//! IP medium; the peer adds and strips the Ethernet header (static addresses, as every
//! IceNIC program's: a node's MAC is 02:00 and its IPv4 address), so no ARP is needed.
//!
//! Both directions carry a known byte pattern ([`pattern`], the same as tcp_bulk.c's): the
//! peer checks every byte it receives, in order, and the C program checks what the peer
//! sends, so a byte lost, duplicated or reordered by either TCP is caught.

use nanopu_cluster::node::boot::{node_ip, node_mac};
use nanopu_sim::packet::HOST_IP;
use nanopu_sim::Time;
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr, Ipv4Address};
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

/// Byte `i` of the stream from the listening end (`dir` 0) or from the connecting end (`dir`
/// 1): tcp_bulk.c's `tcp_pattern`. Neighbouring segments differ, so a reordered one is caught.
pub fn pattern(dir: u32, i: u64) -> u8 {
    ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8 ^ (i >> 32) as u8 ^ (dir * 0x5a) as u8
}

/// Which side opens the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opener {
    /// The host connects; the node runs `tcp_bulk listen PORT ...`.
    Host,
    /// The node connects (`tcp_bulk connect:167772161 PORT ...`); the host listens.
    Node,
}

/// What the peer does.
#[derive(Clone, Debug)]
pub struct Params {
    /// The node at the other end (0 on a single node).
    pub node: u32,
    pub port: u16,
    pub opener: Opener,
    /// Bytes the host sends to the node, and expects from it.
    pub to_node: u64,
    pub from_node: u64,
    /// smoltcp's socket buffers (its receive window, and the window scale it offers).
    pub buffer: usize,
    /// How long after its last byte the host sends its FIN (0: with it).
    pub linger: Time,
}

/// The smoltcp side's record of the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Bytes received in order and checked, and bytes sent.
    pub received: u64,
    pub sent: u64,
    /// The node's FIN arrived after all its bytes (the end of its stream).
    pub eof: bool,
    /// The first byte that was not the pattern's: its offset and value.
    pub first_wrong: Option<(u64, u8)>,
    /// Frames taken from and given to the link.
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames on the link that were not IPv4 (smoltcp would not see them).
    pub not_ipv4: u64,
    /// When the last byte from the node arrived.
    pub last_byte_at: Time,
}

/// A smoltcp interface and one TCP socket, over frames exchanged with the simulator.
pub struct Peer {
    p: Params,
    iface: Interface,
    sockets: SocketSet<'static>,
    handle: SocketHandle,
    link: Link,
    opened: bool,
    established: bool,
    closed: bool,
    /// When the host's last byte was queued: its FIN follows `linger` later.
    all_sent_at: Option<Time>,
    timers: BTreeSet<Time>,
    pub outcome: Outcome,
}

/// The device smoltcp polls: IP packets in from the link, IP packets out to it.
#[derive(Default)]
struct Link {
    rx: VecDeque<Vec<u8>>,
    tx: Vec<Vec<u8>>,
}

/// The IPv4 MTU of the link (IceNIC's frames: docs/models/icenic.md).
const MTU: usize = 1500;
const ETH_HEADER: usize = 14;

impl Device for Link {
    type RxToken<'a> = Rx;
    type TxToken<'a> = Tx<'a>;

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = MTU;
        caps
    }

    fn receive(&mut self, _: Instant) -> Option<(Rx, Tx<'_>)> {
        let packet = self.rx.pop_front()?;
        Some((Rx(packet), Tx(&mut self.tx)))
    }

    fn transmit(&mut self, _: Instant) -> Option<Tx<'_>> {
        Some(Tx(&mut self.tx))
    }
}

struct Rx(Vec<u8>);
struct Tx<'a>(&'a mut Vec<Vec<u8>>);

impl phy::RxToken for Rx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut packet = vec![0u8; len];
        let r = f(&mut packet);
        self.0.push(packet);
        r
    }
}

/// Simulated time as smoltcp's (microseconds), rounded down.
fn instant(t: Time) -> Instant {
    Instant::from_micros((t.as_fs() / Time::from_us(1).as_fs()) as i64)
}

/// smoltcp's time as simulated time.
fn time(i: Instant) -> Time {
    Time::from_us(i.total_micros().max(0) as u64)
}

fn ipv4(ip: u32) -> Ipv4Address {
    Ipv4Address::from_bits(ip)
}

impl Peer {
    pub fn new(p: Params) -> Peer {
        let mut link = Link::default();
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = 0x7c9_5eed; // any fixed seed: runs repeat
        let mut iface = Interface::new(config, &mut link, Instant::ZERO);
        iface.update_ip_addrs(|a| {
            a.push(IpCidr::new(IpAddress::Ipv4(ipv4(HOST_IP)), 24)).expect("one address")
        });
        let buf = || tcp::SocketBuffer::new(vec![0u8; p.buffer]);
        let mut socket = tcp::Socket::new(buf(), buf());
        // Every segment acknowledged at once and sent at once: the host is the reference
        // end, and its own timers should not be what a test measures.
        socket.set_ack_delay(None);
        socket.set_nagle_enabled(false);
        // smoltcp's default is no congestion control at all: a whole window at once.
        socket.set_congestion_control(tcp::CongestionControl::Reno);
        let mut sockets = SocketSet::new(Vec::new());
        let handle = sockets.add(socket);
        Peer {
            p,
            iface,
            sockets,
            handle,
            link,
            opened: false,
            established: false,
            closed: false,
            all_sent_at: None,
            timers: BTreeSet::new(),
            outcome: Outcome::default(),
        }
    }

    /// Share the peer with `host`'s frame responder; it opens at `start`.
    pub fn attach(self, host: &mut nanopu_cluster::TestHost, start: Time) -> Arc<Mutex<Peer>> {
        let peer = Arc::new(Mutex::new(self));
        let h = peer.clone();
        host.on_frame(move |now, f| h.lock().expect("peer lock").event(now, f));
        host.send_frame_at(start, Vec::new()); // a timer: the peer opens then
        peer
    }

    /// The socket's TCP state, e.g. for a test's message.
    pub fn state(&self) -> tcp::State {
        self.sockets.get::<tcp::Socket>(self.handle).state()
    }

    /// A frame arrived (or, empty, a timer fired): the frames to send and the next timer.
    pub fn event(&mut self, now: Time, frame: &[u8]) -> Vec<(Time, Vec<u8>)> {
        if frame.is_empty() {
            self.timers.retain(|&t| t > now);
        } else {
            self.take(frame);
        }
        if !self.opened {
            self.open();
        }
        // smoltcp sends at most one segment per socket and poll: poll until it sends no
        // more and the application moves no more bytes.
        loop {
            let before = self.link.tx.len();
            self.iface.poll(instant(now), &mut self.link, &mut self.sockets);
            if !self.app(now) && self.link.tx.len() == before {
                break;
            }
        }
        let node = self.p.node;
        let mut out: Vec<_> = self.link.tx.drain(..).map(|p| (now, ethernet(node, &p))).collect();
        self.outcome.frames_out += out.len() as u64;
        self.arm(now, &mut out);
        out
    }

    fn take(&mut self, frame: &[u8]) {
        self.outcome.frames_in += 1;
        if frame.len() <= ETH_HEADER || frame[12..14] != [0x08, 0x00] {
            self.outcome.not_ipv4 += 1;
            return;
        }
        self.link.rx.push_back(frame[ETH_HEADER..].to_vec());
    }

    fn open(&mut self) {
        self.opened = true;
        let (port, node) = (self.p.port, IpAddress::Ipv4(ipv4(node_ip(self.p.node))));
        let socket = self.sockets.get_mut::<tcp::Socket>(self.handle);
        match self.p.opener {
            Opener::Host => {
                socket.connect(self.iface.context(), (node, port), 40_000).expect("a fresh socket connects")
            }
            Opener::Node => socket.listen(port).expect("a fresh socket listens"),
        }
    }

    /// Move the application's bytes; true if anything moved (smoltcp is polled again).
    fn app(&mut self, now: Time) -> bool {
        let socket = self.sockets.get_mut::<tcp::Socket>(self.handle);
        self.established |= socket.state() == tcp::State::Established;
        let mut moved = false;
        let o = &mut self.outcome;
        let dir = u32::from(self.p.opener == Opener::Host); // what we send; we check the other
        if socket.can_send() && o.sent < self.p.to_node {
            let left = self.p.to_node - o.sent;
            let n = socket
                .send(|buf| {
                    let n = buf.len().min(left as usize);
                    buf[..n].iter_mut().enumerate().for_each(|(i, b)| *b = pattern(dir, o.sent + i as u64));
                    (n, n)
                })
                .expect("an open socket takes bytes");
            o.sent += n as u64;
            moved |= n > 0;
        }
        if o.sent == self.p.to_node && self.established && self.all_sent_at.is_none() {
            self.all_sent_at = Some(now);
        }
        if !self.closed && self.all_sent_at.is_some_and(|t| now >= t + self.p.linger) {
            socket.close(); // our FIN, after the bytes
            self.closed = true;
            moved = true;
        }
        if socket.can_recv() {
            let n =
                socket.recv(|buf| (buf.len(), check(o, 1 - dir, buf))).expect("an open socket gives bytes");
            o.last_byte_at = now;
            moved |= n > 0;
        }
        o.eof =
            self.established && !socket.may_recv() && !socket.can_recv() && o.received == self.p.from_node;
        moved
    }

    /// Ask for a call when smoltcp next wants to be polled, unless a timer already pending
    /// comes first. smoltcp's clock counts microseconds: a poll it wants "now" is made a
    /// microsecond later, so that the host never spins at one instant.
    fn arm(&mut self, now: Time, out: &mut Vec<(Time, Vec<u8>)>) {
        let fin_at = self.all_sent_at.filter(|_| !self.closed).map(|t| t + self.p.linger);
        let poll_at = self.iface.poll_at(instant(now), &self.sockets).map(time);
        let Some(t) = [fin_at, poll_at].into_iter().flatten().min() else { return };
        let t = t.max(now + Time::from_us(1));
        if self.timers.range(..=t).next().is_none() {
            self.timers.insert(t);
            out.push((t, Vec::new()));
        }
    }
}

/// An IP packet from smoltcp as an Ethernet frame from the host to `node`.
fn ethernet(node: u32, packet: &[u8]) -> Vec<u8> {
    let mac = |m: u64| m.to_be_bytes()[2..].to_vec();
    let host_mac = 0x0200_0000_0000 | u64::from(HOST_IP);
    [mac(node_mac(node)), mac(host_mac), vec![0x08, 0x00], packet.to_vec()].concat()
}

/// Check bytes from the node against pattern `dir`, in order; how many were taken.
fn check(o: &mut Outcome, dir: u32, buf: &[u8]) -> usize {
    for (i, &b) in buf.iter().enumerate() {
        let at = o.received + i as u64;
        if o.first_wrong.is_none() && b != pattern(dir, at) {
            o.first_wrong = Some((at, b));
        }
    }
    o.received += buf.len() as u64;
    buf.len()
}
