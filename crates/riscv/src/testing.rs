//! Helpers to run a whole program on one core, for tests, examples and tools.

use std::sync::Arc;

use crate::{Core, ElfError, Exit, MemParams, NoNic, NodeMem, Program, StallKind, TimingParams};

/// Outcome of [`run_to_exit`].
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The final exit: `Halted(code)`, `Error(..)`, or `Limit` if `max_cycles` ran out.
    pub exit: Exit,
    pub console: Vec<u8>,
    pub cycles: u64,
    pub instret: u64,
    pub stats: crate::CoreStats,
}

/// Run hart 0 of a one-core node on `elf` with no NIC until it exits, fails, or reaches
/// `max_cycles`. `wfi` with no interrupt source sleeps until the timer (or the limit).
pub fn run_to_exit(elf: &[u8], max_cycles: u64) -> Result<RunResult, ElfError> {
    run_with(elf, max_cycles, &TimingParams::default())
}

/// [`run_to_exit`] with explicit timing parameters.
pub fn run_with(elf: &[u8], max_cycles: u64, timing: &TimingParams) -> Result<RunResult, ElfError> {
    let program = Arc::new(Program::load(elf)?);
    let mut mem = NodeMem::new(program.clone(), 1, &MemParams::default(), timing)?;
    let mut core = Core::new(0, &program, timing);
    let exit = loop {
        match core.run(&mut mem, &mut NoNic, max_cycles) {
            Exit::Wfi => {
                let wake = core.timer_deadline(&mem).unwrap_or(max_cycles).min(max_cycles);
                core.advance_to(wake, StallKind::Wfi);
            }
            e => break e,
        }
    };
    Ok(RunResult {
        exit,
        console: core.take_console(),
        cycles: core.cycle(),
        instret: core.stats().instret,
        stats: core.stats().clone(),
    })
}

/// A one-core node running hand-assembled `code` (see [`crate::asm::elf_image`]).
pub struct Bench {
    pub core: Core,
    pub mem: NodeMem,
}

impl Bench {
    pub fn new(code: &[u32], nanopu: bool) -> Bench {
        Bench::with_timing(code, nanopu, &TimingParams::default())
    }

    /// As `new`, with these timings.
    pub fn with_timing(code: &[u32], nanopu: bool, timing: &TimingParams) -> Bench {
        let elf = crate::asm::elf_image(code, nanopu);
        let program = Arc::new(Program::load(&elf).expect("test image is a valid ELF"));
        let mem = NodeMem::new(program.clone(), 1, &MemParams::default(), timing).expect("fits in DRAM");
        Bench { core: Core::new(0, &program, timing), mem }
    }

    /// Run with no NIC until an exit or `max_cycles`.
    pub fn run(&mut self, max_cycles: u64) -> Exit {
        self.core.run(&mut self.mem, &mut NoNic, max_cycles)
    }
}
