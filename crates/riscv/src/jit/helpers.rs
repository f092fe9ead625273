//! What a trace calls (`emit.rs`): the fast engine's own pieces for the ops that touch more
//! than registers, each doing what its arm of `fast.rs` does in the quiet loop. Every
//! argument is a `u64` (the traces' one type); `core` is the running core.

use crate::core::Core;

/// `jal` at `pc` to `target`, a call linking `link` if not 0 (`jal_to`): the predictor and
/// a mispredict's penalty. Returns the cycles it adds.
pub(super) unsafe extern "C" fn jal(core: *mut Core, pc: u64, target: u64, link: u64) -> u64 {
    // SAFETY: the trace is running `core`, which nothing else holds meanwhile.
    let c = unsafe { &mut *core };
    if !c.bp.jal(pc, target, (link != 0).then_some(link)) {
        return 0;
    }
    mispredicted(c)
}

fn mispredicted(c: &mut Core) -> u64 {
    let p = c.t.mispredict_penalty;
    c.stats.stall_branch += p;
    p
}

/// The load `load!` runs inline, of `N` bytes at `addr` (sign-extended if `SIGNED`) into
/// register slot `rd`, issued at `cycle`: 0 if it has timing to charge (nothing changed:
/// the fast engine runs it), else the result written and the bound raised, and 1 if the
/// quiet loop goes on after it (`Run::quiet_after_load`; `next_free` says the next op
/// reads no source from `rd`), 2 if it hands back (`Flow::Raised`).
pub(super) unsafe extern "C" fn load<const N: usize, const SIGNED: bool>(
    core: *mut Core,
    addr: u64,
    cycle: u64,
    rd: u64,
    next_free: u64,
) -> u64 {
    // SAFETY: as in `jal`.
    let c = unsafe { &mut *core };
    let Some(v) = c.load_quick::<N>(addr) else { return 0 };
    let rd = rd as u8;
    let ready = c.set_load_ready::<N>(rd, cycle);
    c.quiet_from = c.quiet_from.max(ready);
    let shift = 64 - 8 * N as u32;
    c.set_slot(rd, if SIGNED && N < 8 { ((v << shift) as i64 >> shift) as u64 } else { v });
    match next_free != 0 && ready == cycle + 1 {
        true => 1,
        false => 2,
    }
}

/// The store `store!` runs inline (`store_quick`), of the low `N` bytes of `v` at `addr`,
/// issued at `cycle`: 1 if it stored, 0 if it has timing to charge (nothing changed).
pub(super) unsafe extern "C" fn store<const N: usize>(core: *mut Core, addr: u64, v: u64, cycle: u64) -> u64 {
    // SAFETY: as in `jal`.
    let c = unsafe { &mut *core };
    c.store_quick::<N>(addr, v, cycle) as u64
}
