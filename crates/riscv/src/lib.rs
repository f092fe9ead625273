//! RV64GC (IMAFDC + Zicsr + Zifencei) instruction-set simulator with a Rocket-like timing model.
//!
//! Tour:
//! - [`elf`] parses and validates the executable; [`abi`] decides whether x30/x31 are the
//!   network registers (a marker symbol, LNIC CSR accesses, or the user's choice); [`Program`] (`program.rs`) lays out its
//!   initial image and pre-decodes every 2-byte code slot once ([`decode`], [`rvc`] for
//!   compressed forms) into [`op::Op`]s shared by every core of every node.
//! - [`NodeMem`] (`mem/`) is one node: DRAM chunks materialized on first write ([`sparse`],
//!   found by page through `program/pageindex.rs`), the decoded nanoPU ops its cores share
//!   (`mem/netops.rs`), the boot page, the CLINT, the shared L2 tags ([`l2`]) and, behind
//!   them, FASED's last-level cache ([`llc`]), both lists of the ways in use at first
//!   (`taglist.rs`), and DDR3 bank timing ([`dram`]), the dirty lines' write-backs between
//!   them (`writeback.rs`), the L2's one response path (`port.rs`), devices' DMA
//!   (`dma.rs`), and the table of the stores its cores have shown each other ([`stores`];
//!   the cores' side is `core/coherence.rs`).
//! - [`Core`] (`core.rs`) is one hart. Its run loop (`core.rs`) fetches by index into the
//!   current code page (`fetch.rs`) and executes (`exec.rs`, `muldiv/`, `amo.rs`,
//!   `csr.rs`, `fpu.rs` with the soft-float arithmetic in `fparith.rs`/`fpconv.rs`); loads and stores go through a per-core software TLB (`lsu.rs`). Traps and
//!   interrupts are in `trap.rs` (with trap-loop detection), error texts in `error.rs`,
//!   which names unmodelled extensions through [`unmodelled`]; HTIF and semihosting in `htif.rs` and `semihost.rs`; the
//!   x30/x31 nanoPU registers in `net.rs`, the only place that calls the [`Platform`].
//! - [`engine`]: `run` executes through the reference interpreter (`Core::run_block`), the
//!   fast engine (`fast.rs`: runs of ops within an I-cache line, straight from the decoded
//!   code page, with the interpreter's own pieces inline) or the fast engine with hot code
//!   translated to host code (`jit/`, on Cranelift), with the same results (`--engine`);
//!   `tests/engines.rs` compares each with the interpreter.
//! - Timing is charged where it arises: one cycle per instruction plus scoreboard stalls
//!   (`exec.rs`), mispredicts ([`bpred`]), I/D cache misses (`fetch.rs`, `lsu.rs`), trap,
//!   `mret`, CSR and `fence.i` costs, and the multiply/divide unit's operand-dependent
//!   latency ([`muldiv_timing`], a pure function any executor can call). Every constant is
//!   in [`TimingParams`].
//! - [`testing`] runs a single-core program to completion, for tests and tools;
//!   [`fuzzing`] holds the fuzz targets' bodies (`fuzz/`).
//!
//! Public API used by the rest of the workspace (keep these signatures):
//! - [`Program`]: a loaded ELF image, shared (`Arc`) by every core and node running it.
//! - [`NodeMem`]: one node's memory (pages on first touch), shared L2, LLC and DRAM banks,
//!   CLINT, boot area.
//! - [`Core`]: one hart: registers, CSRs, L1 caches, timing state; `run` executes ahead of
//!   global time until a limit, a blocked platform access, `wfi`, exit or error.
//! - [`Platform`]: the nanoPU register interface (x30/x31, CSRs 0x052..=0x061).
//! - [`TimingParams`]: every timing constant with unit and provenance.

mod amo;
pub mod asm;
pub mod bpred;
pub mod cache;
mod core;
pub mod decode;
mod dma;
pub mod dram;
pub mod engine;
mod error;
mod exec;
mod fast;
mod fetch;
pub mod fparith;
pub mod fpconv;
#[cfg(test)]
mod fpu_tests;
pub mod fuzzing;
mod htif;
mod jit;
pub mod l2;
pub mod llc;
mod lsu;
pub mod mem;
mod mmio;
mod muldiv;
pub use muldiv::timing as muldiv_timing;
mod net;
pub mod op;
mod params;
pub mod platform;
mod port;
mod program;
mod runaway;
pub mod rvc;
mod semihost;
pub mod sparse;
pub mod stores;
mod taglist;
pub mod testing;
pub mod unmodelled;
mod writeback;

pub use crate::core::Core;
pub use dma::device_dma;
pub use engine::Engine;
pub use error::{BlockOn, CoreError, CoreStats, ErrorKind, Exit, StallKind, TrapInfo};
pub use jit::translate_after;
pub use mem::NodeMem;
pub use params::{Ddr3Params, MemParams, MemorySystem, MulDivParams, TimingParams};
pub use platform::{Access, NoNic, Platform, Stop};
pub use program::abi::{AbiChoice, AbiSource};
pub use program::elf::ElfError;
pub use program::Program;
pub use program::{abi, elf};
pub use runaway::{Recursion, StackOverflow};
