//! The test host's end of appnet (sw/include/appnet.h) on either NIC (docs/apps/paper-apps.md
//! "On IceNIC"). The drivers speak messages; to a nanoPU node they go as they are, to an
//! IceNIC node each is one UDP frame laid out as `sw/include/appnet_ice.h` lays it out: the
//! headers of `ice_frame`, six bytes of padding, the words in the cores' (little-endian)
//! byte order, the contexts as UDP ports.

use nanopu_cluster::config::NicKind;
use nanopu_cluster::host::HostMessage;
use nanopu_cluster::net::frame::{udp_ends, udp_frame, Ends, PAYLOAD};
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_nic::Message;
use nanopu_sim::time::serialization;
use nanopu_sim::Time;

/// How often an IceNIC run stops to look for dropped frames (simulated time).
const ICE_SLICE: Time = Time::from_us(20);

/// How finely `HostNet::ready_at` looks for the programs' receive rings (simulated time).
const READY_SLICE: Time = Time::from_ns(100);
/// How long it waits for them before calling the run broken.
const READY_LIMIT: Time = Time::from_us(1000);

/// Zero bytes between the UDP header and the words (appnet_ice.h: the words 8-byte aligned).
pub const PAD: usize = 6;
/// Offset of the first word in a frame.
pub const WORDS: usize = PAYLOAD + PAD;

/// The MAC of the node or host at `ip`: 02:00 and the address (`boot::node_mac`).
pub fn mac_of(ip: u32) -> u64 {
    0x0200_0000_0000 | u64::from(ip)
}

/// The frame carrying `m` between the ends it names.
pub fn frame_of(m: &Message) -> Vec<u8> {
    let end = |ip, port| Ends { mac: mac_of(ip), ip, port };
    let mut payload = vec![0u8; PAD];
    payload.extend(m.words.iter().flat_map(|w| w.to_le_bytes()));
    udp_frame(end(m.src_ip, m.src_context), end(m.dst_ip, m.dst_context), &payload)
}

/// The message a frame carries, or why it is not an appnet frame.
pub fn message_of(f: &[u8]) -> Result<Message, String> {
    let body = f.get(WORDS..).ok_or_else(|| format!("a frame of {} bytes: no room for words", f.len()))?;
    let ends = udp_ends(f).filter(|_| body.len() % 8 == 0 && !body.is_empty());
    let (src, dst) =
        ends.ok_or_else(|| format!("a frame of {} bytes: not IPv4/UDP with whole words", f.len()))?;
    let words: nanopu_nic::message::Words =
        body.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
    let len = u16::try_from(body.len()).map_err(|e| e.to_string())?;
    let (src_ip, dst_ip, src_context, dst_context) = (src.ip, dst.ip, src.port, dst.port);
    Ok(Message { src_ip, src_context, dst_ip, dst_context, len, words, group: None })
}

/// The host's messages through a node's NIC of this kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostNet(pub NicKind);

impl HostNet {
    /// Send `m` from the host at `at`.
    pub fn send_at(self, sim: &mut Simulation, at: Time, m: Message) {
        match self.0 {
            NicKind::Nanopu => sim.host.send_at(at, m),
            NicKind::IceNic | NicKind::Zeronic | NicKind::Rdma => sim.host.send_frame_at(at, frame_of(&m)),
        }
    }

    /// Answer every arrival with what `f` returns (a frame that is no appnet frame is
    /// answered with nothing; `received` reports it).
    pub fn on_receive(
        self,
        sim: &mut Simulation,
        mut f: impl FnMut(Time, &Message) -> Vec<(Time, Message)> + Send + 'static,
    ) {
        match self.0 {
            NicKind::Nanopu => sim.host.on_receive(f),
            NicKind::IceNic | NicKind::Zeronic | NicKind::Rdma => sim.host.on_frame(move |now, frame| {
                let Ok(m) = message_of(frame) else { return vec![] };
                f(now, &m).into_iter().map(|(t, m)| (t, frame_of(&m))).collect()
            }),
        }
    }

