//! An output port: priority bands with byte limits, feeding one directed link. Band 0
//! (control and trimmed headers) goes first, either strictly or, with a header weight, in
//! weighted round robin against the lower bands, as the NDP paper's switch does (Handley et
//! al., SIGCOMM 2017, section 3.1: 10 headers to 1 data packet, so that headers cannot starve
//! data into congestion collapse; docs/models/network.md "Bands, trimming, drops").

use super::ring::Ring;
use super::store::Pkt;
use crate::packet::MIN_FRAME;
use nanopu_sim::packet::flags;
use nanopu_sim::Time;

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Queued,
    Trimmed,
    /// Did not fit its band (nor band 0 as a trimmed header).
    Full,
}

/// Most bands a port has (`switch.bands` is at most 8; a NIC's own port uses 8).
const MAX_BANDS: usize = 8;

/// Bands a port holds inline: the switches' default two (control and trimmed headers,
/// data), which are also the only ones the transports send in. The others are made at
/// their first packet (a raw frame's band, a switch of more bands): six empty queues in
/// each of a cluster's ports took 192 bytes a port.
const INLINE_BANDS: usize = 2;

/// Packets a drained band keeps room for. A port fills in bursts (the sort's shuffle) and
/// would otherwise keep its busiest moment's room for the whole run (as the NIC's queues,
/// `nic::KEEP`).
const KEEP: usize = 8;
const _: () = assert!(KEEP.is_power_of_two(), "a band's ring has a power-of-two room");

/// The bands live inline and a bit mask says which hold packets, so that starting the next
/// packet touches the port only; bands hold packets' references and headers (the fabric
/// keeps the packets themselves), so queues are small and nothing big is copied.
#[derive(Clone, Debug, Default)]
pub struct Port {
    bands: [Ring; INLINE_BANDS],
    /// Bands `INLINE_BANDS` and up, made at the first packet queued in any of them.
    #[allow(clippy::type_complexity)]
    lower: Option<Box<[Ring; MAX_BANDS - INLINE_BANDS]>>,
    used: [u32; MAX_BANDS],
    /// Bit b set when band b holds a packet.
    occupied: u8,
    /// Weighted round robin between band 0 and the bands below it (`SwitchParams::
    /// header_weight`): band 0 sends this many packets for each one of a lower band while
    /// both hold packets; 0 is strict priority.
    header_weight: u8,
    /// Band-0 packets sent in a row while a lower band waited.
    header_run: u8,
    /// Bytes queued in all bands.
    total: u32,
    /// When the link finishes serializing the packet it is sending.
    pub free_at: Time,
    /// A `TxDone` is scheduled at `free_at` (only while packets wait: an idle port's
    /// link simply becomes free, without an event).
    pub wake: bool,
    /// Largest number of bytes queued at once.
    pub max_bytes: u32,
    /// The bytes queued integrated over time (byte-femtoseconds) up to `since`, and when the
    /// port first queued a packet (`mean_bytes`).
    area: u128,
    since: Time,
    first: Option<Time>,
    pub sent_packets: u64,
    pub sent_bytes: u64,
}

impl Port {
    /// An empty port whose band 0 has `header_weight` (see the field).
    pub fn new(header_weight: u8) -> Port {
        Port { header_weight, ..Port::default() }
    }

    /// Offer a packet. `limits` is None for an unlimited port (a NIC's own queue). When
    /// the answer is `Trimmed`, the queued header is trimmed and the caller trims the packet.
    /// Always inlined into the fabric's one caller, at every hop: network run -0.6% host
    /// instructions (`#[inline]` was enough until that caller was inlined in turn).
    #[inline(always)]
    pub fn offer(&mut self, mut p: Pkt, limits: Option<&[u32]>, trim: bool) -> Admit {
        let nb = limits.map_or(MAX_BANDS, <[u32]>::len);
        let band = (p.hdr.band as usize).min(nb - 1);
        let fits = |used: &[u32], b: usize, size: u32| limits.is_none_or(|l| used[b] + size <= l[b]);
        if fits(&self.used, band, p.hdr.wire_len()) {
            self.push(band, p);
            return Admit::Queued;
        }
        let f = p.hdr.flags;
        // Raw frames are dropped, not trimmed: they have no transport to recover them.
        let data = f & flags::DATA != 0 && !p.hdr.is_frame();
        let trimmable = trim && data && f & (flags::CHOP | flags::MCAST) == 0;
        if !trimmable || !fits(&self.used, 0, MIN_FRAME) {
            return Admit::Full;
        }
        p.hdr.trim();
        self.push(0, p);
        Admit::Trimmed
    }

