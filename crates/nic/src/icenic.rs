//! IceNIC, FireSim's DMA NIC, as the traditional baseline beside the nanoPU NIC
//! (docs/models/icenic.md: every register, depth and size below, with its source).
//!
//! Software talks to it through memory-mapped registers: it writes send requests (one
//! 64-bit word: frame length and buffer address) and receive requests (a buffer address)
//! into two queues of 64, and reads completions back: a count of finished sends, and a
//! queue of the lengths of received frames. A DMA read engine fetches each frame to send
//! from memory, one request at a time, and counts the send complete once it has asked for
//! the frame's last line (`reader`); arriving frames wait in a receive packet buffer
//! (dropped when it is full) until the DMA write engine can copy the oldest into the
//! buffer of the next receive request. Two interrupt lines (send completion, receive
//! completion) are masked by a register. One frame per request, no descriptor rings.
//!
//! Like the nanoPU NIC it never schedules anything: its methods return [`IceAction`]s with
//! the cycle (of the node clock) at which the caller must act. Memory itself is the
//! caller's: a DMA action names the bytes to move, and the caller tells the NIC how long
//! the memory system takes ([`IceNic::gets_timed`]) and when it has moved them
//! ([`IceNic::gets_issued`], [`IceNic::data_in`], [`IceNic::write_done`]).

use std::collections::VecDeque;

mod limiter;
mod reader;
use limiter::Limiter;
pub use limiter::RateLimit;
use reader::Reader;
pub use reader::{GETS_IN_FLIGHT, GET_BYTES};

/// Register offsets from [`IceParams::base`] (icenet `IceNicControllerModule` regmap).
pub mod reg {
    /// Write: a send request (bits 47:0 address, 62:48 length in bytes, 63 "more parts").
    pub const SEND_REQ: u64 = 0x00;
    /// Write: a receive request (a buffer address).
    pub const RECV_REQ: u64 = 0x08;
    /// Read (1 bit): 1 and one send completion taken, or 0 when none.
    pub const SEND_COMP: u64 = 0x10;
    /// Read (16 bits): the length of the oldest received frame, taken (0 when none).
    pub const RECV_COMP: u64 = 0x12;
    /// Read, one byte each: send request space, receive request space, send completions,
    /// receive completions.
    pub const COUNTS: u64 = 0x14;
    /// Read (48 bits): the node's MAC address.
    pub const MACADDR: u64 = 0x18;
    /// Read/write (2 bits): interrupt mask, bit 0 send completion, bit 1 receive completion.
    pub const INTMASK: u64 = 0x20;
}

/// IceNIC's parameters; defaults from the RTL (docs/models/icenic.md). The queue and buffer
/// sizes are those of the nanoPU artifact's IceNIC SoC, whose figures the paper plots
/// (docs/models/icenic.md "Queue and buffer sizes").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IceParams {
    /// Base of the register block. Default 0x1001_6000 (`CanHavePeripheryIceNIC`).
    pub base: u64,
    /// Size of the register block: 4 KiB (a TileLink register router's default).
    pub size: u64,
    /// Depth of the four control queues. Default 64: `ctrlQueueDepth` of `WithIceNIC`
    /// (l-nic/icenet 512c87e `Configs.scala`), which the artifact's `IceNICRocketConfig`
    /// (l-nic/chipyard 1fe1357) adds unchanged. icenet's own `NICConfig` default is 10.
    pub queue_depth: usize,
    /// Receive packet buffer in 8-byte flits. Default 1,800: `inBufFlits` of the same
    /// `WithIceNIC`. icenet's own `NICConfig` default is 379 (2 x 1,516 / 8).
    pub rx_buffer_flits: usize,
    /// Longest frame accepted. Default 1,516 bytes (`ETH_STANDARD_MAX_BYTES`: MTU 1,500 +
    /// the 16-byte padded Ethernet header).
    pub max_frame_bytes: usize,
    /// Shortest frame accepted: the padded Ethernet header, 16 bytes (`ETH_HEAD_BYTES`;
    /// the packet buffer drops frames shorter than its header).
    pub min_frame_bytes: usize,
    /// Bytes the NIC datapath moves per cycle: 8 (`NET_IF_WIDTH` = 64 bits).
    pub flit_bytes: u64,
    /// Cycles from the last flit read from memory to the frame's first bit on the wire:
    /// the reservation buffer, aligner and rate limiter stages. Default 4 (*estimate*).
    pub tx_pipe_cycles: u64,
    /// The send path's rate limiter (icenet `RateLimiter`), whose settings are inputs of
    /// the NIC. Default [`RateLimit::FULL`], a flit every cycle; the nanoPU artifact's
    /// Verilator harness sets [`RateLimit::SIM_NETWORK`], half that.
    pub rate_limit: RateLimit,
    /// Cycles from a frame's last flit in the packet buffer to its first flit at the
    /// writer (the length look-up). Default 2 (*estimate*: `NetworkPacketBuffer` reads the
    /// length one cycle, then the data one cycle).
    pub rx_pipe_cycles: u64,
    /// One-way PCIe latency in cycles: 0 (default) is the on-chip IceNIC; more is the
    /// PCIe-attached variant, a commodity NIC (docs/models/icenic.md "PCIe-attached
    /// variant"): a register write reaches the NIC this much later, a DMA read waits
    /// twice (request out, completion back), a DMA write once (posted).
    pub pcie_cycles: u64,
}

