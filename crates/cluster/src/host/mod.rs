//! A test host on the node's port: sends messages at given times, records what comes back.

use nanopu_nic::message::{mask_tail, words_for, Words};
use nanopu_nic::Message;
use nanopu_sim::Time;

mod frame;
pub use frame::{message_of_frame, HostFrame};

/// IPv4 address of the test host: 10.0.0.1 (`lnic_boot_msg` reports here).
pub use nanopu_sim::packet::HOST_IP;

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
    /// Scripted replies, tried in order; the first that matches an arrival answers it.
    rules: Vec<Rule>,
    pub sent: Vec<HostMessage>,
    pub received: Vec<HostMessage>,
    /// Raw frames the node's NIC dropped as malformed or unsupported: when, and why.
    pub rejected: Vec<(Time, String)>,
    /// Stop the run once this many arrivals passed the filter (see `stop_after`).
    stop: Option<(usize, Filter)>,
    /// Raw Ethernet frames to an IceNIC node (docs/models/icenic.md): the script, an
    /// optional responder, what was sent and received, and a count to stop after.
    pub(crate) frame_script: Vec<(Time, Vec<u8>)>,
    frame_responder: Option<FrameResponder>,
    pub frames_sent: Vec<HostFrame>,
    pub frames_received: Vec<HostFrame>,
    frame_stop: Option<(usize, FrameFilter)>,
    /// Seeded loss of IceNIC frames on the host's link, both ways (`lose_frames`).
    frame_loss: Option<(f64, nanopu_sim::Rng)>,
    /// Frames lost that way: towards the node, towards the host.
    pub frames_lost: [u64; 2],
    /// Seeded reordering of IceNIC frames on the host's link (`reorder_frames`).
    frame_reorder: Option<Reorder>,
    /// Frames held back that way: towards the node, towards the host.
    pub frames_delayed: [u64; 2],
    /// Messages from a single node addressed to neither the test host nor the node: dropped.
    pub not_for_host: NotForHost,
    /// A single node's host takes every message, whatever its address, as the prototype's
    /// tester sniffs the node's port (`nanopu run --host-sniffs`). Default false.
    pub sniffs: bool,
    /// Messages of a single node to its own IP that the host's end of the link sent back
    /// to it, as the prototype's switch did (`engine/link.rs`, `host_arrive`).
    pub routed_back: u64,
    /// Messages and frames the host sent in all (the logs `sent` and `frames_sent` may be
    /// emptied during a run; this is not): a run it sent nothing was served nothing.
    pub(crate) sends: u64,
}

/// Messages that reached the test host addressed to another IP. The host takes only what
/// is addressed to it (10.0.0.1), as a real NIC would; on one node there is no network to
/// route the rest, so they are dropped, as a cluster's fabric drops them for want of a
/// route, and the run's judgement reports them (`report::judge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotForHost {
    pub messages: u64,
    /// The lowest destination among them.
    pub lowest_ip: Option<u32>,
}

impl TestHost {
    /// Whether the host sent the run anything (a message or a frame).
    pub fn sent_anything(&self) -> bool {
        self.sends > 0
    }
}

impl NotForHost {
    pub(crate) fn add(&mut self, ip: u32) {
        self.messages += 1;
        self.lowest_ip = Some(self.lowest_ip.map_or(ip, |l| l.min(ip)));
    }
}

/// How frames on the host's link are reordered (`TestHost::reorder_frames`).
struct Reorder {
    prob: f64,
    max_delay: Time,
    rng: nanopu_sim::Rng,
}

/// Which frames count towards the host's frame stop condition.
pub type FrameFilter = Box<dyn Fn(&[u8]) -> bool + Send>;

/// Decides which frames to send next when a frame arrives from an IceNIC node.
pub type FrameResponder = Box<dyn FnMut(Time, &[u8]) -> Vec<(Time, Vec<u8>)> + Send>;

