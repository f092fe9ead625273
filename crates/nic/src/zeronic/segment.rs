//! ZeroNIC's placement tables (docs/models/zeronic.md "Memory Regions and Memory
//! Segments"): the Memory Region table (registered application memory, reached through the
//! IOMMU) and, per flow, a Memory Segment: a list of buffer pieces onto which the flow's
//! byte stream maps in order. Payload is placed by (flow, sequence number) alone, so
//! reordered, retransmitted and duplicate segments land where their bytes belong; bytes
//! outside the pieces (below the oldest, or beyond the newest: out of the window software
//! gave) are not placed.

/// A registered memory region: `len` bytes of application memory from `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub addr: u64,
    pub len: u64,
}

/// One piece of a Memory Segment: `len` bytes at `offset` in region `mr`, holding the
/// flow's stream from sequence number `seq` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub seq: u32,
    pub mr: u8,
    pub offset: u64,
    pub len: u32,
}

/// A flow: the segments of one TCP connection (remote address and port, local port), and
/// the Memory Segment its payload goes to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    pub rip: u32,
    pub rport: u16,
    pub lport: u16,
    /// The sequence number the next appended piece starts at.
    pub next_seq: u32,
    pub pieces: Vec<Piece>,
}

/// Sequence-space difference `a - b` (RFC 9293 3.4: modulo 2^32).
fn diff(a: u32, b: u32) -> i64 {
    a.wrapping_sub(b) as i32 as i64
}

impl Flow {
    /// Does a segment from `rip`:`rport` to `lport` belong to this flow?
    pub fn matches(&self, rip: u32, rport: u16, lport: u16) -> bool {
        (self.rip, self.rport, self.lport) == (rip, rport, lport)
    }

    /// The first and one-past-last sequence numbers the pieces cover (equal when none).
    pub fn window(&self) -> (u32, u32) {
        self.pieces.first().map_or((self.next_seq, self.next_seq), |p| (p.seq, self.next_seq))
    }

    /// Drop the pieces that end at or before `seq`: software is done with those bytes.
    pub fn retire(&mut self, seq: u32) {
        self.pieces.retain(|p| diff(p.seq.wrapping_add(p.len), seq) > 0);
    }

    /// Where the payload bytes `[seq, seq + len)` go: the part inside the pieces, as
    /// (first sequence number placed, (region, offset, bytes) runs in stream order).
    pub fn place(&self, seq: u32, len: u32) -> (u32, Vec<(u8, u64, u32)>) {
        let (lo, hi) = self.window();
        let start = if diff(seq, lo) < 0 { lo } else { seq };
        let end = seq.wrapping_add(len);
        let end = if diff(end, hi) > 0 { hi } else { end };
        let mut runs = Vec::new();
        if diff(end, start) <= 0 {
            return (start, runs);
        }
        for p in &self.pieces {
            let (a, b) = (p.seq, p.seq.wrapping_add(p.len));
            let (s, e) = (max_seq(a, start), min_seq(b, end));
            if diff(e, s) > 0 {
                runs.push((p.mr, p.offset + diff(s, a) as u64, diff(e, s) as u32));
            }
        }
        (start, runs)
    }
}

fn max_seq(a: u32, b: u32) -> u32 {
    if diff(a, b) >= 0 {
        a
    } else {
        b
    }
}

fn min_seq(a: u32, b: u32) -> u32 {
    if diff(a, b) <= 0 {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(pieces: &[(u32, u32)]) -> Flow {
        let mut f = Flow { next_seq: pieces[0].0, ..Default::default() };
        for &(off, len) in pieces {
            f.pieces.push(Piece { seq: f.next_seq, mr: 1, offset: off as u64, len });
            f.next_seq = f.next_seq.wrapping_add(len);
        }
        f
    }

    #[test]
    fn a_segment_across_two_pieces_is_split_at_the_boundary() {
        let f = flow(&[(1000, 100), (0, 100)]);
        let seq0 = 1000;
        assert_eq!(f.place(seq0 + 90, 20), (seq0 + 90, vec![(1, 1090, 10), (1, 0, 10)]));
    }

    #[test]
    fn bytes_outside_the_pieces_are_not_placed() {
        let mut f = flow(&[(1000, 100), (0, 100)]);
        assert_eq!(f.place(1190, 20), (1190, vec![(1, 90, 10)]), "beyond the window: cut");
        f.retire(1100);
        assert_eq!(f.window(), (1100, 1200));
        assert_eq!(f.place(1050, 60), (1100, vec![(1, 0, 10)]), "below the oldest piece: cut");
        assert_eq!(f.place(1300, 10).1, vec![], "entirely beyond: nothing");
    }

    #[test]
    fn sequence_numbers_wrap() {
        let f = flow(&[(0, 100)]);
        let mut g = f.clone();
        g.pieces[0].seq = u32::MAX - 9;
        g.next_seq = 90;
        assert_eq!(g.place(u32::MAX - 4, 10), (u32::MAX - 4, vec![(1, 5, 10)]));
        assert_eq!(f.window(), (0, 100));
    }
}
