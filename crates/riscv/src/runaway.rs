//! A stack that ran away. When a core stops on a trap, its stack pointer may have left its
//! hart's stack (`Program::stack_of`): a recursion that never ends grows the stack down
//! through the program's data and text until the core executes what it stored there. The
//! error then says so, and names the recursion by the return address that fills the stack.

use std::collections::BTreeMap;
use std::fmt;

use crate::mem::NodeMem;
use crate::program::Program;

/// A stack pointer below its hart's stack, and the recursion that put it there if one shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackOverflow {
    pub sp: u64,
    pub hart: usize,
    pub bottom: u64,
    pub top: u64,
    pub recursion: Option<Recursion>,
}

/// A return address the stack holds again and again: one call, made without end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recursion {
    pub ra: u64,
    pub count: u32,
    /// The call instruction that returns to `ra`, and the function holding it.
    pub call: u64,
    pub function: Option<String>,
}

/// A return address seen this often on the stack is a recursion.
const MIN_REPEATS: u32 = 8;
/// The stack read for return addresses: at most this much below its top.
const SCAN_BYTES: u64 = 1 << 20;
/// How far below DRAM a runaway stack can be: one frame's stores fault there. A stack
/// pointer further down (0 in a program that never set one) is not a stack that grew.
const BELOW_DRAM: u64 = 64 << 10;

/// The overflow of hart `hart`'s stack, if `sp` is below its bottom.
pub(crate) fn check(program: &Program, mem: &NodeMem, hart: usize, sp: u64) -> Option<StackOverflow> {
    let (bottom, top) = program.stack_of(hart)?;
    if sp >= bottom || sp < mem.base.saturating_sub(BELOW_DRAM) {
        return None;
    }
    let recursion = repeated_return(program, mem, sp, top);
    Some(StackOverflow { sp, hart, bottom, top, recursion })
}

/// The text address the stack between `sp` and `top` holds most often, if often enough.
fn repeated_return(program: &Program, mem: &NodeMem, sp: u64, top: u64) -> Option<Recursion> {
    let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
    let from = sp.max(top.saturating_sub(SCAN_BYTES)) & !7;
    for w in (from..top).step_by(8).filter_map(|a| word(mem, a)) {
        if program.in_text(w) {
            *seen.entry(w).or_default() += 1;
        }
    }
    let (&ra, &count) = seen.iter().max_by_key(|&(&a, &n)| (n, std::cmp::Reverse(a)))?;
    let call = program.call_before(ra);
    (count >= MIN_REPEATS).then(|| Recursion { ra, count, call, function: program.function_at(call) })
}

fn word(mem: &NodeMem, addr: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    mem.read(addr, &mut b).ok().map(|_| u64::from_le_bytes(b))
}

impl fmt::Display for StackOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (sp, h, lo, hi) = (self.sp, self.hart, self.bottom, self.top);
        let below = lo - sp;
        write!(f, "stack overflow: sp {sp:#x} is {below} bytes below the bottom of hart {h}'s stack [{lo:#x}, {hi:#x})")?;
        match &self.recursion {
            Some(r) => write!(f, "; {r}"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Recursion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "return address {:#x} is on the stack {} times: ", self.ra, self.count)?;
        write!(f, "the call at pc {:#x}", self.call)?;
        if let Some(name) = &self.function {
            write!(f, " (in {name})")?;
        }
        write!(f, " recurses without end")
    }
}
