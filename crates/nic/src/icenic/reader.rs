//! IceNIC's DMA reader on the send path (icenet `StreamReader`, `StreamReaderCore`,
//! docs/models/icenic.md "Send path"): when each Get of a frame issues and when its data is
//! back. The reader issues a frame's 64-byte Gets one a cycle, at most 8 in flight, a slot
//! freed when its line's data is back; the data leaves its reservation buffer in order, a
//! flit a cycle. It counts the send complete, and takes the next request, once the frame's
//! last Get has issued (`state := s_resp` on the last `tl.a.fire`, `io.resp.valid := state
//! === s_resp`, then `s_idle`), so the Gets of the next frame follow while the data of this
//! one still streams out, in the slots this one frees.
//!
//! The memory model gives one latency per frame (the port's wait plus the slowest line's,
//! `NodeMem::dma_latency`), not the time each Get reaches memory: every line's data is
//! taken to be back that long after the frame's first Get, streamed a flit a cycle after
//! the previous frame's last flit, as the whole frame's data was before. The window then
//! follows from those times: Get k (k >= 8) waits for the data of Get k - 8.

use std::collections::VecDeque;

/// Bytes a Get asks for: `maxAcquireBytes` = 64 (icenet `NICConfig`).
pub const GET_BYTES: u64 = 64;
/// Gets in flight at once: `nMemXacts` = 8 (icenet `NICConfig`).
pub const GETS_IN_FLIGHT: usize = 8;

/// When a frame's Gets and data are done, cycles of the node clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetch {
    /// The frame's last Get issues: the send completes, the reader takes the next request.
    pub last_get: u64,
    /// The frame's last flit is out of the reader.
    pub data_end: u64,
}

/// The reader's state across frames: the slots in flight and the datapath.
#[derive(Clone, Debug, Default)]
pub struct Reader {
    /// When the data of each of the last Gets issued (at most 8) is back, oldest first.
    backs: VecDeque<u64>,
    /// The cycle after the last Get issued: the earliest the next may.
    next_issue: u64,
    /// The cycle the previous frame's last flit left.
    data_end: u64,
}

impl Reader {
    /// The Gets of `len` bytes at `addr`, the request taken at `now`, their data back `lat`
    /// cycles after the first issues and streamed `flit` bytes a cycle.
    pub fn fetch(&mut self, now: u64, addr: u64, len: usize, lat: u64, flit: u64) -> Fetch {
        let mut issue = now.max(self.next_issue);
        let mut start = None;
        for through in line_ends(addr, len) {
            if self.backs.len() == GETS_IN_FLIGHT {
                issue = issue.max(self.backs.pop_front().expect("full"));
            }
            let s = *start.get_or_insert((issue + lat).max(self.data_end));
            self.backs.push_back(s + through.div_ceil(flit));
            issue += 1;
        }
        let start = start.expect("a frame has a line");
        self.next_issue = issue;
        self.data_end = start + (len as u64).div_ceil(flit);
        Fetch { last_get: issue - 1, data_end: self.data_end }
    }
}

/// For each 64-byte line of `[addr, addr + len)`, the frame's bytes up to its end.
fn line_ends(addr: u64, len: usize) -> impl Iterator<Item = u64> {
    let end = addr + len.max(1) as u64;
    let lines = addr / GET_BYTES..end.div_ceil(GET_BYTES);
    lines.map(move |l| ((l + 1) * GET_BYTES).min(end) - addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_frame_issues_a_get_a_cycle_then_one_per_line_of_data() {
        // 1,024 bytes aligned: 16 Gets. The first 8 at 100..107; data back from 130, 8 flits
        // a line, so Get 8 waits for line 0's data (138), Get 15 for line 7's (194).
        let f = Reader::default().fetch(100, 0x1000, 1024, 30, 8);
        assert_eq!(f, Fetch { last_get: 130 + 8 * 8, data_end: 130 + 128 });
        // A short frame: its Gets are not held back.
        assert_eq!(Reader::default().fetch(100, 0x1000, 200, 30, 8).last_get, 103);
    }

    #[test]
    fn the_next_frame_shares_the_window_and_streams_after() {
        let mut r = Reader::default();
        let a = r.fetch(100, 0x1000, 1024, 30, 8);
        let b = r.fetch(a.last_get, 0x2000, 64, 30, 8);
        // Its one Get waits for the slot of the first frame's Get 8 (line 8 back at 202).
        assert_eq!(b.last_get, 130 + 9 * 8);
        assert_eq!(b.data_end, a.data_end + 8);
    }

    #[test]
    fn lines_of_an_unaligned_frame() {
        assert_eq!(line_ends(0x1030, 100).collect::<Vec<_>>(), vec![16, 80, 100]);
    }
}
