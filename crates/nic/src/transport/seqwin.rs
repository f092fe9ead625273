//! Which messages of one sender were delivered: duplicate suppression that does not forget
//! a message while its sender may still send it.
//!
//! The rule (ours; how it is derived below):
//!
//! - Every message an endpoint starts, unicast or multicast, gets the endpoint's next 32-bit
//!   sequence number, carried in every packet of the message and in every control packet
//!   about it (`Segment::mcast_seq`); the 16-bit `msg_id` is its low half.
//! - A sender starts message `n` only when every unicast message it started before
//!   `n - SEQ_WINDOW` is finished (fully acknowledged); until then `n` waits.
//! - A receiver remembers, per sender, the sequence numbers it delivered that lie within
//!   `SEQ_WINDOW` of the newest one it delivered (`newest`). A data packet of a message it is
//!   not reassembling is then:
//!   - of a remembered message: a duplicate, answered, since its sender may not have the
//!     acknowledgement yet;
//!   - unicast and `SEQ_WINDOW` or more behind `newest`: a duplicate. `newest` was started
//!     after it, which the sender did only once every message that far back was finished,
//!     i.e. acknowledged, i.e. delivered here. Nothing to answer: the sender is done with it;
//!   - anything else: new.
//!
//! Why nothing is delivered twice: a sender sends a unicast message again only while it is
//! unfinished; anything delivered here since was started before it finished, so within
//! `SEQ_WINDOW` of it, and the message is still remembered. A copy made by the network, however
//! late, is either remembered or far enough behind to be a duplicate by the second case.
//! Nothing is mistaken for a duplicate: the remembered numbers are exact 32-bit values, so a
//! receiver that has not heard from a sender for a long time still compares correctly, and
//! only a copy 2^31 messages late (which the simulator cannot produce) would alias.
//!
//! Multicast is the exception to the second case: its sender never sends a packet twice and
//! the fabric's hop-by-hop retransmission never makes a second copy (docs/models/network.md),
//! so an old multicast packet is a late first copy (a hop resent it after a link came back)
//! and is new. A multicast duplicate would need a network copy arriving after `SEQ_WINDOW`
//! newer messages of its sender were delivered here.
//!
//! Where it comes from: NDP (Handley et al., SIGCOMM 2017) numbers packets per connection and
//! discards by sequence number, as TCP does; the receiver here sees messages of many senders,
//! not connections. Homa (Montazeri et al., SIGCOMM 2018) gives RPCs unique ids and accepts
//! that an RPC may run more than once. Both leave message-level exactly-once to us. The
//! bound on what a sender has outstanding is the classic condition of selective-repeat
//! sliding windows (no more than half the sequence space in flight), applied to the 16-bit
//! `msg_id` so that the ids of unfinished messages never collide (the sender's window by
//! message id and its control packets rely on that).
//!
//! Nothing is forgotten by age: a rule that forgot a delivered message a fixed time after
//! delivery would deliver it again when, under heavy loss, a sender still without an ACK
//! retransmits it after that time.

use nanopu_sim::hash::IntMap;
use std::collections::hash_map::Entry;
use std::collections::VecDeque;

/// How far (in messages started) a sender's oldest unfinished unicast message may lag its
/// newest, and how far back a receiver remembers: half the 16-bit message id space.
pub const SEQ_WINDOW: u32 = 1 << 15;

/// What a receiver makes of a data packet of a message it is not reassembling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Not delivered yet.
    New,
    /// Delivered and remembered: a duplicate its sender may still need answered.
    Delivered,
    /// `SEQ_WINDOW` or more behind the newest delivered: a duplicate if unicast.
    Behind,
}