    /// Bytes queued in all bands now (ECN marking's instantaneous queue).
    pub fn queued_bytes(&self) -> u32 {
        self.total
    }

    /// Bring the queue's time integral up to `now`; call before the queue changes (twice a
    /// hop: inlined).
    #[inline]
    pub fn advance(&mut self, now: Time) {
        if self.total > 0 {
            self.area += u128::from(self.total) * u128::from(now.0.saturating_sub(self.since.0));
            self.first.get_or_insert(now);
        }
        self.since = now;
    }

    /// The time-averaged bytes queued from when the port first held a packet to its last
    /// change (0 if it never held one). Simultaneous arrivals give the same average in any
    /// order, unlike a per-packet sample.
    pub fn mean_bytes(&self) -> u64 {
        let span = self.first.map_or(0, |f| self.since.0 - f.0);
        if span == 0 {
            return 0;
        }
        (self.area / u128::from(span)) as u64
    }

    /// Always inlined (see `offer`).
    #[inline(always)]
    fn push(&mut self, band: usize, p: Pkt) {
        let len = p.hdr.wire_len();
        self.used[band] += len;
        self.total += len;
        self.occupied |= 1 << band;
        self.band_mut(band).push_back(p);
        self.max_bytes = self.max_bytes.max(self.total);
    }

    /// The band sending next: the highest holding a packet, unless band 0 has had its
    /// `header_weight` turns in a row while a lower band waited (then the highest of those).
    #[inline]
    fn next_band(&self) -> Option<usize> {
        if !self.contested() {
            return (self.occupied != 0).then(|| self.occupied.trailing_zeros() as usize);
        }
        let lower = self.occupied & !1;
        let turn_over = self.header_weight != 0 && self.header_run >= self.header_weight;
        Some(if turn_over { lower.trailing_zeros() as usize } else { 0 })
    }

    /// The packet `pop` would give, if any (asked at every hop: inlined), and the host
    /// address of its ring entry: for `NetEvent::TxDone` to carry, so that the entry, out
    /// of the host's caches by the time the port is free, is loaded a step ahead
    /// (`Fabric::prefetch_event`). The address is only a hint.
    #[inline]
    pub fn next_entry(&self) -> Option<(Pkt, usize)> {
        let ring = self.band(self.next_band()?);
        Some((ring.front()?, ring.front_at()))
    }

    /// Band `b`, which holds a packet if it is not one of the inline ones.
    #[inline]
    fn band(&self, b: usize) -> &Ring {
        if b < INLINE_BANDS {
            return &self.bands[b];
        }
        self.lower_band(b)
    }

    /// A lower band, which holds a packet. Out of line: the transports never send in one.
    #[cold]
    #[inline(never)]
    fn lower_band(&self, b: usize) -> &Ring {
        &self.lower.as_ref().expect("an occupied band")[b - INLINE_BANDS]
    }

    /// Band `b` to change, made if it is a lower one never used before.
    #[inline]
    fn band_mut(&mut self, b: usize) -> &mut Ring {
        if b < INLINE_BANDS {
            return &mut self.bands[b];
        }
        self.lower_band_mut(b)
    }

    /// A lower band to change, made with the others at the first use of any.
    #[cold]
    #[inline(never)]
    fn lower_band_mut(&mut self, b: usize) -> &mut Ring {
        &mut self.lower.get_or_insert_with(Box::default)[b - INLINE_BANDS]
    }

    /// Do band 0 and a lower band both hold packets?
    #[inline]
    fn contested(&self) -> bool {
        self.occupied & 1 != 0 && self.occupied > 1
    }

    /// The next packet to send: the band `next_band` picks, FIFO within a band.
    #[inline]
    pub fn pop(&mut self) -> Option<Pkt> {
        let b = self.next_band()?;
        if self.contested() {
            self.header_run = if b == 0 { self.header_run.saturating_add(1) } else { 0 };
        }
        let band = self.band_mut(b);
        let p = band.pop_front().expect("occupied band");
        if band.is_empty() {
            if band.capacity() > KEEP {
                give_back(band);
            }
            self.occupied &= !(1 << b);
        }
        let len = p.hdr.wire_len();
        self.used[b] -= len;
        self.total -= len;
        self.sent_packets += 1;
        self.sent_bytes += len as u64;
        Some(p)
    }
}

