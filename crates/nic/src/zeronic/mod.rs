//! ZeroNIC (Skiadopoulos et al., OSDI'24; docs/models/zeronic.md): a NIC that separates the
//! data path from the control path. Arriving TCP segments are split: the payload is placed
//! by (flow, sequence number) straight into registered application memory (the Memory
//! Region table and each flow's Memory Segment, `segment`), and only the headers with a
//! few words of metadata reach software, through a control queue. On transmit, software
//! posts a header and names the payload by (region, offset, length); the NIC reads the
//! payload from registered memory and merges the two, filling in the TCP checksum.
//!
//! The control queue is an IceNIC (`icenic`): the same memory-mapped send and receive
//! queues, with its own depth and buffer (`ZeroParams`), so the control stack's driver is
//! an IceNIC driver; ZeroNIC's registers sit beside IceNIC's in the same block. Like IceNIC
//! it never schedules anything: its methods return [`ZeroAction`]s.

pub mod segment;
pub mod wire;

use crate::icenic::{IceAction, IceNic, IceParams};
use segment::{Flow, Piece, Region};
use std::collections::VecDeque;

/// ZeroNIC's registers, offsets from the IceNIC block's base (docs/models/zeronic.md
/// "Registers"); each a 64-bit write.
pub mod reg {
    /// First operand of a command.
    pub const ARG0: u64 = 0x100;
    /// Second operand of a command.
    pub const ARG1: u64 = 0x108;
    /// A command: bits 7:0 the opcode (`op`), 15:8 a region or flow number.
    pub const CMD: u64 = 0x110;
    /// The payload of the next send request: bits 15:0 length, 23:16 region, 63:24 offset.
    pub const TX_PAYLOAD: u64 = 0x118;
}

/// Command opcodes (`reg::CMD`).
pub mod op {
    /// Register region N: ARG0 its address, ARG1 its length in bytes.
    pub const REGION: u64 = 1;
    /// Open flow N: ARG0 = remote IPv4 << 32 | remote port << 16 | local port, ARG1 the
    /// sequence number of the flow's first payload byte. Its Memory Segment starts empty.
    pub const FLOW: u64 = 2;
    /// Append a piece to flow N's Memory Segment: ARG0 = region << 56 | offset, ARG1 its
    /// length; it holds the stream from where the previous piece ended.
    pub const PIECE: u64 = 3;
    /// Retire flow N's pieces that end at or before sequence number ARG0.
    pub const RETIRE: u64 = 4;
}

/// Metadata ZeroNIC appends to every header it hands the control queue (little-endian):
/// magic, flags, flow, first sequence number placed, bytes placed, payload bytes.
pub mod meta {
    pub const BYTES: usize = 12;
    pub const MAGIC: u16 = 0x5a4e;
    /// The TCP checksum verified (over header and payload).
    pub const CSUM_OK: u8 = 1;
    /// The frame was TCP: its payload (if any) was cut off (placed, or not).
    pub const SPLIT: u8 = 2;
    /// No flow: the flow byte of a segment that matched none.
    pub const NO_FLOW: u8 = 0xff;
}

/// ZeroNIC's parameters (docs/models/zeronic.md "Parameters": each with its source or
/// marked an estimate there).
#[derive(Clone, Debug, PartialEq)]
pub struct ZeroParams {
    /// Depth of the control queues (IceNIC's send and receive queues). Default 64
    /// (*estimate*: a descriptor ring; IceNIC's RTL has 10).
    pub ctrl_queue_depth: usize,
    /// Buffer of headers waiting for a control-queue slot, bytes. Default 65,536
    /// (*estimate*).
    pub ctrl_buffer_bytes: usize,
    /// Payload waiting for placement, bytes: a frame that does not fit is dropped.
    /// Default 262,144 (*estimate*: on-NIC packet buffer).
    pub payload_buffer_bytes: usize,
    /// Rate of the DMA engines to and from memory, bytes per node cycle. Default 9.84:
    /// PCIe 4.0 x16 (16 GT/s x 16 lanes x 128/130 = 252 Gb/s per direction) at 3.2 GHz,
    /// before TLP overheads (*estimate* of the effective rate).
    pub dma_bytes_per_cycle: f64,
    /// IOMMU translation of one DMA, cycles. Default 32 (10 ns at 3.2 GHz: an IOTLB hit;
    /// *estimate*, nothing published for ZeroNIC).
    pub iommu_cycles: u64,
    /// Memory Region table entries. Default 32 (*estimate*: two per flow-table entry, as the
    /// C TCP registers a send and a receive ring per connection slot; 16 held only 8 slots).
    pub regions: usize,
    /// Flow table entries. Default 16 (*estimate*).
    pub flows: usize,
    /// Pieces per Memory Segment. Default 16 (*estimate*).
    pub pieces: usize,
}

