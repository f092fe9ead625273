//! ZeroNIC's data path: the split of arriving segments (payload placed, header to the
//! control queue, in arrival order) and the merge of posted headers with payload read
//! from registered memory (docs/models/zeronic.md "Receive" and "Transmit").

use super::{meta, wire, Arrival, Writes, ZeroAction, ZeroNic};
use crate::icenic::IceAction;

impl ZeroNic {
    /// A frame's last byte reached the NIC at `now`.
    pub fn frame_arrived(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<ZeroAction>) {
        if self.held + frame.len() > self.p.payload_buffer_bytes {
            self.counters.dropped_full += 1;
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        let (header, writes) = self.split(&frame);
        let held = writes.iter().map(|(_, b)| b.len()).sum::<usize>();
        let done = writes.is_empty();
        if !done {
            let start = self.write_free.max(now + self.ice.params().rx_pipe_cycles);
            let stream = self.stream(held);
            self.write_free = start + stream;
            let at = start + self.p.iommu_cycles + self.ice.params().pcie_cycles;
            out.push(ZeroAction::Place { at, id, writes, stream });
        }
        self.held += held;
        self.arrivals.push_back(Arrival { id, header, held, done });
        self.deliver(now, out);
    }

    /// The header (with metadata) for the control queue, and the payload writes.
    fn split(&mut self, frame: &[u8]) -> (Vec<u8>, Writes) {
        let Some(t) = wire::parse(frame) else {
            return (with_meta(frame, 0, meta::NO_FLOW, 0, 0, 0), Vec::new());
        };
        self.counters.segments_split += (t.payload_len > 0) as u64;
        let ok = wire::checksum_ok(frame, &t);
        self.counters.bad_checksums += !ok as u64;
        let flow =
            self.flows.iter().position(|f| f.as_ref().is_some_and(|f| f.matches(t.src_ip, t.sport, t.dport)));
        let (start, writes) = match flow {
            Some(n) if ok => self.placements(n, frame, &t),
            _ => (t.seq, Vec::new()),
        };
        let placed = writes.iter().map(|(_, b)| b.len()).sum::<usize>();
        self.counters.bytes_placed += placed as u64;
        self.counters.bytes_not_placed += (t.payload_len - placed) as u64;
        let flags = meta::SPLIT | if ok { meta::CSUM_OK } else { 0 };
        let flow = flow.map_or(meta::NO_FLOW, |n| n as u8);
        (with_meta(&frame[..t.payload_at], flags, flow, start, placed, t.payload_len), writes)
    }

    /// Where flow `n`'s segment `t` goes: runs of registered memory, translated.
    fn placements(&self, n: usize, frame: &[u8], t: &wire::TcpFrame) -> (u32, Writes) {
        let f = self.flows[n].as_ref().expect("matched");
        let (start, runs) = f.place(t.seq, t.payload_len as u32);
        let mut at = t.payload_at + start.wrapping_sub(t.seq) as usize;
        let mut writes = Vec::new();
        for (mr, off, len) in runs {
            let r = self.regions[mr as usize].expect("a piece's region is registered");
            writes.push((r.addr + off, frame[at..at + len as usize].to_vec()));
            at += len as usize;
        }
        (start, writes)
    }

    /// Placement `id`'s payload is in memory.
    pub fn placed(&mut self, now: u64, id: u64, out: &mut Vec<ZeroAction>) {
        if let Some(a) = self.arrivals.iter_mut().find(|a| a.id == id) {
            a.done = true;
        }
        self.deliver(now, out);
    }

    /// Headers whose payload is in memory go to the control queue, in arrival order: a
    /// header never reaches software before its payload.
    fn deliver(&mut self, now: u64, out: &mut Vec<ZeroAction>) {
        let mut ice = Vec::new();
        while self.arrivals.front().is_some_and(|a| a.done) {
            let a = self.arrivals.pop_front().expect("checked");
            self.held -= a.held;
            self.ice.frame_arrived(now, a.header, &mut ice);
        }
        out.extend(ice.into_iter().map(ZeroAction::Ice));
    }

    /// The control queue's DMA read of a header to send finished: merge its payload, if the
    /// send request named one, else send it (checksum filled) as it is.
    pub fn header_read(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<ZeroAction>) {
        let Some(t) = self.tx_payloads.pop_front().flatten() else { return self.send(now, frame, out) };
        let r = self.regions[t.mr as usize].expect("checked when written");
        self.merging = Some(frame);
        let at = now + self.p.iommu_cycles + self.ice.params().pcie_cycles;
        let stream = self.stream(t.len) + self.ice.params().pcie_cycles;
        out.push(ZeroAction::ReadPayload { at, addr: r.addr + t.offset, len: t.len, stream });
    }

    /// The payload of the send being merged has been read.
    pub fn payload_read(&mut self, now: u64, payload: Vec<u8>, out: &mut Vec<ZeroAction>) {
        let mut frame = self.merging.take().expect("a merge in progress");
        self.counters.frames_merged += 1;
        self.counters.bytes_merged += payload.len() as u64;
        frame.extend_from_slice(&payload);
        self.send(now, frame, out);
    }

    /// To the wire through the control queue's reader, the TCP checksum filled in.
    fn send(&mut self, now: u64, mut frame: Vec<u8>, out: &mut Vec<ZeroAction>) {
        if let Some(t) = wire::parse(&frame) {
            wire::fill_checksum(&mut frame, &t);
        }
        let mut ice: Vec<IceAction> = Vec::new();
        self.ice.read_done(now, frame, &mut ice);
        out.extend(ice.into_iter().map(ZeroAction::Ice));
    }
}

/// `header` followed by the metadata words (`meta`).
fn with_meta(header: &[u8], flags: u8, flow: u8, seq: u32, placed: usize, payload: usize) -> Vec<u8> {
    let mut h = header.to_vec();
    h.extend_from_slice(&meta::MAGIC.to_le_bytes());
    h.extend_from_slice(&[flags, flow]);
    h.extend_from_slice(&seq.to_le_bytes());
    h.extend_from_slice(&(placed as u16).to_le_bytes());
    h.extend_from_slice(&(payload as u16).to_le_bytes());
    h
}
