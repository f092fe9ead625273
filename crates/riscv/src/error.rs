//! What `Core::run` reports: exits, blocking reasons, fatal errors and statistics.

use std::fmt;

use crate::decode::is_fp_opcode;
use crate::mem::{BOOT_BASE, CLINT_BASE, CLINT_SIZE};

/// What a blocked core waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOn {
    NetRx,
    NetTx,
    /// A nanoPU CSR access the platform could not answer at the core's local time.
    Csr(u16),
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
    /// Fatal error. Sticky.
    Error(CoreError),
}

/// Why a core stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// A trap with no handler installed (`mtvec` = 0, docs/abi.md).
    Trap { cause: u64, tval: u64 },
    /// A trap taken at the handler's own entry with the same cause, repeatedly.
    TrapLoop { cause: u64, tval: u64 },
    /// The platform (NIC) rejected an access.
    Platform(String),
}

/// A fatal error, naming the hart and the PC of the offending instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreError {
    pub hart: usize,
    pub pc: u64,
    pub kind: ErrorKind,
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "core {}, pc {:#x}: ", self.hart, self.pc)?;
        match &self.kind {
            ErrorKind::Trap { cause, tval } => {
                write!(f, "{} (no trap handler: mtvec = 0)", describe(*cause, *tval))
            }
            ErrorKind::TrapLoop { cause, tval } => {
                write!(f, "{} repeated at the trap handler's entry (trap loop)", describe(*cause, *tval))
            }
            ErrorKind::Platform(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for CoreError {}

/// Human description of a trap cause (RISC-V privileged spec table 3.6).
pub fn describe(cause: u64, tval: u64) -> String {
    if cause >> 63 != 0 {
        return format!("interrupt {}", cause & 0xff);
    }
    match cause {
        0 => format!("instruction address misaligned at {tval:#x}"),
        1 => format!("instruction access fault at {tval:#x} ({})", region(tval)),
        2 => format!("illegal instruction {tval:#010x} ({})", illegal_hint(tval as u32)),
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

fn illegal_hint(raw: u32) -> &'static str {
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
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CoreStats {
    pub instret: u64,
    pub icache_misses: u64,
    pub dcache_misses: u64,
    pub l2_misses: u64,
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