impl Default for ZeroParams {
    fn default() -> Self {
        ZeroParams {
            ctrl_queue_depth: 64,
            ctrl_buffer_bytes: 64 << 10,
            payload_buffer_bytes: 256 << 10,
            dma_bytes_per_cycle: 252e9 / 8.0 / 3.2e9,
            iommu_cycles: 32,
            regions: 32,
            flows: 16,
            pieces: 16,
        }
    }
}

impl ZeroParams {
    /// The control queue's IceNIC parameters: `ice` with this depth and buffer.
    pub fn control_queue(&self, ice: &IceParams) -> IceParams {
        IceParams {
            queue_depth: self.ctrl_queue_depth,
            rx_buffer_flits: self.ctrl_buffer_bytes / 8,
            ..ice.clone()
        }
    }
}

/// DMA writes: (address, bytes) each.
pub type Writes = Vec<(u64, Vec<u8>)>;

/// Something the caller must do for ZeroNIC.
#[derive(Clone, Debug, PartialEq)]
pub enum ZeroAction {
    /// What the control queue (IceNIC) asked for.
    Ice(IceAction),
    /// Write each (address, bytes) through the memory system from `at`, `stream` cycles of
    /// data plus the slowest line's latency; then call [`ZeroNic::placed`] with `id`.
    Place { at: u64, id: u64, writes: Writes, stream: u64 },
    /// Read `len` bytes of payload at `addr` from `at`; then call [`ZeroNic::payload_read`].
    ReadPayload { at: u64, addr: u64, len: usize, stream: u64 },
}

/// What ZeroNIC did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZeroCounters {
    /// TCP segments whose payload was cut off the header.
    pub segments_split: u64,
    /// Payload bytes written into registered memory.
    pub bytes_placed: u64,
    /// Payload bytes outside every piece (out of window, or to no flow): not placed.
    pub bytes_not_placed: u64,
    /// Segments whose TCP checksum failed: nothing placed.
    pub bad_checksums: u64,
    /// Frames dropped because the payload buffer was full.
    pub dropped_full: u64,
    /// Frames sent with payload merged from registered memory, and its bytes.
    pub frames_merged: u64,
    pub bytes_merged: u64,
}

/// A received frame on its way to the control queue: its header (with metadata), and
/// whether its payload has been placed.
struct Arrival {
    id: u64,
    header: Vec<u8>,
    held: usize,
    done: bool,
}

/// A send request's payload: region, offset, length.
#[derive(Clone, Copy, Debug)]
struct TxPayload {
    mr: u8,
    offset: u64,
    len: usize,
}

/// One node's ZeroNIC.
pub struct ZeroNic {
    p: ZeroParams,
    /// The control queues.
    pub ice: IceNic,
    regions: Vec<Option<Region>>,
    flows: Vec<Option<Flow>>,
    args: [u64; 2],
    /// The payload written for the next send request, and those of requests queued.
    next_tx: Option<TxPayload>,
    tx_payloads: VecDeque<Option<TxPayload>>,
    /// The header read for a send whose payload is being read.
    merging: Option<Vec<u8>>,
    arrivals: VecDeque<Arrival>,
    next_id: u64,
    held: usize,
    /// The cycle the placement engine is free to stream the next payload.
    write_free: u64,
    /// Regions registered since the caller last asked (`take_new_regions`).
    new_regions: Vec<Region>,
    pub counters: ZeroCounters,
}

impl ZeroNic {
    pub fn new(p: ZeroParams, mut ice: IceNic) -> ZeroNic {
        ice.whole_frame = true; // the send completes once header and payload are merged
        ZeroNic {
            regions: vec![None; p.regions],
            flows: vec![None; p.flows],
            p,
            ice,
            args: [0; 2],
            next_tx: None,
            tx_payloads: VecDeque::new(),
            merging: None,
            arrivals: VecDeque::new(),
            next_id: 0,
            held: 0,
            write_free: 0,
            new_regions: Vec::new(),
            counters: ZeroCounters::default(),
        }
    }

    pub fn params(&self) -> &ZeroParams {
        &self.p
    }

    /// The regions registered since the last call: the caller watches them (the payload
    /// bytes the cores touch are counted, docs/models/zeronic.md "The count").
    pub fn take_new_regions(&mut self) -> Vec<Region> {
        std::mem::take(&mut self.new_regions)
    }

    /// A store of `value` at `addr` (in the IceNIC block) at cycle `now`.
    pub fn write(
        &mut self,
        now: u64,
        addr: u64,
        size: usize,
        value: u64,
        out: &mut Vec<IceAction>,
    ) -> Result<(), String> {
        let off = addr - self.ice.params().base;
        if off < reg::ARG0 {
            return self.ice_write(now, addr, size, value, out);
        }
        if size != 8 {
            return Err(format!("ZeroNIC: register {off:#x} takes 64-bit stores, not {size}-byte"));
        }
        match off {
            reg::ARG0 | reg::ARG1 => self.args[((off - reg::ARG0) / 8) as usize] = value,
            reg::CMD => self.command(value)?,
            reg::TX_PAYLOAD => self.tx_payload(value)?,
            _ => return Err(format!("ZeroNIC: no writable register at offset {off:#x}")),
        }
        Ok(())
    }