/// Per sender (by IP), the sequence numbers delivered from it within `SEQ_WINDOW` of the
/// newest. A node hears from many senders a few messages each (a 16,384-core NanoSort node
/// from about 340, 45 of them more than 3 messages): most senders' numbers are kept in
/// place in a 12-byte table entry (up to 4 numbers, `Few`), the rest in a deque each,
/// which the entry points to.
/// One table, so that a sender is found with one look-up whichever way its numbers are
/// kept: with a second table keyed by IP for the deques, a sender with a deque took two
/// and a new sender three (NanoSort, 1,024 cores: 375 host instructions a delivery).
/// A vector sorted by IP, searched by halves, holds the same entries in less (6 KiB for
/// 340 senders doubling, 4 KiB grown along the allocator's size classes, against 7 KiB)
/// but raised the resident peak of the 16,384-core sort (`nanopu sort --cores 16384
/// --cores-per-node 4 --keys-per-core 16 --buckets 16 --fan-in 16 --switch-latency-ns 263
/// --threads 1`) by 4.6 and 1.8 MB, two runs each against three of the hash table, and
/// cost 0.09% more host instructions (59 a message, 1,024 cores).
#[derive(Clone, Debug, Default)]
pub struct Delivered {
    senders: IntMap<u32, Few>,
    /// The deques of the senders whose numbers outgrew their entry (`Few::spilled`), in
    /// the order they did; a sender keeps its deque for good, as it kept its table entry.
    many: Vec<VecDeque<u32>>,
}

impl Seen {
    /// Whether a data packet seen so is of a message to take, not a duplicate (the rule
    /// above: a multicast one behind is a late first copy).
    pub fn is_new(self, unicast: bool) -> bool {
        !(self == Seen::Delivered || (self == Seen::Behind && unicast))
    }
}

impl Delivered {
    /// What a data packet of message `seq` from `src` is, if not being reassembled.
    pub fn seen(&self, src: u32, seq: u32) -> Seen {
        self.senders.get(&src).map_or(Seen::New, |f| f.seen(&self.many, seq))
    }

    /// `seen`, and `seq` recorded as delivered as well when `whole` (its message came whole,
    /// so is delivered at once if new) and new (`Seen::is_new`): one look-up of the sender
    /// where `seen` then `delivered` made two (nearly every message of a NanoSort is one
    /// packet). Not generic, so that it is compiled here once.
    pub fn seen_whole(&mut self, src: u32, seq: u32, whole: bool, unicast: bool) -> Seen {
        let deliver = |seen: Seen| whole && seen.is_new(unicast);
        let Delivered { senders, many } = self;
        match senders.entry(src) {
            Entry::Vacant(v) => {
                if deliver(Seen::New) {
                    v.insert(Few::first(seq));
                }
                Seen::New
            }
            Entry::Occupied(o) => o.into_mut().seen_whole(many, seq, deliver),
        }
    }

    /// Message `seq` from `src` was delivered. One already out of the window stays
    /// forgotten (only a late multicast message can be: see the module's comment).
    pub fn delivered(&mut self, src: u32, seq: u32) {
        match self.senders.get_mut(&src) {
            Some(f) => f.deliver(&mut self.many, seq),
            None => drop(self.senders.insert(src, Few::first(seq))),
        }
    }

    /// Sequence numbers remembered from `src` (tests, memory accounting).
    pub fn len(&self, src: u32) -> usize {
        match self.senders.get(&src) {
            None => 0,
            Some(f) => f.spilled().map_or(f.len(), |i| self.many[i].len()),
        }
    }
}

/// How many sequence numbers a sender keeps in place, at most: the newest and 3 older ones.
const INLINE: usize = 4;

/// A sender's numbers in place, 8 bytes: the newest, and in `packed` how far behind it each
/// older one is, farthest first, in one of two layouts named by its top 2 bits (`Layout`).
/// A distance of 0 is an empty field: an older number is never the newest. With the
/// sender's IP a table entry is 12 bytes, and a node's table of about 340 senders (512
/// buckets) 6,672 bytes, which the allocator rounds to 7 KiB; with 16-byte entries (the
/// newest, a count and three 16-bit distances) it was 8,720 bytes, rounded to 10 KiB. A
/// deque per sender, then numbers in place with a tag (24 bytes), came before
/// (docs/profile.md).
#[derive(Clone, Copy, Debug, Default)]
struct Few {
    newest: u32,
    packed: u32,
}

const _: () = assert!(std::mem::size_of::<(u32, Few)>() == 12);

/// How `Few::packed` holds the older numbers' distances.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Up to 2, 15 bits each: any distance within `SEQ_WINDOW` (2^15) fits.
    Wide = 0,
    /// Up to 3, 10 bits each: a sender's fourth number is kept in place if the oldest of
    /// the four is under 1,024 messages behind the newest (else it spills to a deque).
    Narrow = 1,
    /// None: the numbers are the deque `Delivered::many[newest]`.
    Spilled = 2,
}