/// What a drained band holds beyond `KEEP` packets (out of line: a band rarely grows past
/// them).
#[cold]
#[inline(never)]
fn give_back(band: &mut Ring) {
    band.shrink_to(KEEP);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::Hdr;
    use crate::packet::Packet;

    fn frame(r: u32, len: usize) -> Pkt {
        Pkt { r, hdr: Hdr::of(&Packet::frame(1, 2, &vec![0; len])) }
    }

    /// 1,500 bytes for 10 fs, then 500 or 1,000 for 10 fs: a mean of 1,000 or 1,250
    /// bytes, whichever of two simultaneous arrivals came first.
    #[test]
    fn the_mean_queue_is_a_time_average_of_the_bytes_queued() {
        let mean = |first: usize, second: usize| {
            let mut p = Port::default();
            for (r, len) in [(0, first), (1, second)] {
                p.advance(Time(0));
                assert_eq!(p.offer(frame(r, len), None, false), Admit::Queued);
            }
            p.advance(Time(10));
            p.pop();
            p.advance(Time(20));
            p.pop();
            p.mean_bytes()
        };
        assert_eq!(mean(1000, 500), 1000);
        assert_eq!(mean(500, 1000), 1250, "FIFO: the first to arrive leaves first");
        assert_eq!(Port::default().mean_bytes(), 0);
    }

    fn in_band(r: u32, band: u8) -> Pkt {
        let mut p = frame(r, 64);
        p.hdr.band = band;
        p
    }

    /// The order in which a port with `weight` sends 4 band-0 and 3 band-1 packets queued at
    /// once, 2 more band-0 packets arriving after the fifth has left.
    fn order(weight: u8) -> Vec<u32> {
        let mut p = Port::new(weight);
        for (r, band) in [(0, 0), (1, 0), (2, 0), (3, 0), (10, 1), (11, 1), (12, 1)] {
            assert_eq!(p.offer(in_band(r, band), None, false), Admit::Queued);
        }
        let mut sent = Vec::new();
        for _ in 0..5 {
            let next = p.next_entry().map(|(k, _)| k.r);
            sent.push(p.pop().unwrap().r);
            assert_eq!(next, sent.last().copied(), "next is what pop gives");
        }
        (4..6).for_each(|r| assert_eq!(p.offer(in_band(r, 0), None, false), Admit::Queued));
        sent.extend(std::iter::from_fn(|| p.pop()).map(|k| k.r));
        sent
    }

    /// Bands past the two inline ones (a raw frame's, a switch of more bands) are made at
    /// their first packet and keep their order; a drained band gives back its room beyond
    /// `KEEP` packets.
    #[test]
    fn lower_bands_are_made_at_first_use_and_drained_bands_give_room_back() {
        let mut p = Port::new(0);
        for (r, band) in [(0, 1), (1, 0)] {
            assert_eq!(p.offer(in_band(r, band), None, false), Admit::Queued);
        }
        assert!(p.lower.is_none(), "bands 0 and 1 are inline");
        for (r, band) in [(5, 5), (2, 2), (6, 5), (7, 7)] {
            assert_eq!(p.offer(in_band(r, band), None, false), Admit::Queued);
        }
        (100..120).for_each(|r| assert_eq!(p.offer(in_band(r, 3), None, false), Admit::Queued));
        let sent: Vec<u32> = std::iter::from_fn(|| p.pop()).map(|k| k.r).collect();
        let burst: Vec<u32> = (100..120).collect();
        assert_eq!(sent, [&[1, 0, 2][..], &burst, &[5, 6, 7]].concat());
        assert!(p.band(3).capacity() < 20, "room for {} packets kept", p.band(3).capacity());
    }

    #[test]
    fn band_0_goes_first_strictly_or_by_its_weight() {
        assert_eq!(order(0), [0, 1, 2, 3, 10, 4, 5, 11, 12], "strict: band 0 whenever it holds one");
        // Two of band 0 for one of band 1; the count carries over the moment band 0 was empty.
        assert_eq!(order(2), [0, 1, 10, 2, 3, 11, 4, 5, 12]);
        assert_eq!(order(10), order(0), "never 10 in a row here");
    }
}
