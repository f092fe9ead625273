//! The one seam between a core and the world outside it: the nanoPU register interface.
//!
//! The ISS knows nothing of the NIC. Reads of `x30` (netRX), writes of `x31` (netTX) and
//! accesses to the nanoPU CSRs 0x052..=0x061 are forwarded to a [`Platform`] (docs/platform.md section 2).
//! A core runs ahead of global time; when the platform cannot answer an access exactly at the
//! core's local time it returns [`Stop::Blocked`], the instruction is *not* executed, `run`
//! returns [`crate::Exit::Blocked`], and the driver re-runs the core once global time has
//! caught up (or once the awaited word arrives). Hence: a call that returns `Err` must have
//! had no effect, and an instruction whose platform access blocked has no architectural effect.

/// Why a platform access did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Not answerable at this local time: yield and retry the same instruction later.
    Blocked,
    /// The program did something invalid (bad message header, context out of range...).
    /// The run stops with this message; the core adds its hart id and PC. Boxed (made by
    /// [`Stop::fault`]), so that an answer such as `Access<u64>` is two machine words and
    /// comes back in registers: with the `String` inline it went through memory at every
    /// netRX read, netTX check and CSR access.
    Fault(Box<String>),
}

impl Stop {
    /// The fault with message `msg`.
    #[cold]
    pub fn fault(msg: impl Into<String>) -> Stop {
        Stop::Fault(Box::new(msg.into()))
    }
}

/// Result of a platform access.
pub type Access<T> = Result<T, Stop>;

/// The nanoPU extension as seen from one node's cores. `now` is the calling core's local
/// cycle count; `hart` its index within the node.
pub trait Platform {
    /// May `need` (1 or 2) netRX words be popped now? Called before executing an
    /// instruction that reads `x30` once or twice.
    fn rx_ready(&mut self, hart: usize, now: u64, need: u32) -> Access<()>;
    /// Pop one netRX word. Only called after `rx_ready` returned `Ok` for this instruction.
    fn rx_pop(&mut self, hart: usize, now: u64) -> u64;
    /// `rx_ready(hart, now, 1)` and, if it is `Ok`, `rx_pop`: the read of one netRX word,
    /// the common case, in one call (a platform may then find its queue once).
    fn rx_word(&mut self, hart: usize, now: u64) -> Access<u64> {
        self.rx_ready(hart, now, 1)?;
        Ok(self.rx_pop(hart, now))
    }
    /// May one word be pushed to netTX now? Called before executing an instruction that
    /// writes `x31`, before any netRX pop of that instruction.
    fn tx_ready(&mut self, hart: usize, now: u64) -> Access<()>;
    /// Push one word to netTX. Only called after `tx_ready` returned `Ok`. `Err` is fatal.
    fn tx_push(&mut self, hart: usize, now: u64, word: u64) -> Result<(), String>;
    /// Read a nanoPU CSR (0x052..=0x061) by the instruction at `pc`. Must be free of side
    /// effects. (`pc` lets a platform recognise idle loops such as `lnic_wait()`'s.)
    fn csr_read(&mut self, hart: usize, now: u64, pc: u64, csr: u16) -> Access<u64>;
    /// Write a nanoPU CSR (0x052..=0x061).
    fn csr_write(&mut self, hart: usize, now: u64, csr: u16, value: u64) -> Access<()>;
    /// After a successful `csr_write`: should `run` return (`Exit::Limit`) once this
    /// instruction completes, so the caller can act on what the write changed (for example
    /// the interrupt line) before the core goes on? Default: no.
    fn yield_after_write(&self, _hart: usize) -> bool {
        false
    }
    /// Read `size` bytes of a device register at `addr` (memory-mapped I/O: an address
    /// that is neither memory, the boot page nor the CLINT). `Ok(None)`: no device there
    /// (the load raises an access fault). A read may change the device (popping a queue).
    fn mmio_read(&mut self, _hart: usize, _now: u64, _addr: u64, _size: usize) -> Access<Option<u64>> {
        Ok(None)
    }
    /// Write `size` bytes of a device register. `Ok(false)`: no device there.
    fn mmio_write(&mut self, _hart: usize, _now: u64, _addr: u64, _size: usize, _value: u64) -> Access<bool> {
        Ok(false)
    }
}

/// First and last CSR address owned by the platform (docs/platform.md section 2 table).
pub const NANOPU_CSR_FIRST: u16 = 0x052;
pub const NANOPU_CSR_LAST: u16 = 0x061;

/// A platform with no NIC: x30/x31 never ready, nanoPU CSRs read as zero. For tests and
/// plain RISC-V programs.
pub struct NoNic;

impl Platform for NoNic {
    fn rx_ready(&mut self, _: usize, _: u64, _: u32) -> Access<()> {
        Err(Stop::fault("netRX read on a node without a NIC"))
    }
    fn rx_pop(&mut self, _: usize, _: u64) -> u64 {
        0
    }
    fn tx_ready(&mut self, _: usize, _: u64) -> Access<()> {
        Err(Stop::fault("netTX write on a node without a NIC"))
    }
    fn tx_push(&mut self, _: usize, _: u64, _: u64) -> Result<(), String> {
        Ok(())
    }
    fn csr_read(&mut self, _: usize, _: u64, _: u64, _: u16) -> Access<u64> {
        Ok(0)
    }
    fn csr_write(&mut self, _: usize, _: u64, _: u16, _: u64) -> Access<()> {
        Ok(())
    }
}