impl Layout {
    /// (bits per field, fields).
    fn shape(self) -> (u32, usize) {
        match self {
            Layout::Wide => (15, INLINE - 2),
            Layout::Narrow => (10, INLINE - 1),
            Layout::Spilled => (0, 0),
        }
    }
}

impl Few {
    /// `Delivered::seen` for this sender (`many`: the spilled senders' deques).
    #[inline]
    fn seen(&self, many: &[VecDeque<u32>], seq: u32) -> Seen {
        match self.spilled() {
            Some(i) => seen(&many[i], seq),
            None => seen(&self.unpack(), seq),
        }
    }

    /// `Delivered::seen_whole` for this sender: numbers in place are unpacked once, for
    /// the answer and the record both (`seen` then `deliver` unpacked them twice).
    #[inline]
    fn seen_whole(
        &mut self,
        many: &mut Vec<VecDeque<u32>>,
        seq: u32,
        deliver: impl Fn(Seen) -> bool,
    ) -> Seen {
        if let Some(i) = self.spilled() {
            let seen = seen(&many[i], seq);
            if deliver(seen) {
                delivered(&mut many[i], seq);
            }
            return seen;
        }
        let small = self.unpack();
        let seen = seen(&small, seq);
        if deliver(seen) {
            self.deliver_small(many, small, seq);
        }
        seen
    }

    /// `Delivered::delivered` for this sender.
    fn deliver(&mut self, many: &mut Vec<VecDeque<u32>>, seq: u32) {
        match self.spilled() {
            Some(i) => delivered(&mut many[i], seq),
            None => self.deliver_small(many, self.unpack(), seq),
        }
    }

    /// `deliver` for a sender whose numbers in place are `small`, unpacked.
    fn deliver_small(&mut self, many: &mut Vec<VecDeque<u32>>, mut small: Small, seq: u32) {
        if small.len < INLINE {
            delivered(&mut small, seq);
            *self = Few::pack(&small).unwrap_or_else(|| spill(many, &small.v[..small.len]));
            return;
        }
        *self = spill(many, &small.v);
        let last = many.len() - 1;
        delivered(&mut many[last], seq);
    }

    /// A sender's first number.
    fn first(seq: u32) -> Few {
        Few { newest: seq, packed: 0 }
    }

    /// A sender whose numbers are the deque `Delivered::many[i]`.
    fn spill(i: usize) -> Few {
        let newest = u32::try_from(i).expect("fewer senders than 2^32");
        Few { newest, packed: (Layout::Spilled as u32) << 30 }
    }

    fn layout(&self) -> Layout {
        match self.packed >> 30 {
            0 => Layout::Wide,
            1 => Layout::Narrow,
            _ => Layout::Spilled,
        }
    }

    /// Where this sender's deque is, if its numbers are in one.
    #[inline]
    fn spilled(&self) -> Option<usize> {
        (self.layout() == Layout::Spilled).then_some(self.newest as usize)
    }

    /// The `i`th older number's distance behind the newest (0: none).
    #[inline]
    fn field(&self, i: usize) -> u32 {
        let (bits, _) = self.layout().shape();
        self.packed >> (bits * i as u32) & ((1 << bits) - 1)
    }

    /// Numbers kept (1 to `INLINE`; a spilled sender's count is its deque's).
    fn len(&self) -> usize {
        let (_, fields) = self.layout().shape();
        1 + (0..fields).take_while(|&i| self.field(i) != 0).count()
    }

    /// Array-wise, with no iterator adapters: in the fast profile `Zip::new` was a call in
    /// each of `unpack` and `pack`.
    #[inline]
    fn unpack(&self) -> Small {
        let len = self.len();
        let number = |i: usize| match i + 1 < len {
            true => self.newest.wrapping_sub(self.field(i)),
            false => self.newest,
        };
        Small { len, v: std::array::from_fn(number) }
    }

    /// `s` in place, if its distances fit a layout. Every number of `s` is within
    /// `SEQ_WINDOW` of its newest (`delivered` keeps it so).
    #[inline]
    fn pack(s: &Small) -> Option<Few> {
        let newest = s.back().unwrap_or(0);
        let older = s.len.saturating_sub(1);
        let layout = if older <= Layout::Wide.shape().1 { Layout::Wide } else { Layout::Narrow };
        let (bits, _) = layout.shape();
        let mut packed = (layout as u32) << 30;
        for i in 0..older {
            let d = newest.wrapping_sub(s.v[i]);
            if d >> bits != 0 {
                return None;
            }
            packed |= d << (bits * i as u32);
        }
        Some(Few { newest, packed })
    }
}