    /// Run to the end, checked as `run_checked` does. On IceNIC frames a receive buffer
    /// dropped are the error, found within `ICE_SLICE` of simulated time (the run goes in
    /// slices, as `raft` runs do: the same events in the same order): the programs would
    /// otherwise poll for what never comes until the time limit.
    pub fn run(self, sim: &mut Simulation) -> Result<(), String> {
        if self.0 == NicKind::Nanopu {
            return super::run_checked(sim).map(|_| ());
        }
        let mut until = sim.now();
        loop {
            until += ICE_SLICE;
            sim.set_deadline(until);
            let outcome = sim.run().map_err(|e| e.to_string())?;
            dropped(sim)?;
            if outcome != Outcome::Deadline {
                return super::check_outcome(sim, outcome).map(|_| ());
            }
        }
    }

    /// The first time from `not_before` on at which every IceNIC node's program has posted
    /// its whole receive ring (as many buffers as its NIC's queue depth: the last step of
    /// appnet_init, `sw/include/appnet_ice.h`), the run advanced to it. A host that times
    /// one request from then on times the request, not the programs' start-up (writing 64
    /// send headers and posting 64 receive buffers keeps appnet_init busy until about 4.1 us;
    /// experiments/paper-apps "Othello on IceNIC"). A nanoPU program needs no buffers:
    /// `not_before` itself.
    pub fn ready_at(self, sim: &mut Simulation, not_before: Time) -> Result<Time, String> {
        if self.0 != NicKind::IceNic {
            return Ok(not_before);
        }
        let mut until = sim.now();
        while let Some(i) = sim.nodes.iter().position(|n| n.ice().is_some_and(ring_unposted)) {
            if until >= READY_LIMIT {
                return Err(unready(sim, i));
            }
            until += READY_SLICE; // the deadline, not sim.now(): a core runs to it in one step
            sim.set_deadline(until);
            let outcome = sim.run().map_err(|e| e.to_string())?;
            if outcome != Outcome::Deadline {
                super::check_outcome(sim, outcome)?;
                return Err(format!("the run ended ({}) before every program was ready", outcome.name()));
            }
        }
        Ok(not_before.max(until))
    }

    /// End the run once `count` messages have reached the host. A nanoPU server waiting on
    /// netRX lets the run go quiet by itself; an IceNIC server polls its completion counts
    /// forever, so its runs end here.
    pub fn stop_after(self, sim: &mut Simulation, count: usize) {
        match self.0 {
            NicKind::Nanopu => sim.host.stop_after(count, |_| true),
            NicKind::IceNic | NicKind::Zeronic | NicKind::Rdma => sim.host.stop_after_frames(count),
        }
    }

    /// Frames (IceNIC) or messages (nanoPU) the nodes' NICs sent.
    pub fn sent_by_nodes(self, sim: &Simulation) -> u64 {
        let count = |n: &nanopu_cluster::node::Node| match n.ice() {
            Some(ice) => ice.counters.frames_sent,
            None => n.nic.message_counters().msgs_sent,
        };
        sim.nodes.iter().map(count).sum()
    }

    /// End the run once `count` arrivals satisfied `counts` (on IceNIC, frames carrying such
    /// a message; `TestHost::stop_after`).
    pub fn stop_after_where(
        self,
        sim: &mut Simulation,
        count: usize,
        counts: impl Fn(&Message) -> bool + Send + 'static,
    ) {
        match self.0 {
            NicKind::Nanopu => sim.host.stop_after(count, counts),
            NicKind::IceNic | NicKind::Zeronic | NicKind::Rdma => {
                sim.host.stop_after_frames_where(count, move |f| message_of(f).is_ok_and(|m| counts(&m)))
            }
        }
    }