impl Default for IceParams {
    fn default() -> Self {
        IceParams {
            base: 0x1001_6000,
            size: 0x1000,
            queue_depth: 64,
            rx_buffer_flits: 1800,
            max_frame_bytes: 1516,
            min_frame_bytes: 16,
            flit_bytes: 8,
            tx_pipe_cycles: 4,
            rate_limit: RateLimit::FULL,
            rx_pipe_cycles: 2,
            pcie_cycles: 0,
        }
    }
}

impl IceParams {
    /// These parameters with the queue depth and the receive buffer (flits) given (`None`:
    /// unchanged), checked against what the NIC needs: counts of one byte each (the COUNTS
    /// register) and room for one longest frame. `names` name the two settings in errors.
    pub fn with_sizes(
        &self,
        depth: Option<usize>,
        flits: Option<usize>,
        names: [&str; 2],
    ) -> Result<IceParams, String> {
        let mut p = self.clone();
        if let Some(d) = depth {
            if !(1..=255).contains(&d) {
                return Err(format!(
                    "{} {d}: expected 1 to 255 (each count is one byte of COUNTS)",
                    names[0]
                ));
            }
            p.queue_depth = d;
        }
        if let Some(f) = flits {
            let least = p.max_frame_bytes.div_ceil(p.flit_bytes as usize);
            if !(least..=1 << 20).contains(&f) {
                return Err(format!("{} {f}: expected {least} (one longest frame) to 1048576", names[1]));
            }
            p.rx_buffer_flits = f;
        }
        Ok(p)
    }
}

/// Something the caller must do at cycle `at` of the node clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IceAction {
    /// The reader takes a send request: find the memory system's latency for reading `len`
    /// bytes at `addr` from `at` (a DMA read) and give it to [`IceNic::gets_timed`] at once.
    Gets { at: u64, addr: u64, len: usize },
    /// The frame's last Get issues at `at`: read its `len` bytes at `addr` from memory then
    /// and give them to [`IceNic::gets_issued`].
    GetsIssued { at: u64, addr: u64, len: usize },
    /// The frame's last data is out of the reader at `at`: call [`IceNic::data_in`].
    DataIn { at: u64 },
    /// Read `len` bytes at `addr` through the memory system, starting at `at`; call
    /// [`IceNic::read_done`] with them once the last has arrived (`stream` cycles after the
    /// memory's latency: the datapath moves one flit a cycle). ZeroNIC's sender only
    /// ([`IceNic::whole_frame`]).
    DmaRead { at: u64, addr: u64, len: usize, stream: u64 },
    /// Write `frame` at `addr` through the memory system from `at`; call
    /// [`IceNic::write_done`] once the last byte is written (`stream` cycles plus latency).
    DmaWrite { at: u64, addr: u64, frame: Vec<u8>, stream: u64 },
    /// `frame` starts onto the wire at `at`.
    Transmit { at: u64, frame: Vec<u8> },
    /// The interrupt line may have moved: re-read [`IceNic::irq_level`] at `at`.
    Update { at: u64 },
}

/// Counters of what passed through the NIC.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IceCounters {
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Frames the receive packet buffer had no room for.
    pub dropped_full: u64,
    /// Frames longer than `max_frame_bytes` or shorter than `min_frame_bytes`.
    pub dropped_size: u64,
}