    /// IceNIC's registers; a send request takes the payload written before it.
    fn ice_write(
        &mut self,
        now: u64,
        addr: u64,
        size: usize,
        v: u64,
        out: &mut Vec<IceAction>,
    ) -> Result<(), String> {
        let send = addr - self.ice.params().base == crate::icenic::reg::SEND_REQ;
        if send {
            let hdr = ((v >> 48) & 0x7fff) as usize;
            let total = hdr + self.next_tx.map_or(0, |t| t.len);
            if total > self.ice.params().max_frame_bytes {
                return Err(format!(
                    "ZeroNIC: a {hdr}-byte header with its payload makes a {total}-byte frame (at most {})",
                    self.ice.params().max_frame_bytes
                ));
            }
        }
        self.ice.write(now, addr, size, v, out)?;
        if send {
            self.tx_payloads.push_back(self.next_tx.take());
        }
        Ok(())
    }

    fn command(&mut self, cmd: u64) -> Result<(), String> {
        let (opcode, n) = (cmd & 0xff, ((cmd >> 8) & 0xff) as usize);
        let [a0, a1] = self.args;
        match opcode {
            op::REGION => self.register(n, Region { addr: a0, len: a1 }),
            op::FLOW => self.open_flow(n, a0, a1 as u32),
            op::PIECE => self.append(n, (a0 >> 56) as u8, a0 & ((1 << 56) - 1), a1),
            op::RETIRE => self.flow_mut(n).map(|f| f.retire(a0 as u32)),
            _ => Err(format!("ZeroNIC: no command {opcode} (1 region, 2 flow, 3 piece, 4 retire)")),
        }
    }

    fn register(&mut self, n: usize, r: Region) -> Result<(), String> {
        let limit = self.regions.len();
        let slot = self.regions.get_mut(n).ok_or(format!("ZeroNIC: region {n} (the table has {limit})"))?;
        *slot = Some(r);
        self.new_regions.push(r);
        Ok(())
    }

    fn region(&self, mr: u8) -> Result<Region, String> {
        let r = self.regions.get(mr as usize).copied().flatten();
        r.ok_or(format!("ZeroNIC: region {mr} is not registered"))
    }

    fn open_flow(&mut self, n: usize, id: u64, seq: u32) -> Result<(), String> {
        let (rip, rport, lport) = ((id >> 32) as u32, (id >> 16) as u16, id as u16);
        let limit = self.flows.len();
        let slot = self.flows.get_mut(n).ok_or(format!("ZeroNIC: flow {n} (the table has {limit})"))?;
        *slot = Some(Flow { rip, rport, lport, next_seq: seq, pieces: Vec::new() });
        Ok(())
    }

    fn flow_mut(&mut self, n: usize) -> Result<&mut Flow, String> {
        self.flows.get_mut(n).and_then(|f| f.as_mut()).ok_or(format!("ZeroNIC: flow {n} is not open"))
    }

    fn append(&mut self, n: usize, mr: u8, offset: u64, len: u64) -> Result<(), String> {
        let r = self.region(mr)?;
        if len == 0 || len > u32::MAX as u64 || offset.checked_add(len).is_none_or(|e| e > r.len) {
            return Err(format!(
                "ZeroNIC: piece of {len} bytes at {offset} outside region {mr} ({} bytes)",
                r.len
            ));
        }
        let max = self.p.pieces;
        let f = self.flow_mut(n)?;
        if f.pieces.len() == max {
            return Err(format!(
                "ZeroNIC: flow {n}'s Memory Segment already has {max} pieces; retire some first"
            ));
        }
        f.pieces.push(Piece { seq: f.next_seq, mr, offset, len: len as u32 });
        f.next_seq = f.next_seq.wrapping_add(len as u32);
        Ok(())
    }

    fn tx_payload(&mut self, v: u64) -> Result<(), String> {
        let t = TxPayload { len: (v & 0xffff) as usize, mr: (v >> 16) as u8, offset: v >> 24 };
        let r = self.region(t.mr)?;
        if t.offset + t.len as u64 > r.len {
            return Err(format!(
                "ZeroNIC: payload of {} bytes at {} outside region {}",
                t.len, t.offset, t.mr
            ));
        }
        if self.next_tx.replace(t).is_some() {
            return Err("ZeroNIC: a second payload written before a send request took the first".into());
        }
        Ok(())
    }

    fn stream(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.p.dma_bytes_per_cycle).ceil() as u64
    }
}

mod datapath;
