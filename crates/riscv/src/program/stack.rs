//! Where a program's stacks are and what its text was as loaded: what an error needs to
//! say that a stack ran away or that an illegal word is not the program's own code.

use super::Program;

/// Bytes of stack and thread-local storage per hart: 128 KiB, as the prototype's programs
/// and our `sw/lib/crt0.S` lay them out (docs/platform.md section 2).
pub const STACK_BYTES: u64 = 128 << 10;

impl Program {
    /// Hart `hart`'s stack region `[bottom, top)`. The regions follow each other from
    /// `__stacks_start` (`sw/lib/nanopu.ld`) or, in the prototype's layout, from `_end`
    /// rounded up to 64 bytes (`sw/compat/crt.S`). None without either symbol.
    pub fn stack_of(&self, hart: usize) -> Option<(u64, u64)> {
        let end = || self.symbol("_end").map(|e| e.wrapping_add(63) & !63);
        let base = self.symbol("__stacks_start").or_else(end)?;
        let bottom = base.wrapping_add(hart as u64 * STACK_BYTES);
        Some((bottom, bottom.wrapping_add(STACK_BYTES)))
    }

    /// Is `addr` in the pre-decoded code (the program's text)?
    pub fn in_text(&self, addr: u64) -> bool {
        self.code_ranges().any(|(base, bytes)| addr.wrapping_sub(base) < bytes)
    }

    /// Is `raw`, the instruction word found at `addr`, the program's text as loaded (not
    /// data, and not code overwritten at run time)?
    pub fn is_loaded_text(&self, addr: u64, raw: u32) -> bool {
        self.in_text(addr) && self.loaded_insn(addr) == raw
    }

    /// The instruction (16 or 32 bits) the ELF image holds at `addr`.
    fn loaded_insn(&self, addr: u64) -> u32 {
        let lo = self.half(addr) as u32;
        if lo & 3 != 3 {
            return lo;
        }
        lo | (self.half(addr.wrapping_add(2)) as u32) << 16
    }

    /// The function holding `addr`, by the symbol table.
    pub fn function_at(&self, addr: u64) -> Option<String> {
        self.symbols.at_or_below(addr)
    }
    /// The call that returns to `ra`, by the loaded text: a 4-byte `jal`/`jalr` ending there,
    /// else a 2-byte `c.jalr`.
    pub fn call_before(&self, ra: u64) -> u64 {
        let four = self.loaded_insn(ra.wrapping_sub(4));
        let is_call = four & 3 == 3 && matches!(four & 0x7f, 0x6f | 0x67);
        ra.wrapping_sub(if is_call { 4 } else { 2 })
    }
}
