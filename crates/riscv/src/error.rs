//! What `Core::run` reports: exits, blocking reasons, fatal errors and statistics.

use std::fmt;

use crate::decode::is_fp_opcode;
use crate::mem::{BOOT_BASE, CLINT_BASE, CLINT_SIZE};
use crate::runaway::StackOverflow;
use crate::unmodelled::unmodelled_extension;

/// What a blocked core waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOn {
    NetRx,
    NetTx,
    /// A nanoPU CSR access the platform could not answer at the core's local time.
    Csr(u16),
    /// A device register (memory-mapped I/O) the platform could not answer at the core's
    /// local time.
    Mmio,
}

/// Why `Core::run` returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// Local time reached the `until` limit.
    Limit,
    /// A platform access must be retried later; the instruction had no effect.
    Blocked(BlockOn),
    /// `wfi` executed with no interrupt pending (pc already past the `wfi`).
    Wfi,
    /// The program exited with this code (HTIF or semihosting). Sticky.
    Halted(i64),
    /// Fatal error. Sticky. Boxed, so that an `Exit` is 16 bytes: a `Core` keeps two (its
    /// sticky exit and the one pending), and a node's 4 `Core`s fit mimalloc's 8 KiB class
    /// (docs/profile.md).
    Error(Box<CoreError>),
}

/// Why a core stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// A trap with no handler installed (`mtvec` = 0, docs/abi.md). `text`: the instruction
    /// at pc is the program's text as loaded (`Program::is_loaded_text`).
    Trap { cause: u64, tval: u64, text: bool },
    /// The same trap taken again and again with no progress (trap.rs `note_trap`): at the
    /// handler's entry (`mtvec` unfetchable or its first instruction traps), or inside the
    /// handler with the same registers each time. `first` is the trap that entered the
    /// handler (the first since the last `mret`), when it is not the looping one.
    TrapLoop { cause: u64, tval: u64, mtvec: u64, first: Option<TrapInfo>, text: bool },
    /// The platform (NIC) rejected an access.
    Platform(String),
}

/// A trap as taken: its cause, the PC it was taken at, `mtval`, and the encoding of the
/// instruction at that PC when it is readable and not already named (privileged spec 3.1.15
/// mepc, 3.1.16 mcause, 3.1.17 mtval). `text` as in [`ErrorKind::Trap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrapInfo {
    pub cause: u64,
    pub pc: u64,
    pub tval: u64,
    pub insn: Option<u32>,
    pub text: bool,
}

impl fmt::Display for TrapInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at pc {:#x}", describe(self.cause, self.tval, self.text), self.pc)?;
        match self.insn {
            Some(i) if i & 3 != 3 => write!(f, ", instruction {i:#06x}"),
            Some(i) => write!(f, ", instruction {i:#010x}"),
            None => Ok(()),
        }
    }
}

