//! Per-core state inside the NIC: thread contexts with their local RX queues, the TX
//! assembler and the scheduler registers (docs/platform.md section 2).

mod rxq;
pub mod sched;

pub use rxq::RxQueue;

use crate::message::{mask_tail, words_for, AppHeader, Message};
use crate::transport::segment::is_multicast_ip;
use std::collections::VecDeque;

/// Give back what a drained queue holds beyond `keep` entries: the NIC's queues fill in
/// bursts and would otherwise keep the room of their busiest moment for the whole run
/// (`nic::KEEP`, `rxq::KEEP`).
pub(crate) fn give_back<T>(q: &mut VecDeque<T>, keep: usize) {
    if q.capacity() > keep {
        q.shrink_to(keep);
    }
}

/// One registered thread context on a core.
#[derive(Clone, Debug)]
pub struct Context {
    pub id: u16,
    /// Current priority: the registered one, or 1 once demoted (see `sched`).
    pub priority: u8,
    /// Words delivered to this context, each readable from its cycle.
    pub rxq: RxQueue,
    /// Messages delivered and not yet reported done, oldest first: (arrival sequence number,
    /// cycle its header is readable). JBSQ counts them; the scheduler breaks priority ties
    /// by the oldest head.
    pub outstanding: VecDeque<(u64, u64)>,
    /// Cycle from which the head message has been this context's to process.
    pub head_since: u64,
    /// Set by `lnic_idle` when its local queue is empty, cleared by the next delivery.
    pub idle: bool,
    /// Switched in (an `lcurcontext` write naming it) since it was registered.
    pub ran: bool,
    /// Its thread waits for a message: the core parked on netRX (in `lnic_wait()` or a read)
    /// while it was the running context, and nothing was delivered to it since. Switched back
    /// in, it would only wait again, so the idle timeout stops while every context waits
    /// (see `sched`).
    pub waiting: bool,
    /// The message this context is writing to netTX: a thread switched out in the middle of
    /// a message resumes it later (the queues are per context, docs/platform.md section 2).
    pub tx: TxAssembler,
}

impl Context {
    pub fn new(id: u16, priority: u8) -> Context {
        Context {
            id,
            priority,
            rxq: RxQueue::default(),
            outstanding: VecDeque::new(),
            head_since: 0,
            idle: false,
            ran: false,
            waiting: false,
            tx: TxAssembler::default(),
        }
    }
    /// Switched in once and now out, with work left: not waiting for a message. With the
    /// core unable to take the NIC's interrupt it never comes back (reported as stuck).
    pub fn stranded(&self, cur_context: u16) -> bool {
        self.ran && !self.waiting && self.id != cur_context
    }
    /// Active while it holds or processes a message and has not declared itself idle.
    pub fn active(&self) -> bool {
        !self.outstanding.is_empty() && !self.idle
    }
    /// Arrival sequence number of the head message.
    pub fn head_seq(&self) -> Option<u64> {
        self.outstanding.front().map(|&(seq, _)| seq)
    }
    /// Are the first `n` queued words readable at `now`? The words' cycles never decrease
    /// along the queue (`Nic::deliver` starts a message after the previous one's last
    /// word), so the `n`-th word alone answers: one look where a walk over the queue was
    /// made at every netRX read and `lmsgsrdy`.
    #[inline]
    pub fn ready(&self, now: u64, n: usize) -> bool {
        n == 0 || self.ready_at(n).is_some_and(|t| t <= now)
    }
    /// The cycle at which the `n`-th queued word (1-based) becomes readable, if queued.
    #[inline]
    pub fn ready_at(&self, n: usize) -> Option<u64> {
        self.rxq.ready_at(n)
    }
}

/// A message being written to netTX word by word.
#[derive(Clone, Debug, Default)]
pub struct TxAssembler {
    pending: Option<(AppHeader, u16)>,
    /// Multicast: `None` until the group word following the header has been written.
    group: Option<(u32, u32)>,
    /// Payload words of the pending message once its header (and a multicast's group
    /// word) are in, else 0: a payload word, most of what is written, then costs a push
    /// and a compare.
    payload: usize,
    words: Vec<u64>,
}

