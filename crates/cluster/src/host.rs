//! A test host on the node's port: sends messages at given times, records what comes back.

use nanopu_nic::message::{mask_tail, words_for};
use nanopu_nic::Message;
use nanopu_sim::Time;

/// IPv4 address of the test host: 10.0.0.1 (`lnic_boot_msg` reports here).
pub const HOST_IP: u32 = 0x0a00_0001;

/// A message the host sends or received, with its time at the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostMessage {
    /// Send: when its last byte leaves the host. Receive: when its last byte arrives.
    pub time: Time,
    pub msg: Message,
}

/// Decides what to send next when a reply arrives (closed-loop tests).
pub type Responder = Box<dyn FnMut(Time, &Message) -> Vec<(Time, Message)> + Send>;

/// The host: a script of sends, an optional responder, and the log of arrivals.
#[derive(Default)]
pub struct TestHost {
    pub(crate) script: Vec<(Time, Message)>,
    pub(crate) raw_script: Vec<(Time, Vec<u8>)>,
    pub(crate) responder: Option<Responder>,
    pub sent: Vec<HostMessage>,
    pub received: Vec<HostMessage>,
    /// Raw frames the node's NIC dropped as malformed or unsupported: when, and why.
    pub rejected: Vec<(Time, String)>,
    /// Stop the run once this many arrivals passed the filter (see `stop_after`).
    stop: Option<(usize, Filter)>,
}

/// Which arrivals count towards the host's stop condition.
pub type Filter = Box<dyn Fn(&Message) -> bool + Send>;

impl TestHost {
    pub fn new() -> TestHost {
        TestHost::default()
    }

    /// Build a message from the host to `(dst_ip, dst_context)` with a payload of words.
    pub fn message(src_context: u16, dst_ip: u32, dst_context: u16, words: &[u64]) -> Message {
        let len = u16::try_from(words.len() * 8).expect("payload longer than 65535 bytes");
        Self::message_len(src_context, dst_ip, dst_context, len, words)
    }

    /// Like [`TestHost::message`] with an explicit byte length (`words` must hold it).
    pub fn message_len(src_context: u16, dst_ip: u32, dst_context: u16, len: u16, words: &[u64]) -> Message {
        assert_eq!(words.len(), words_for(len), "payload words do not match the length");
        let mut words = words.to_vec();
        mask_tail(&mut words, len);
        Message { src_ip: HOST_IP, src_context, dst_ip, dst_context, len, words, group: None }
    }

    /// Send `msg` so that it starts leaving the host at `at`.
    pub fn send_at(&mut self, at: Time, msg: Message) {
        self.script.push((at, msg));
    }

    /// Send a raw Ethernet frame (built with `nanopu_net::wire`) at `at`. A valid
    /// single-packet DATA frame reaches the node as a message; anything else is dropped by the
    /// NIC and recorded in `rejected` with the reason.
    pub fn send_raw_at(&mut self, at: Time, frame: Vec<u8>) {
        self.raw_script.push((at, frame));
    }

    /// End the run (outcome `HostDone`) once `count` arrivals satisfied `counts`: servers
    /// never exit, and a timer-driven one never goes quiet.
    pub fn stop_after(&mut self, count: usize, counts: impl Fn(&Message) -> bool + Send + 'static) {
        self.stop = Some((count, Box::new(counts)));
    }

    /// Record an arrival towards the stop condition; true once it is met.
    pub(crate) fn count_arrival(&mut self, msg: &Message) -> bool {
        let Some((left, counts)) = self.stop.as_mut() else { return false };
        if counts(msg) {
            *left = left.saturating_sub(1);
        }
        *left == 0
    }

    /// Call `f` on every arrival; what it returns is sent.
    pub fn on_receive(&mut self, f: impl FnMut(Time, &Message) -> Vec<(Time, Message)> + Send + 'static) {
        self.responder = Some(Box::new(f));
    }
}

/// The message a raw frame carries, or why the NIC drops it.
pub fn message_of_frame(frame: &[u8]) -> Result<Message, String> {
    use nanopu_net::wire::packet::payload_to_words;
    use nanopu_net::wire::{Flags, Frame};
    let p = Frame::parse(frame, 1024).map_err(|e| e.to_string())?;
    let t = &p.repr.transport;
    if !t.flags.contains(Flags::DATA) || t.flags.contains(Flags::CHOP) || t.mcast_count != 0 {
        return Err(format!(
            "{} frame: only untrimmed unicast DATA frames reach a node without a network",
            t.flags
        ));
    }
    if t.pkt_offset != 0 || t.msg_len as usize > 1024 {
        return Err("multi-packet message: needs the network transport (cluster runs)".into());
    }
    Ok(Message {
        src_ip: p.repr.ip.src,
        src_context: t.src_context,
        dst_ip: p.repr.ip.dst,
        dst_context: t.dst_context,
        len: t.msg_len,
        words: payload_to_words(p.payload),
        group: None,
    })
}