/// A send request as software encodes it.
pub fn send_request(addr: u64, len: u16) -> u64 {
    (addr & ((1 << 48) - 1)) | ((len as u64 & 0x7fff) << 48)
}

/// One node's IceNIC.
#[derive(Clone, Debug)]
pub struct IceNic {
    p: IceParams,
    mac: u64,
    send_req: VecDeque<u64>,
    recv_req: VecDeque<u64>,
    send_comp: usize,
    recv_comp: VecDeque<u16>,
    int_mask: u64,
    /// Frames in the receive packet buffer, oldest first.
    rx_buf: VecDeque<Vec<u8>>,
    rx_flits: usize,
    /// The DMA engines each work on one request at a time.
    reading: bool,
    writing: bool,
    /// The request the reader took, waiting for its latency (`gets_timed`): cycle, address,
    /// length.
    taken: Option<(u64, u64, usize)>,
    /// The reader's Gets in flight and its datapath.
    reader: Reader,
    /// Frames whose Gets have all issued and whose data still streams, oldest first.
    streaming: VecDeque<Vec<u8>>,
    /// Count a send complete once the whole frame is read, not at its last Get: ZeroNIC's
    /// sender, which merges a header and a payload (docs/models/zeronic.md "Transmit").
    pub whole_frame: bool,
    /// The send path's rate limiter, which frames pass in order.
    limiter: Limiter,
    pub counters: IceCounters,
}

impl IceNic {
    pub fn new(p: IceParams, mac: u64) -> IceNic {
        IceNic {
            p,
            mac,
            send_req: VecDeque::new(),
            recv_req: VecDeque::new(),
            send_comp: 0,
            recv_comp: VecDeque::new(),
            int_mask: 0,
            rx_buf: VecDeque::new(),
            rx_flits: 0,
            reading: false,
            writing: false,
            taken: None,
            reader: Reader::default(),
            streaming: VecDeque::new(),
            whole_frame: false,
            limiter: Limiter::default(),
            counters: IceCounters::default(),
        }
    }

    pub fn params(&self) -> &IceParams {
        &self.p
    }

    /// Receive buffers posted and not yet filled: what the receive request queue holds.
    pub fn posted_recvs(&self) -> usize {
        self.recv_req.len()
    }

    /// Is `addr` in the register block?
    pub fn owns(&self, addr: u64) -> bool {
        addr.wrapping_sub(self.p.base) < self.p.size
    }

    /// Does reading the register at `addr` change the NIC (pop a completion)?
    pub fn read_pops(&self, addr: u64) -> bool {
        matches!(addr - self.p.base, reg::SEND_COMP | reg::RECV_COMP)
    }

    /// Does the register's value depend on what the network or the DMA engines did?
    pub fn depends_on_arrivals(&self, addr: u64) -> bool {
        matches!(addr - self.p.base, reg::SEND_COMP | reg::RECV_COMP | reg::COUNTS..=0x17)
    }

    /// The level of the interrupt line: a completion of a kind the mask lets through.
    pub fn irq_level(&self) -> bool {
        (self.send_comp > 0 && self.int_mask & 1 != 0)
            || (!self.recv_comp.is_empty() && self.int_mask & 2 != 0)
    }

    /// A load of `size` bytes at `addr` at cycle `now`.
    pub fn read(
        &mut self,
        now: u64,
        addr: u64,
        size: usize,
        out: &mut Vec<IceAction>,
    ) -> Result<u64, String> {
        let off = addr - self.p.base;
        if off < reg::COUNTS && off + size as u64 > reg::RECV_COMP + (off >= reg::RECV_COMP) as u64 * 2 {
            return Err(format!(
                "IceNIC: a {size}-byte read at offset {off:#x} spans both completion registers"
            ));
        }
        let v = match off {
            reg::SEND_COMP => self.pop_send_comp(now, out),
            reg::RECV_COMP => self.pop_recv_comp(now, out),
            reg::COUNTS..=0x17 => self.counts() >> (8 * (off - reg::COUNTS)),
            reg::MACADDR..=0x1d => self.mac >> (8 * (off - reg::MACADDR)),
            reg::INTMASK => self.int_mask,
            _ => return Err(format!("IceNIC: no readable register at offset {off:#x}")),
        };
        Ok(truncate(v, size))
    }