/// Why a netTX word was refused.
pub type TxError = String;

impl TxAssembler {
    /// Push one word. Returns the finished message when this was its last word (the tests'
    /// shorthand for `push_word` then `take`, which the NIC calls apart).
    #[cfg(test)]
    pub fn push(&mut self, word: u64, src: (u32, u16), max_len: u32) -> Result<Option<Message>, TxError> {
        Ok(self.push_word(word, src.1, max_len)?.then(|| self.take(src.0)))
    }
    /// Push one word; `true` when it was the message's last (`take` it then).
    #[inline]
    pub fn push_word(&mut self, word: u64, src_context: u16, max_len: u32) -> Result<bool, TxError> {
        if self.payload == 0 {
            return self.head_word(word, src_context, max_len).map(|()| false);
        }
        self.words.push(word);
        Ok(self.words.len() == self.payload)
    }
    /// A header, or the group word after a multicast header (pending, its payload not
    /// yet begun).
    fn head_word(&mut self, word: u64, src_context: u16, max_len: u32) -> Result<(), TxError> {
        match self.pending {
            None => self.start(word, src_context, max_len),
            Some(_) => self.set_group(word),
        }
    }
    /// The word after a multicast header names the group: first node (bits 63..32) and
    /// number of nodes (bits 31..0) of a contiguous range (docs/models/network.md).
    fn set_group(&mut self, word: u64) -> Result<(), TxError> {
        let (first, count) = ((word >> 32) as u32, word as u32);
        if count == 0 {
            self.pending = None;
            return Err(format!("netTX multicast group word {word:#018x}: the group has no nodes"));
        }
        self.group = Some((first, count));
        self.payload = self.pending.map_or(0, |(h, _)| words_for(h.len));
        Ok(())
    }
    fn start(&mut self, word: u64, src_context: u16, max_len: u32) -> Result<(), TxError> {
        let h = AppHeader::from_word(word);
        if h.len == 0 {
            return Err(format!(
                "netTX header {word:#018x}: message length 0 is invalid (docs/platform.md section 2)"
            ));
        }
        if h.len as u32 > max_len {
            return Err(too_long(word, h.len, max_len));
        }
        self.pending = Some((h, src_context));
        if !is_multicast_ip(h.ip) {
            self.payload = words_for(h.len);
        }
        // The words go with the message to the transport and stay until it is acknowledged:
        // room for exactly them, not a doubling vector's up to twice as much.
        self.words.reserve_exact(words_for(h.len));
        Ok(())
    }
    /// The finished message (after `push_word` said so).
    pub fn take(&mut self, src_ip: u32) -> Message {
        let (h, src_context) = self.pending.take().expect("a finished message");
        self.payload = 0;
        let mut words = std::mem::take(&mut self.words);
        mask_tail(&mut words, h.len);
        let (dst_ip, dst_context, len) = (h.ip, h.context, h.len);
        let group = self.group.take();
        // The one copy of the words on their way (`Words`): exactly their room, shared from
        // here to the receiving core.
        Message { src_ip, src_context, dst_ip, dst_context, len, words: words.into(), group }
    }
    /// Words written so far of an unfinished message, header (and group word) included.
    pub fn partial_words(&self) -> usize {
        self.pending.map_or(0, |_| 1 + self.group.is_some() as usize + self.words.len())
    }
}

/// What one core handed the NIC to send: finished messages (a multicast is one) and their
/// payload bytes (the header's length). Kept by the model out of band, as FireSim's
/// out-of-band counters are read from outside the target, so counting costs the program
/// nothing (the sort harness reports these, docs/sort-harness.md "Figures").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxCounts {
    pub msgs: u64,
    pub bytes: u64,
}