/// A scripted reply (the prototype's testers answered e.g. a map message with a reduce
/// message): which arrivals it answers, and the words of its answer.
pub struct Rule {
    /// Answer only messages from this source context (any if None).
    pub src_context: Option<u16>,
    /// Answer only messages to this host context (any if None).
    pub dst_context: Option<u16>,
    /// Answer only messages whose first payload word is this (any if None).
    pub first_word: Option<u64>,
    /// How long after the arrival the answer starts leaving the host.
    pub delay: Time,
    /// The context the answer goes to (None: the arrival's source context).
    pub reply_context: Option<u16>,
    /// The answer's payload from the arrival's payload words (at least one word).
    pub words: ReplyWords,
}

/// Computes a scripted reply's payload from the payload that arrived.
pub type ReplyWords = Box<dyn Fn(&[u64]) -> Vec<u64> + Send>;

impl Rule {
    /// A rule answering every arrival with `words(received)` at once, to its sender.
    pub fn new(words: impl Fn(&[u64]) -> Vec<u64> + Send + 'static) -> Rule {
        let words = Box::new(words);
        Rule {
            src_context: None,
            dst_context: None,
            first_word: None,
            delay: Time::ZERO,
            reply_context: None,
            words,
        }
    }

    fn matches(&self, m: &Message) -> bool {
        let is = |want: Option<u64>, got: u64| want.is_none_or(|w| w == got);
        is(self.src_context.map(u64::from), m.src_context.into())
            && is(self.dst_context.map(u64::from), m.dst_context.into())
            && self.first_word.is_none_or(|w| m.words.first() == Some(&w))
    }