/// Move a sender's `numbers` to a new deque of `many`; its entry from now on.
fn spill(many: &mut Vec<VecDeque<u32>>, numbers: &[u32]) -> Few {
    // Room for twice what fits in place, which the fifth number would double to anyway:
    // one allocation where collecting the four and pushing the fifth made two.
    let mut d = VecDeque::with_capacity(2 * INLINE);
    d.extend(numbers);
    many.push(d);
    Few::spill(many.len() - 1)
}

/// A sender's numbers in place, unpacked, to apply the rule to.
#[derive(Clone, Copy, Debug, Default)]
struct Small {
    len: usize,
    v: [u32; INLINE],
}

/// A sender's numbers within `SEQ_WINDOW` of the newest, in ascending order (the newest
/// last): what the rule reads and changes.
trait Seqs {
    fn len(&self) -> usize;
    fn get(&self, i: usize) -> Option<u32>;
    /// Put `seq` at position `i` (a `Small` has room: `Delivered::delivered` sees to it).
    fn insert(&mut self, i: usize, seq: u32);
    fn pop_front(&mut self);

    #[inline]
    fn back(&self) -> Option<u32> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }
}

/// Plain loops over at most `INLINE` numbers: `copy_within` was a call to `memmove`.
impl Seqs for Small {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn get(&self, i: usize) -> Option<u32> {
        self.v[..self.len].get(i).copied()
    }
    #[inline]
    fn insert(&mut self, i: usize, seq: u32) {
        for j in (i..self.len).rev() {
            self.v[j + 1] = self.v[j];
        }
        self.v[i] = seq;
        self.len += 1;
    }
    #[inline]
    fn pop_front(&mut self) {
        for j in 1..self.len {
            self.v[j - 1] = self.v[j];
        }
        self.len -= 1;
    }
}

impl Seqs for VecDeque<u32> {
    #[inline]
    fn len(&self) -> usize {
        VecDeque::len(self)
    }
    #[inline]
    fn get(&self, i: usize) -> Option<u32> {
        VecDeque::get(self, i).copied()
    }
    #[inline]
    fn insert(&mut self, i: usize, seq: u32) {
        match i == self.len() {
            true => self.push_back(seq),
            false => VecDeque::insert(self, i, seq),
        }
    }
    #[inline]
    fn pop_front(&mut self) {
        VecDeque::pop_front(self);
    }
}

/// How far `seq` lies behind the newest delivered (negative: ahead of it).
fn behind(d: &impl Seqs, seq: u32) -> Option<i32> {
    d.back().map(|newest| newest.wrapping_sub(seq) as i32)
}

fn seen(d: &impl Seqs, seq: u32) -> Seen {
    match behind(d, seq) {
        Some(b) if b >= SEQ_WINDOW as i32 => Seen::Behind,
        Some(b) if b >= 0 && position(d, seq).is_ok() => Seen::Delivered,
        _ => Seen::New,
    }
}

/// Where `seq` is, or would go, in `d` (ordered by distance behind the newest, decreasing).
fn position(d: &impl Seqs, seq: u32) -> Result<usize, usize> {
    let newest = d.back().expect("not empty");
    let b = newest.wrapping_sub(seq);
    let (mut lo, mut hi) = (0, d.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        match newest.wrapping_sub(d.get(mid).expect("in range")).cmp(&b) {
            std::cmp::Ordering::Equal => return Ok(mid),
            std::cmp::Ordering::Greater => lo = mid + 1,
            std::cmp::Ordering::Less => hi = mid,
        }
    }
    Err(lo)
}

fn delivered(d: &mut impl Seqs, seq: u32) {
    match behind(d, seq) {
        None => d.insert(0, seq),
        Some(b) if b < 0 => advance(d, seq),
        Some(b) if b < SEQ_WINDOW as i32 => {
            if let Err(i) = position(d, seq) {
                d.insert(i, seq);
            }
        }
        Some(_) => {}
    }
}

