//! The test host's end of appnet (sw/include/appnet.h) on either NIC (docs/apps/paper-apps.md
//! "On IceNIC"). The drivers speak messages; to a nanoPU node they go as they are, to an
//! IceNIC node each is one UDP frame laid out as `sw/include/appnet_ice.h` lays it out: the
//! headers of `ice_frame`, six bytes of padding, the words in the cores' (little-endian)
//! byte order, the contexts as UDP ports.

use crate::config::NicKind;
use crate::host::HostMessage;
use crate::ice_frame::{udp_frame, Ends, IP, PAYLOAD, UDP};
use crate::Simulation;
use nanopu_nic::Message;
use nanopu_sim::time::serialization;
use nanopu_sim::Time;

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
    if f[12..14] != [8, 0] || f[IP + 9] != 17 || body.len() % 8 != 0 || body.is_empty() {
        return Err(format!("a frame of {} bytes: not IPv4/UDP with whole words", f.len()));
    }
    let be16 = |o: usize| u16::from_be_bytes([f[o], f[o + 1]]);
    let be32 = |o: usize| u32::from_be_bytes([f[o], f[o + 1], f[o + 2], f[o + 3]]);
    let words: Vec<u64> =
        body.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
    let len = u16::try_from(body.len()).map_err(|e| e.to_string())?;
    let (src_ip, dst_ip, src_context, dst_context) = (be32(IP + 12), be32(IP + 16), be16(UDP), be16(UDP + 2));
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
            NicKind::IceNic => sim.host.send_frame_at(at, frame_of(&m)),
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
            NicKind::IceNic => sim.host.on_frame(move |now, frame| {
                let Ok(m) = message_of(frame) else { return vec![] };
                f(now, &m).into_iter().map(|(t, m)| (t, frame_of(&m))).collect()
            }),
        }
    }

    /// Run to the end, checked as `run_checked` does; on IceNIC frames its receive buffer
    /// dropped are the error (the program then waits for what never came, to the time limit).
    pub fn run(self, sim: &mut Simulation) -> Result<(), String> {
        let r = super::run_checked(sim).map(|_| ());
        if self.0 == NicKind::IceNic {
            dropped(sim)?;
        }
        r
    }

    /// End the run once `count` messages have reached the host. A nanoPU server waiting on
    /// netRX lets the run go quiet by itself; an IceNIC server polls its completion counts
    /// forever, so its runs end here.
    pub fn stop_after(self, sim: &mut Simulation, count: usize) {
        if self.0 == NicKind::IceNic {
            sim.host.stop_after_frames(count);
        }
    }

    /// What the host sent, each when its last byte left (a frame's first byte leaves at its
    /// recorded time, and the host's link was free then in these runs).
    pub fn sent(self, sim: &Simulation) -> Vec<HostMessage> {
        if self.0 == NicKind::Nanopu {
            return sim.host.sent.clone();
        }
        let rate = sim.link.port.rate_bps;
        let sent = |h: &crate::ice::HostFrame| HostMessage {
            time: h.time + serialization(h.frame.len() as u64, rate),
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
        let msg = |h: &crate::ice::HostFrame| Ok(HostMessage { time: h.time, msg: message_of(&h.frame)? });
        sim.host.frames_received.iter().map(msg).collect()
    }
}

/// An error if node 0's IceNIC dropped frames (its receive buffer full, or a size it refuses).
fn dropped(sim: &Simulation) -> Result<(), String> {
    let c = &sim.nodes[0].ice().ok_or("not an IceNIC node")?.counters;
    if c.dropped_full + c.dropped_size == 0 {
        return Ok(());
    }
    Err(format!(
        "the IceNIC dropped {} frames with its receive buffer full and {} of a size it refuses \
         (it has no flow control: docs/models/icenic.md)",
        c.dropped_full, c.dropped_size
    ))
}