/// A fatal error, naming the hart and the PC of the offending instruction, and, for a trap,
/// the stack overflow that led to it if the stack pointer had left its stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreError {
    pub hart: usize,
    pub pc: u64,
    pub kind: ErrorKind,
    pub stack: Option<Box<StackOverflow>>,
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "core {}, pc {:#x}: ", self.hart, self.pc)?;
        if let Some(s) = &self.stack {
            write!(f, "{s}; the core then ran into: ")?;
        }
        match &self.kind {
            ErrorKind::Trap { cause, tval, text } => {
                write!(f, "{} (no trap handler: mtvec = 0)", describe(*cause, *tval, *text))
            }
            ErrorKind::TrapLoop { cause, tval, mtvec, first, text } => {
                trap_loop(f, self.pc, describe(*cause, *tval, *text), *mtvec, first.as_ref())
            }
            ErrorKind::Platform(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for CoreError {}

/// A trap loop, led by the trap that entered the handler when there is one.
fn trap_loop(
    f: &mut fmt::Formatter<'_>,
    pc: u64,
    what: String,
    mtvec: u64,
    first: Option<&TrapInfo>,
) -> fmt::Result {
    let Some(first) = first else {
        let place = if pc == mtvec { "at the trap handler's entry" } else { "in the trap handler" };
        return write!(f, "{what} repeated {place} (trap loop)");
    };
    let place = if pc == mtvec { "at its entry".to_string() } else { format!("at pc {pc:#x}") };
    write!(
        f,
        "{first}; then the trap handler (mtvec {mtvec:#x}) trapped {place} repeatedly: {what} (trap loop)"
    )
}

/// Human description of a trap cause (RISC-V privileged spec table 3.6); `text` as in
/// [`ErrorKind::Trap`].
pub fn describe(cause: u64, tval: u64, text: bool) -> String {
    if cause >> 63 != 0 {
        return format!("interrupt {}", cause & 0xff);
    }
    match cause {
        0 => format!("instruction address misaligned at {tval:#x}"),
        1 => format!("instruction access fault at {tval:#x} ({})", region(tval)),
        2 => format!("illegal instruction {tval:#010x} ({})", illegal_hint(tval as u32, text)),
        3 => "breakpoint (ebreak)".into(),
        4 => format!("load address misaligned at {tval:#x}"),
        5 => format!("load access fault at {tval:#x} ({})", region(tval)),
        6 => format!("store/AMO address misaligned at {tval:#x}"),
        7 => format!("store/AMO access fault at {tval:#x} ({})", region(tval)),
        11 => "environment call (ecall) from M-mode".into(),
        c => format!("exception {c}"),
    }
}

fn region(addr: u64) -> &'static str {
    if (BOOT_BASE..BOOT_BASE + 4096).contains(&addr) {
        "boot info page is read-only and not executable"
    } else if (CLINT_BASE..CLINT_BASE + CLINT_SIZE).contains(&addr) {
        "unsupported CLINT access"
    } else {
        "outside memory"
    }
}

/// Why an encoding may be illegal. For the program's own text an unmodelled standard
/// extension is named first (`unmodelled.rs`), since it is the likelier reason than a
/// reserved encoding; any other word (data, code overwritten at run time) is not an
/// instruction the compiler chose, so no extension is blamed.
fn illegal_hint(raw: u32, text: bool) -> String {
    match unmodelled_extension(raw) {
        Some(ext) if text => format!("from the {ext} extension, which nanopu does not model"),
        _ if text || raw == 0 => known_hint(raw).into(),
        _ => "not the program's text as loaded: data, or code overwritten at run time".into(),
    }
}

fn known_hint(raw: u32) -> &'static str {
    if is_fp_opcode(raw) {
        "reserved F/D encoding or rounding mode, or FP off: mstatus.FS = 0"
    } else if raw & 0x7f == 0x73 {
        "unsupported CSR or system instruction"
    } else if raw == 0 {
        "all-zero encoding: jumped into unwritten memory?"
    } else {
        "unknown encoding"
    }
}

/// Per-core counters. `stall_*` are in cycles.
#[derive(Debug, Default, Clone, PartialEq, Eq, Hash)]
pub struct CoreStats {
    pub instret: u64,
    pub icache_misses: u64,
    pub dcache_misses: u64,
    pub l2_misses: u64,
    pub llc_misses: u64,
    pub stall_load_use: u64,
    pub stall_muldiv: u64,
    pub stall_branch: u64,
    pub stall_mem: u64,
    pub stall_netrx: u64,
    pub stall_nettx: u64,
    pub stall_wfi: u64,
    pub traps: u64,
    pub interrupts: u64,
}

/// Why the driver moved a core's local time forward (`Core::advance_to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallKind {
    NetRx,
    NetTx,
    Wfi,
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_is_named_only_for_the_programs_own_text() {
        let andn = 0x40b5_7533;
        assert!(describe(2, andn, true).contains("from the Zbb (bit manipulation: basic) extension"));
        assert_eq!(
            describe(2, andn, false),
            "illegal instruction 0x40b57533 (not the program's text as loaded: data, or code overwritten at run time)"
        );
        assert!(describe(2, 0, false).contains("(all-zero encoding: jumped into unwritten memory?)"));
    }

    #[test]
    fn reserved_zcb_space_is_no_zcb_instruction() {
        assert_eq!(unmodelled_extension(0x9000), None, "quadrant 0 funct6 100100 is reserved");
        assert!(unmodelled_extension(0x8000).is_some(), "c.lbu s0, 0(s0)");
    }
}