fn advance(d: &mut impl Seqs, seq: u32) {
    d.insert(d.len(), seq);
    while d.get(0).is_some_and(|x| seq.wrapping_sub(x) >= SEQ_WINDOW) {
        d.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: u32 = 0x0a00_0007;

    #[test]
    fn remembers_what_was_delivered_out_of_order_and_across_the_wrap() {
        let mut w = Delivered::default();
        assert_eq!(w.seen(SRC, 5), Seen::New);
        let start = u32::MAX - 3;
        for k in [0u32, 2, 1, 7, 5] {
            w.delivered(SRC, start.wrapping_add(k));
        }
        for k in [0u32, 1, 2, 5, 7] {
            assert_eq!(w.seen(SRC, start.wrapping_add(k)), Seen::Delivered, "{k}");
        }
        for k in [3u32, 4, 6, 8, 100] {
            assert_eq!(w.seen(SRC, start.wrapping_add(k)), Seen::New, "{k}");
        }
        assert_eq!(w.len(SRC), 5);
        assert_eq!(w.seen(SRC + 1, start), Seen::New, "another sender");
    }

    /// The in-place numbers behave as the deque they replaced: random deliveries (in and out
    /// of order, some a window behind, of senders in place and with a deque) give the same
    /// answers as a plain sorted deque of the same rule, across the move from in place to a
    /// deque and across the wrap of the 32-bit numbers.
    #[test]
    fn in_place_numbers_agree_with_a_deque() {
        let mut rng = nanopu_sim::Rng::new(3);
        for _ in 0..200 {
            let (mut w, mut model) = (Delivered::default(), VecDeque::<u32>::new());
            let base = [rng.next_u64() as u32, u32::MAX - 3][rng.below(2) as usize];
            for _ in 0..rng.below(12) {
                let seq = base.wrapping_add(rng.below(8) as u32 + [0, SEQ_WINDOW][rng.below(2) as usize]);
                w.delivered(SRC, seq);
                model_delivered(&mut model, seq);
                assert_eq!(w.len(SRC), model.len());
                for k in (0..8).chain(SEQ_WINDOW..SEQ_WINDOW + 8) {
                    let q = base.wrapping_add(k);
                    assert_eq!(w.seen(SRC, q), model_seen(&model, q), "{q}");
                }
            }
        }
    }

    /// Senders in place and with deques side by side, delivered to in turns: each keeps
    /// its own numbers, whichever table slot or deque it has.
    #[test]
    fn senders_keep_their_own_numbers() {
        let mut rng = nanopu_sim::Rng::new(5);
        let mut w = Delivered::default();
        let mut models = vec![VecDeque::<u32>::new(); 6];
        for _ in 0..400 {
            let s = rng.below(6) as usize;
            let seq = (s as u32 * 1000).wrapping_add(rng.below(3 * s as u64 + 2) as u32);
            w.delivered(SRC + s as u32, seq);
            model_delivered(&mut models[s], seq);
        }
        for (s, model) in models.iter().enumerate() {
            let src = SRC + s as u32;
            assert_eq!(w.len(src), model.len(), "sender {s}");
            for q in (0..1000).map(|k| s as u32 * 1000 + k) {
                assert_eq!(w.seen(src, q), model_seen(model, q), "sender {s}, {q}");
            }
        }
        assert!(w.many.len() >= 2 && w.in_place() >= 1, "both ways of keeping numbers");
    }

    /// `seen_whole` answers as `seen` does and records as `delivered` would, what `seen`
    /// then `delivered` (for a new message that came whole) made of the same packets.
    #[test]
    fn seen_whole_is_seen_then_delivered() {
        let mut rng = nanopu_sim::Rng::new(7);
        let (mut one, mut two) = (Delivered::default(), Delivered::default());
        for _ in 0..2000 {
            let src = SRC + rng.below(5) as u32;
            let seq = rng.below(12) as u32 * (1 + rng.below(2) as u32 * SEQ_WINDOW / 4);
            let (whole, unicast) = (rng.below(4) != 0, rng.below(5) != 0);
            let seen = two.seen(src, seq);
            if whole && seen.is_new(unicast) {
                two.delivered(src, seq);
            }
            assert_eq!(one.seen_whole(src, seq, whole, unicast), seen);
            assert_eq!(one.len(src), two.len(src));
        }
        for src in SRC..SRC + 5 {
            (0..12 * SEQ_WINDOW / 4).for_each(|q| assert_eq!(one.seen(src, q), two.seen(src, q)));
        }
    }

    fn model_seen(d: &VecDeque<u32>, seq: u32) -> Seen {
        match d.back().map(|&newest| newest.wrapping_sub(seq) as i32) {
            Some(b) if b >= SEQ_WINDOW as i32 => Seen::Behind,
            _ if d.contains(&seq) => Seen::Delivered,
            _ => Seen::New,
        }
    }

    /// The rule of `delivered` on a plain deque, newest last.
    fn model_delivered(d: &mut VecDeque<u32>, seq: u32) {
        let newest = d.back().copied().unwrap_or(seq);
        let behind = |x: u32| newest.wrapping_sub(x) as i32;
        if d.contains(&seq) || behind(seq) >= SEQ_WINDOW as i32 {
            return;
        }
        let i = d.iter().position(|&x| behind(x) < behind(seq)).unwrap_or(d.len());
        d.insert(i, seq);
        let newest = *d.back().unwrap();
        d.retain(|&x| newest.wrapping_sub(x) < SEQ_WINDOW);
    }

    /// A sender's fifth number moves it from in place to a deque, and both stay in one
    /// table only.
    #[test]
    fn the_fifth_number_moves_a_sender_to_a_deque() {
        let mut w = Delivered::default();
        (0..4).for_each(|k| w.delivered(SRC, 100 + k));
        assert_eq!((w.in_place(), w.many.len()), (1, 0));
        w.delivered(SRC, 90);
        assert_eq!((w.in_place(), w.many.len()), (0, 1));
        assert_eq!(w.len(SRC), 5);
        assert!(
            (0..4).all(|k| w.seen(SRC, 100 + k) == Seen::Delivered) && w.seen(SRC, 90) == Seen::Delivered
        );
    }

    /// Three numbers of any distances and four within 1,024 of the newest stay in place;
    /// four farther apart go to a deque, with the same answers.
    #[test]
    fn four_far_apart_numbers_go_to_a_deque() {
        let mut w = Delivered::default();
        [0, SEQ_WINDOW - 2, SEQ_WINDOW - 1].iter().for_each(|&k| w.delivered(SRC, k));
        [5000, 5001, 5002, 6023].iter().for_each(|&k| w.delivered(SRC + 1, k));
        assert_eq!((w.in_place(), w.many.len()), (2, 0));
        w.delivered(SRC + 2, 0);
        [1, 2, 1024].iter().for_each(|&k| w.delivered(SRC + 2, k));
        assert_eq!((w.in_place(), w.many.len()), (2, 1));
        let (far, near) = ([0, 1, 2, 1024], [5000, 5001, 5002, 6023]);
        assert!(far.iter().all(|&k| w.seen(SRC + 2, k) == Seen::Delivered) && w.len(SRC + 2) == 4);
        assert!(near.iter().all(|&k| w.seen(SRC + 1, k) == Seen::Delivered) && w.len(SRC + 1) == 4);
        assert_eq!(w.seen(SRC + 2, 3), Seen::New);
    }

    impl Delivered {
        /// Senders whose numbers are in place.
        fn in_place(&self) -> usize {
            self.senders.values().filter(|f| f.spilled().is_none()).count()
        }
    }

    #[test]
    fn forgets_only_what_is_a_window_behind() {
        let mut w = Delivered::default();
        w.delivered(SRC, 10);
        w.delivered(SRC, 12);
        w.delivered(SRC, 10 + SEQ_WINDOW - 1);
        assert_eq!(w.seen(SRC, 10), Seen::Delivered);
        assert_eq!(w.seen(SRC, 11), Seen::New, "not delivered, inside the window");
        w.delivered(SRC, 10 + SEQ_WINDOW);
        assert_eq!(w.seen(SRC, 10), Seen::Behind);
        assert_eq!(w.seen(SRC, 11), Seen::New, "still inside the window");
        assert_eq!(w.seen(SRC, 12), Seen::Delivered);
        assert_eq!(w.len(SRC), 3);
        w.delivered(SRC, 5);
        assert_eq!(w.len(SRC), 3, "a late one out of the window is not kept");
    }
}