    /// What the host received since the last take, each when its last byte arrived, and
    /// how many frames were no appnet frame; the logs of what it sent and received are
    /// emptied (long runs fed a window at a time, `loadgen`).
    pub fn take_received(self, sim: &mut Simulation) -> (Vec<HostMessage>, usize) {
        sim.host.sent.clear();
        sim.host.frames_sent.clear();
        let frames = std::mem::take(&mut sim.host.frames_received);
        let mut received = std::mem::take(&mut sim.host.received);
        let (n, before) = (frames.len(), received.len());
        let msg = |h: nanopu_cluster::host::HostFrame| {
            Some(HostMessage { time: h.time, msg: message_of(&h.frame).ok()? })
        };
        received.extend(frames.into_iter().filter_map(msg));
        let strays = n - (received.len() - before);
        (received, strays)
    }

    /// What the host sent, each at the time a message of the nanoPU's is recorded: on one
    /// node when its last byte left (a frame's first byte leaves at its recorded time, and the
    /// host's link was free then in these runs); in a cluster when the host handed it on.
    pub fn sent(self, sim: &Simulation) -> Vec<HostMessage> {
        if self.0 == NicKind::Nanopu {
            return sim.host.sent.clone();
        }
        let rate = if sim.is_cluster() { 0 } else { sim.port().rate_bps };
        let sent = |h: &nanopu_cluster::host::HostFrame| HostMessage {
            time: h.time + if rate == 0 { Time::ZERO } else { serialization(h.frame.len() as u64, rate) },
            msg: message_of(&h.frame).expect("the host sends appnet frames"),
        };
        sim.host.frames_sent.iter().map(sent).collect()
    }

    /// What the host received, each when its last byte arrived; an error names a frame that
    /// is no appnet frame.
    pub fn received(self, sim: &Simulation) -> Result<Vec<HostMessage>, String> {
        if self.0 == NicKind::Nanopu {
            return Ok(sim.host.received.clone());
        }
        let msg = |h: &nanopu_cluster::host::HostFrame| {
            Ok(HostMessage { time: h.time, msg: message_of(&h.frame)? })
        };
        sim.host.frames_received.iter().map(msg).collect()
    }
}

/// Whether an IceNIC's program has yet to post its whole receive ring (`HostNet::ready_at`).
fn ring_unposted(ice: &nanopu_nic::icenic::IceNic) -> bool {
    ice.posted_recvs() < ice.params().queue_depth
}

/// `HostNet::ready_at`'s error: node `i` had not posted its ring by `READY_LIMIT`.
fn unready(sim: &Simulation, i: usize) -> String {
    let ice = sim.nodes[i].ice().expect("an IceNIC node");
    format!(
        "IceNIC node {i} posted {} of its {} receive buffers in {} us: a program built for another \
         ICENIC_QUEUE_DEPTH (docs/models/icenic.md \"Queue and buffer sizes\")?",
        ice.posted_recvs(),
        ice.params().queue_depth,
        READY_LIMIT.as_ns_f64() / 1e3
    )
}

/// Frames the nodes' IceNICs dropped: with a receive buffer full, and of a size refused.
pub(crate) fn drop_counts(sim: &Simulation) -> (u64, u64) {
    let ices = || sim.nodes.iter().filter_map(|n| n.ice()).map(|i| &i.counters);
    (ices().map(|c| c.dropped_full).sum::<u64>(), ices().map(|c| c.dropped_size).sum::<u64>())
}

/// An error if the nodes' IceNICs dropped frames (a receive buffer full, or a size refused).
pub(crate) fn dropped(sim: &Simulation) -> Result<(), String> {
    let (full, size) = drop_counts(sim);
    if full + size == 0 {
        return Ok(());
    }
    Err(format!(
        "the IceNICs dropped {full} frames with a receive buffer full and {size} of a size they \
         refuse (IceNIC has no flow control: docs/models/icenic.md)"
    ))
}
