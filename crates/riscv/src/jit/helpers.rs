//! What a trace calls (`emit.rs`): the fast engine's own pieces for the ops that touch more
//! than registers, each doing what its arm of `fast.rs` does in the quiet loop. Every
//! argument is a `u64` (the traces' one type); `core` is the running core.

use super::trace::Io;
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

/// What `load` and `store` return: 0 if the access must go to the fast engine (nothing
/// changed), else the cycle after it shifted left by 2, with these bits.
pub(super) mod done {
    /// The quiet loop would hand back after the load (`Flow::Raised`).
    pub(crate) const RAISED: u64 = 1;
    /// The access took the cycle to the far limit or the horizon: the run ends after it
    /// (`Run::settle_access`).
    pub(crate) const END: u64 = 2;
}

/// The load `load!` runs, of `N` bytes at `addr` (sign-extended if `SIGNED`) at `pc` into
/// register slot `rd_free & 0xff`, issued at `cycle` (the cycle after its issue): its quick
/// path (`load_quick`), or `load_in_run`'s where that cannot trap or reach a device (its
/// chunk in the TLB, aligned: `timed`); else 0, nothing changed. Then the result written
/// and the bound raised; `done::RAISED` unless the quiet loop goes on after it
/// (`Run::quiet_after_load`, `rd_free >> 8` set if the next op reads no source from `rd`).
pub(super) unsafe extern "C" fn load<const N: usize, const SIGNED: bool>(
    core: *mut Core,
    io: *mut Io,
    addr: u64,
    cycle: u64,
    pc: u64,
    rd_free: u64,
) -> u64 {
    // SAFETY: as in `jal`; `io` is the running trace's.
    let (c, io) = unsafe { (&mut *core, &mut *io) };
    let (v, status) = match c.load_quick::<N>(addr) {
        Some(v) => (v, cycle << 2),
        None if c.tlb_maps::<N>(addr, false) => {
            (c.pc, c.cycle) = (pc, cycle);
            // SAFETY: the node's memory (`Io::mem`).
            let Ok(v) = c.load::<N>(unsafe { &mut *io.mem }, addr) else {
                unreachable!("an aligned load from a chunk the TLB maps does not trap")
            };
            (v, settled(c, io, cycle))
        }
        None => return 0,
    };
    let (rd, after) = (rd_free as u8, status >> 2);
    let ready = c.set_load_ready::<N>(rd, after);
    c.quiet_from = c.quiet_from.max(ready);
    let shift = 64 - 8 * N as u32;
    c.set_slot(rd, if SIGNED && N < 8 { ((v << shift) as i64 >> shift) as u64 } else { v });
    let quiet = rd_free >> 8 != 0 && ready == after + 1;
    status | !quiet as u64 * done::RAISED
}

/// The store `store!` runs, of the low `N` bytes of `v` at `addr`, issued at `cycle`, the
/// op after it at `next`: its quick path (`store_quick`), or `store_in_run`'s where that
/// cannot trap or reach a device (a private chunk in the TLB other than `tohost`'s,
/// aligned); else 0, nothing changed.
pub(super) unsafe extern "C" fn store<const N: usize>(
    core: *mut Core,
    io: *mut Io,
    addr: u64,
    v: u64,
    cycle: u64,
    next: u64,
) -> u64 {
    // SAFETY: as in `load`.
    let (c, io) = unsafe { (&mut *core, &mut *io) };
    if c.store_quick::<N>(addr, v, cycle) {
        return cycle << 2;
    }
    if !c.tlb_maps::<N>(addr, true) {
        return 0;
    }
    c.cycle = cycle;
    // SAFETY: as in `load`.
    if c.store_op::<N>(unsafe { &mut *io.mem }, addr, v, next).is_err() {
        unreachable!("an aligned store to a private chunk the TLB maps does not trap")
    }
    settled(c, io, cycle)
}

/// After an access with its timing, issued at `cycle`, the core's cycle now after it: that
/// cycle as `load` and `store` return it, with `done::END` if it reached the far limit or
/// the horizon, which the access may have brought to now (`Run::settle_access`). The
/// cycles it took beyond the issue are taken off `Io::base`: not ops run.
fn settled(c: &Core, io: &mut Io, cycle: u64) -> u64 {
    io.base = io.base.wrapping_sub(c.cycle - cycle);
    let end = c.cycle >= io.far_limit.min(c.block_end);
    c.cycle << 2 | end as u64 * done::END
}