    /// A store of `value` (`size` bytes) at `addr` at cycle `now`.
    pub fn write(
        &mut self,
        now: u64,
        addr: u64,
        size: usize,
        value: u64,
        out: &mut Vec<IceAction>,
    ) -> Result<(), String> {
        let off = addr - self.p.base;
        let now = now + self.p.pcie_cycles; // a posted write crosses PCIe to the NIC
        match (off, size) {
            (reg::SEND_REQ, 8) => self.push_send(now, value, out),
            (reg::RECV_REQ, 8) => self.push_recv(now, value, out),
            (reg::INTMASK, _) => {
                self.int_mask = value & 3;
                out.push(IceAction::Update { at: now });
                Ok(())
            }
            _ => Err(format!("IceNIC: no writable {size}-byte register at offset {off:#x}")),
        }
    }

    /// Send request space, receive request space, send completions, receive completions.
    fn counts(&self) -> u64 {
        let d = self.p.queue_depth;
        let bytes = [d - self.send_req.len(), d - self.recv_req.len(), self.send_comp, self.recv_comp.len()];
        bytes.iter().enumerate().map(|(i, &b)| (b as u64) << (8 * i)).sum()
    }

    fn pop_send_comp(&mut self, now: u64, out: &mut Vec<IceAction>) -> u64 {
        if self.send_comp == 0 {
            return 0;
        }
        self.send_comp -= 1;
        out.push(IceAction::Update { at: now });
        self.start_read(now, out); // a full completion count held the reader back
        1
    }

    fn pop_recv_comp(&mut self, now: u64, out: &mut Vec<IceAction>) -> u64 {
        let Some(len) = self.recv_comp.pop_front() else { return 0 };
        out.push(IceAction::Update { at: now });
        self.start_write(now, out);
        len as u64
    }

    /// The RTL's register write waits while the queue is full, stalling the core; a program
    /// that checks the space first (as icenet's drivers do) never meets it. We stop the
    /// program with an error instead (docs/models/icenic.md "Deviations").
    fn push_send(&mut self, now: u64, v: u64, out: &mut Vec<IceAction>) -> Result<(), String> {
        let len = (v >> 48) & 0x7fff;
        if len == 0 || len as usize > self.p.max_frame_bytes {
            return Err(format!("IceNIC: send request of {len} bytes (1 to {})", self.p.max_frame_bytes));
        }
        if self.send_req.len() == self.p.queue_depth {
            return Err(full("send", self.p.queue_depth));
        }
        self.send_req.push_back(v);
        self.start_read(now, out);
        Ok(())
    }

    fn push_recv(&mut self, now: u64, v: u64, out: &mut Vec<IceAction>) -> Result<(), String> {
        if self.recv_req.len() == self.p.queue_depth {
            return Err(full("receive", self.p.queue_depth));
        }
        self.recv_req.push_back(v & ((1 << 48) - 1));
        self.start_write(now, out);
        Ok(())
    }

    /// The reader takes the next send request when idle and a completion can be counted.
    fn start_read(&mut self, now: u64, out: &mut Vec<IceAction>) {
        if self.reading || self.send_comp == self.p.queue_depth {
            return;
        }
        let Some(req) = self.send_req.pop_front() else { return };
        let (addr, len) = (req & ((1 << 48) - 1), ((req >> 48) & 0x7fff) as usize);
        self.reading = true;
        let pcie = self.p.pcie_cycles; // the read request out, the completion back
        if self.whole_frame {
            let stream = self.flits(len) + pcie;
            return out.push(IceAction::DmaRead { at: now + pcie, addr, len, stream });
        }
        self.taken = Some((now, addr, len));
        out.push(IceAction::Gets { at: now + pcie, addr, len });
    }

    /// The memory system reads the lines of the request just taken in `lat` cycles: when
    /// its last Get issues and its last data is out (`reader`).
    pub fn gets_timed(&mut self, lat: u64, out: &mut Vec<IceAction>) {
        let (now, addr, len) = self.taken.take().expect("a request taken");
        let lat = lat + 2 * self.p.pcie_cycles;
        let f = self.reader.fetch(now, addr, len, lat, self.p.flit_bytes);
        out.push(IceAction::GetsIssued { at: f.last_get, addr, len });
        out.push(IceAction::DataIn { at: f.data_end });
    }

    /// The frame's last Get has issued, `frame` the bytes it reads: the send completes and
    /// the reader takes the next request, while the frame's data streams on (`data_in`).
    pub fn gets_issued(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<IceAction>) {
        self.streaming.push_back(frame);
        self.complete_send(now, out);
    }

