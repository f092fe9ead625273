//! RV64IMAC + Zicsr + Zifencei instruction-set simulator with a Rocket-like timing model.
//!
//! (Tour to be written by the implementer: modules, hot path, where timing is charged.)
//!
//! Public API used by the rest of the workspace (keep these signatures):
//! - [`Program`]: a loaded ELF image, shared (`Arc`) by every core and node running it.
//! - [`NodeMem`]: one node's memory (pages on first touch), shared L2, CLINT, boot area.
//! - [`Core`]: one hart: registers, CSRs, L1 caches, timing state; `run` executes ahead of
//!   global time until a limit, a blocked platform access, `wfi`, exit or error.
//! - [`Platform`]: the nanoPU register interface (x30/x31, CSRs 0x052..=0x061).
//! - [`TimingParams`]: every timing constant with unit and provenance.

pub mod platform;

pub use platform::{Access, NoNic, Platform, Stop};