/// NIC-side state of one core.
#[derive(Clone, Debug)]
pub struct CoreIf {
    /// The running context: the low 16 bits of `lcurcontext` (`LNIC_CONTEXT_BITS`).
    pub cur_context: u16,
    /// The running context's priority: the low 8 bits of `lcurpriority`
    /// (`LNIC_PRIORITY_BITS`), or the NIC's demotion (see `sched`).
    pub cur_priority: u8,
    /// What software wrote to `lcurcontext` and `lcurpriority`. In the prototype both are
    /// XLEN-wide registers that read back every bit written, while the thread scheduler's
    /// ports are 16 and 8 bits wide (l-nic/rocket-chip, branch lnic-dev: `reg_lcurcontext`
    /// in `rocket/CSR.scala`; `LNICRxQueuesIO.cur_context/cur_priority` and
    /// `LNICRocketConsts` in `rocket/LNICQueues.scala` and `rocket/LNICUtils.scala`).
    csr_written: [u64; 2],
    pub contexts: Vec<Context>,
    /// netTX assembly while the current context is not registered (a program that never
    /// registers one, or the nanokernel between threads).
    pub tx: TxAssembler,
    /// Words of finished messages still in the TX queue (not yet taken by the NIC).
    pub tx_queued: usize,
    /// Words of unfinished messages in the TX queue, over all assemblers
    /// (`tx_partial_words`), kept as words come (`tx_word`): asked at every netTX write,
    /// the sum over the contexts was a fifth of the write's host instructions.
    tx_partial: usize,
    /// Messages and payload bytes this core sent.
    pub sent: TxCounts,
    pub msg_cycles: u64,
    pub idle_cycles: u64,
    /// Level of the interrupt line into this core.
    pub irq: bool,
    /// The core is parked reading an empty netRX.
    pub waiting_rx: bool,
    pub sched: crate::core_if::sched::SchedState,
}

impl CoreIf {
    pub fn new(msg_cycles: u64, idle_cycles: u64) -> CoreIf {
        CoreIf {
            cur_context: 0,
            cur_priority: 0,
            csr_written: [0; 2],
            contexts: Vec::new(),
            tx: TxAssembler::default(),
            tx_queued: 0,
            tx_partial: 0,
            sent: TxCounts::default(),
            msg_cycles,
            idle_cycles,
            irq: false,
            waiting_rx: false,
            sched: Default::default(),
        }
    }
    /// `lcurcontext` written: the scheduler keeps the low 16 bits.
    pub fn set_lcurcontext(&mut self, v: u64) {
        self.csr_written[0] = v;
        self.cur_context = v as u16;
    }
    /// `lcurpriority` written: the scheduler keeps the low 8 bits.
    pub fn set_lcurpriority(&mut self, v: u64) {
        self.csr_written[1] = v;
        self.cur_priority = v as u8;
    }
    /// `lcurcontext` as read: the bits written above the scheduler's 16.
    pub fn lcurcontext(&self) -> u64 {
        self.csr_written[0] & !0xffff | self.cur_context as u64
    }
    /// `lcurpriority` as read: the bits written above the scheduler's 8, and the priority
    /// the NIC may have changed (demotion, `sched`).
    pub fn lcurpriority(&self) -> u64 {
        self.csr_written[1] & !0xff | self.cur_priority as u64
    }
    #[inline]
    pub fn context(&self, id: u16) -> Option<&Context> {
        self.contexts.iter().find(|c| c.id == id)
    }
    #[inline]
    pub fn context_mut(&mut self, id: u16) -> Option<&mut Context> {
        self.contexts.iter_mut().find(|c| c.id == id)
    }
    #[inline]
    pub fn current(&self) -> Option<&Context> {
        self.context(self.cur_context)
    }
    /// The assembler netTX writes go to: the current context's, else the core's own.
    #[inline]
    pub fn tx_assembler(&mut self) -> &mut TxAssembler {
        let cur = self.cur_context;
        match self.contexts.iter().position(|c| c.id == cur) {
            Some(i) => &mut self.contexts[i].tx,
            None => &mut self.tx,
        }
    }
    /// Words of unfinished messages of every context in the TX queue.
    pub fn tx_partial_words(&self) -> usize {
        self.tx.partial_words() + self.contexts.iter().map(|c| c.tx.partial_words()).sum::<usize>()
    }
    /// Words in the TX queue, finished messages' and unfinished ones'.
    #[inline]
    pub fn tx_used(&self) -> usize {
        debug_assert_eq!(self.tx_partial, self.tx_partial_words());
        self.tx_queued + self.tx_partial
    }
    /// One netTX word into the running context's message (or the core's own): `true`
    /// when it was the message's last (`tx_finished` takes it). A flag, not the message:
    /// a returned `Option<Message>` was moved through at every word.
    #[inline]
    pub fn tx_word(&mut self, word: u64, max_len: u32) -> Result<bool, TxError> {
        let cur = self.cur_context;
        let r = self.tx_assembler().push_word(word, cur, max_len);
        match r {
            Ok(false) => self.tx_partial += 1,
            Ok(true) => {}
            Err(_) => self.tx_recount(),
        }
        r
    }
    /// The message `tx_word` finished, its words now counted as queued.
    pub fn tx_finished(&mut self, src_ip: u32) -> Message {
        let msg = self.tx_assembler().take(src_ip);
        self.tx_partial -= msg.tx_words() - 1;
        self.tx_queued += msg.tx_words();
        msg
    }
    /// Count the unfinished messages' words again, after a refused word (which may have
    /// dropped a multicast header) or a context removed with its assembler.
    #[cold]
    pub fn tx_recount(&mut self) {
        self.tx_partial = self.tx_partial_words();
    }
}