    /// The oldest streaming frame's last flit is out of the reader: it goes to the wire.
    pub fn data_in(&mut self, now: u64, out: &mut Vec<IceAction>) {
        let frame = self.streaming.pop_front().expect("a frame streaming");
        let at = self.paced(now + self.p.tx_pipe_cycles, frame.len());
        out.push(IceAction::Transmit { at, frame });
    }

    /// The reader is done with its request: count the completion, take the next.
    fn complete_send(&mut self, now: u64, out: &mut Vec<IceAction>) {
        self.reading = false;
        self.send_comp += 1;
        self.counters.frames_sent += 1;
        out.push(IceAction::Update { at: now });
        self.start_read(now, out);
    }

    /// The whole frame to send has been read ([`IceNic::whole_frame`], ZeroNIC's sender): it
    /// goes to the wire, the send completes.
    pub fn read_done(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<IceAction>) {
        let at = self.paced(now + self.p.tx_pipe_cycles, frame.len());
        out.push(IceAction::Transmit { at, frame });
        self.complete_send(now, out);
    }

    /// When a frame whose last flit reaches the rate limiter at `ready` starts onto the
    /// wire. The reader streams the frame to the limiter a flit a cycle as memory returns
    /// it (`StreamReader`: data, reservation buffer, aligner), so the limiter takes it from
    /// `ready + 1 - flits`; this model's wire starts a frame once it is whole and moves a
    /// flit a cycle, so the frame starts at `ready` or, if the limiter holds it back, late
    /// enough that its last flit leaves the wire as it leaves the limiter.
    fn paced(&mut self, ready: u64, bytes: usize) -> u64 {
        if !self.p.rate_limit.limits() {
            return ready;
        }
        let flits = self.flits(bytes);
        let end = self.limiter.pass(&self.p.rate_limit, (ready + 1).saturating_sub(flits), flits);
        ready.max(end - flits)
    }

    /// A frame's last byte reached the NIC at `now`: into the packet buffer, or dropped.
    pub fn frame_arrived(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<IceAction>) {
        if frame.len() > self.p.max_frame_bytes || frame.len() < self.p.min_frame_bytes {
            self.counters.dropped_size += 1;
            return;
        }
        let flits = self.flits(frame.len()) as usize;
        if self.rx_flits + flits > self.p.rx_buffer_flits {
            self.counters.dropped_full += 1;
            return;
        }
        self.rx_flits += flits;
        self.rx_buf.push_back(frame);
        self.start_write(now + self.p.rx_pipe_cycles, out);
    }

    /// The writer takes the oldest buffered frame when idle, given a receive request and
    /// room for its completion.
    fn start_write(&mut self, now: u64, out: &mut Vec<IceAction>) {
        let room = self.recv_comp.len() < self.p.queue_depth;
        if self.writing || !room || self.rx_buf.is_empty() || self.recv_req.is_empty() {
            return;
        }
        let (addr, frame) =
            (self.recv_req.pop_front().expect("checked"), self.rx_buf.pop_front().expect("checked"));
        self.rx_flits -= self.flits(frame.len()) as usize; // freed as the writer streams it out
        self.writing = true;
        let stream = self.flits(frame.len());
        out.push(IceAction::DmaWrite { at: now + self.p.pcie_cycles, addr, frame, stream });
    }

    /// The frame is in memory: its length joins the receive completions.
    pub fn write_done(&mut self, now: u64, len: usize, out: &mut Vec<IceAction>) {
        self.writing = false;
        self.recv_comp.push_back(len as u16);
        self.counters.frames_received += 1;
        out.push(IceAction::Update { at: now });
        self.start_write(now, out);
    }

    fn flits(&self, bytes: usize) -> u64 {
        (bytes as u64).div_ceil(self.p.flit_bytes)
    }

    /// Frames waiting in the receive packet buffer.
    pub fn buffered(&self) -> usize {
        self.rx_buf.len()
    }
}

fn full(queue: &str, depth: usize) -> String {
    format!("IceNIC: {queue} request written with its queue full ({depth} requests); read the space at offset 0x14 first")
}

fn truncate(v: u64, size: usize) -> u64 {
    if size >= 8 {
        v
    } else {
        v & ((1u64 << (8 * size)) - 1)
    }
}