    /// The answer to `m`, arrived at `now`: from the context it was sent to, back to its
    /// sender's address.
    fn answer(&self, now: Time, m: &Message) -> (Time, Message) {
        let words = (self.words)(&m.words);
        let to = self.reply_context.unwrap_or(m.src_context);
        (now + self.delay, TestHost::message(m.dst_context, m.src_ip, to, &words))
    }
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
        let mut words: Words = words.into();
        mask_tail(Words::get_mut(&mut words).expect("new words are their own"), len);
        Message { src_ip: HOST_IP, src_context, dst_ip, dst_context, len, words, group: None }
    }

    /// Send `msg` so that it starts leaving the host at `at`.
    pub fn send_at(&mut self, at: Time, msg: Message) {
        self.script.push((at, msg));
    }

    /// Send a raw Ethernet frame (built with `nanopu_net::wire`) at `at`. A valid
    /// single-packet DATA frame reaches the node as a message; anything else is dropped by the
    /// NIC and recorded in `rejected` with the reason. An IceNIC node takes the frame as it
    /// is, as [`TestHost::send_frame_at`].
    pub fn send_raw_at(&mut self, at: Time, frame: Vec<u8>) {
        self.raw_script.push((at, frame));
    }

    /// End the run (outcome `HostDone`) once `count` arrivals satisfied `counts`: servers
    /// never exit, and a timer-driven one never goes quiet.
    pub fn stop_after(&mut self, count: usize, counts: impl Fn(&Message) -> bool + Send + 'static) {
        self.stop = Some((count, Box::new(counts)));
    }

    /// Send a raw Ethernet frame to the IceNIC of node 0 at `at` (its first byte leaves
    /// then).
    pub fn send_frame_at(&mut self, at: Time, frame: Vec<u8>) {
        self.frame_script.push((at, frame));
    }

    /// Answer each frame that arrives with the frames `f` returns (closed-loop tests). An
    /// empty frame that `f` returns is a timer, never sent: at its time `f` is called with
    /// an empty frame (protocols with timeouts, `nanopu_harness::clients::erpc`).
    pub fn on_frame(&mut self, f: impl FnMut(Time, &[u8]) -> Vec<(Time, Vec<u8>)> + Send + 'static) {
        self.frame_responder = Some(Box::new(f));
    }

    /// Answer nothing more, messages or frames (a driver takes back what its responder
    /// shared).
    pub fn clear_responders(&mut self) {
        self.responder = None;
        self.frame_responder = None;
    }

    /// Lose each IceNIC frame on the host's link with probability `prob`, in both
    /// directions, drawn from a generator seeded with `seed` in event order (so the same
    /// seed loses the same frames). A frame lost towards the node still occupies the link;
    /// one lost towards the host never reaches the responder. Counted in `frames_lost`.
    pub fn lose_frames(&mut self, prob: f64, seed: u64) {
        self.frame_loss = Some((prob, nanopu_sim::Rng::stream(seed, 0x1ce_105e)));
    }

    /// Reorder IceNIC frames on the host's link, both ways: each frame is held back, with
    /// probability `prob`, by a delay drawn uniformly from `(0, max_delay]`, so frames sent
    /// after it overtake it (as through a switch with several paths). The link itself is
    /// occupied as before; only the arrival moves. Drawn from a generator seeded with
    /// `seed` in event order (the same seed delays the same frames). Counted in
    /// `frames_delayed`.
    pub fn reorder_frames(&mut self, prob: f64, max_delay: Time, seed: u64) {
        let rng = nanopu_sim::Rng::stream(seed, 0x1ce_3e0d);
        self.frame_reorder = Some(Reorder { prob, max_delay, rng });
    }

    /// The extra delay of the next frame on the link (direction as in `frame_lost`).
    pub(crate) fn frame_delay(&mut self, dir: usize) -> Time {
        let Some(r) = self.frame_reorder.as_mut() else { return Time::ZERO };
        if r.rng.next_f64() >= r.prob {
            return Time::ZERO;
        }
        self.frames_delayed[dir] += 1;
        Time(1 + r.rng.below(r.max_delay.as_fs().max(1)))
    }

    /// Is the next frame on the link lost (direction 0 towards the node, 1 towards the host)?
    pub(crate) fn frame_lost(&mut self, dir: usize) -> bool {
        let Some((p, rng)) = self.frame_loss.as_mut() else { return false };
        let lost = rng.next_f64() < *p;
        self.frames_lost[dir] += lost as u64;
        lost
    }

    /// End the run once `count` frames have arrived.
    pub fn stop_after_frames(&mut self, count: usize) {
        self.stop_after_frames_where(count, |_| true);
    }

    /// End the run once `count` arriving frames satisfied `counts` (counted as they arrive,
    /// so emptying `frames_received` between runs changes nothing).
    pub fn stop_after_frames_where(&mut self, count: usize, counts: impl Fn(&[u8]) -> bool + Send + 'static) {
        self.frame_stop = Some((count, Box::new(counts)));
    }

    /// Frames to send in answer to `frame`, and whether the stop count is met.
    pub(crate) fn frame_arrived(&mut self, now: Time, frame: &[u8]) -> (Vec<(Time, Vec<u8>)>, bool) {
        let replies = self.frame_responder.as_mut().map(|f| f(now, frame)).unwrap_or_default();
        let done = match self.frame_stop.as_mut() {
            Some((left, counts)) if !frame.is_empty() => {
                *left = left.saturating_sub(usize::from(counts(frame)));
                *left == 0
            }
            _ => false,
        };
        (replies, done)
    }

    /// Record an arrival towards the stop condition; true once it is met.
    pub(crate) fn count_arrival(&mut self, msg: &Message) -> bool {
        let Some((left, counts)) = self.stop.as_mut() else { return false };
        if counts(msg) {
            *left = left.saturating_sub(1);
        }
        *left == 0
    }

    /// Answer arrivals that `rule` matches (the first matching rule answers; a responder set
    /// with `on_receive` sees every arrival as well).
    pub fn reply_with(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// The scripted answer to an arrival, if a rule matches it.
    pub(crate) fn scripted(&self, now: Time, m: &Message) -> Option<(Time, Message)> {
        self.rules.iter().find(|r| r.matches(m)).map(|r| r.answer(now, m))
    }

    /// Call `f` on every arrival; what it returns is sent.
    pub fn on_receive(&mut self, f: impl FnMut(Time, &Message) -> Vec<(Time, Message)> + Send + 'static) {
        self.responder = Some(Box::new(f));
    }
}
