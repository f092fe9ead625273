//! Fuzz target bodies: the one-line cargo-fuzz targets in `fuzz/` and the stable-Rust
//! driver in `tests/fuzz_elf.rs` both call these, so the same code is fuzzed either way.
//! A body must never panic on any input; it panics only when an input it accepted breaks
//! a promise, which is a bug the fuzzer should report.

use std::sync::Arc;

use crate::program::PAGE;
use crate::{Core, MemParams, NoNic, NodeMem, Program, TimingParams};

/// Cycles a loaded program runs for: enough to execute some of whatever the input holds,
/// few enough for thousands of inputs a second.
const RUN_CYCLES: u64 = 20_000;

/// Loads `data` as an ELF, lays out a node for it and runs it briefly. Returns whether the
/// loader accepted it.
pub fn elf(data: &[u8]) -> bool {
    let Ok(program) = Program::load(data) else { return false };
    let program = Arc::new(program);
    check_loaded(&program);
    let (mem, timing) = (MemParams::default(), TimingParams::default());
    let mut node = match NodeMem::new(program.clone(), 1, &mem, &timing) {
        Ok(node) => node,
        Err(e) => panic!("the loader accepted a program no node can hold: {e}"),
    };
    let _ = Core::new(0, &program, &timing).run(&mut node, &mut NoNic, RUN_CYCLES);
    true
}

/// What a loaded program promises: pre-decoded code lies inside DRAM, and there is no
/// more of it than the segments' file bytes (each rounded out to whole pages).
fn check_loaded(p: &Program) {
    let mem = MemParams::default();
    let (lo, hi) = (mem.dram_base, mem.dram_base + mem.dram_size);
    let mut decoded = 0;
    for (base, bytes) in p.code_ranges() {
        assert!(base >= lo && base + bytes <= hi, "code [{base:#x}, +{bytes:#x}) outside DRAM");
        decoded += bytes;
    }
    let file_bytes: u64 = p.segments.iter().map(|s| s.filesz + 2 * PAGE).sum();
    assert!(decoded <= file_bytes, "{decoded} bytes of code pre-decoded from {file_bytes} in the file");
}