/// A message longer than the NIC's maximum: name the setting to raise, as each way of
/// running a node spells it, and the TX queue a message of that length needs.
fn too_long(word: u64, len: u16, max_len: u32) -> TxError {
    let queue = crate::NicParams::tx_queue_bytes_for(len as u32);
    format!(
        "netTX header {word:#018x}: message length {len} exceeds the NIC's maximum of {max_len} \
         bytes (max_msg_bytes); raise it to at least {len}: `--max-msg-bytes {len}` on `nanopu \
         run`, `max_msg_bytes = {len}` in a cluster file's [node] section (the TX queue must hold \
         it: tx_queue_bytes, `--tx-queue-bytes`, at least {queue})"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembler_builds_message_and_masks_tail() {
        let mut tx = TxAssembler::default();
        let hdr = AppHeader { ip: 7, context: 2, len: 12 }.to_word();
        assert_eq!(tx.push(hdr, (9, 1), 2048).unwrap(), None);
        assert_eq!(tx.push(5, (9, 1), 2048).unwrap(), None);
        let m = tx.push(u64::MAX, (9, 1), 2048).unwrap().unwrap();
        assert_eq!((m.src_ip, m.src_context, m.dst_ip, m.dst_context), (9, 1, 7, 2));
        assert_eq!(*m.words, [5, 0xffff_ffff_0000_0000]);
        assert_eq!(tx.partial_words(), 0);
    }

    #[test]
    fn assembler_rejects_bad_lengths() {
        let mut tx = TxAssembler::default();
        let zero = AppHeader { ip: 7, context: 2, len: 0 }.to_word();
        assert!(tx.push(zero, (9, 1), 2048).unwrap_err().contains("length 0"));
        let big = AppHeader { ip: 7, context: 2, len: 4000 }.to_word();
        assert!(tx.push(big, (9, 1), 2048).unwrap_err().contains("max_msg_bytes"));
    }

    /// The prototype's `lnic-send-recv.c` sends 4,800-byte messages: the refusal names the
    /// limit and the setting to raise on `nanopu run` and in a cluster file.
    #[test]
    fn a_too_long_message_names_the_setting_to_raise() {
        let big = AppHeader { ip: 7, context: 2, len: 4800 }.to_word();
        let e = TxAssembler::default().push(big, (9, 1), 2048).unwrap_err();
        assert!(e.contains("message length 4800 exceeds the NIC's maximum of 2048 bytes"), "{e}");
        assert!(e.contains("`--max-msg-bytes 4800` on `nanopu run`"), "{e}");
        assert!(e.contains("`max_msg_bytes = 4800` in a cluster file's [node] section"), "{e}");
    }
}
