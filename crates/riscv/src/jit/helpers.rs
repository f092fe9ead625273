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

/// `jalr` at `pc` to `target` (`Core::jalr`): the predictor (a return's RAS pop if
/// `link_ret`'s top bit is set; a call's push of the link in its other bits, if not 0) and
/// a mispredict's penalty. Returns the cycles it adds, with `BTB_WIDE` set if the BTB left
/// its packed form (a target that does not pack, `BranchPred`): the trace's own BTB code
/// no longer applies, and it leaves.
pub(super) unsafe extern "C" fn jalr(core: *mut Core, pc: u64, target: u64, link_ret: u64) -> u64 {
    // SAFETY: as in `jal`.
    let c = unsafe { &mut *core };
    let (link, ret) = (link_ret & !RET, link_ret & RET != 0);
    let pen = match c.bp.jalr(pc, target, ret, (link != 0).then_some(link)) {
        true => mispredicted(c),
        false => 0,
    };
    pen | (c.bp.tables().is_none() as u64 * BTB_WIDE)
}

/// `jalr`'s flag of a return (`link_ret`) and its answer's of a BTB gone wide.
pub(super) const RET: u64 = 1 << 63;
pub(super) const BTB_WIDE: u64 = 1 << 32;

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
/// path (`load_quick`), or `load_in_run`'s where that cannot trap or reach a device
/// (`Core::plain_access`); else 0, nothing changed. Then the result written and the bound
/// raised; `done::RAISED` unless the quiet loop goes on after it (`Run::quiet_after_load`,
/// `rd_free >> 8` set if the next op reads no source from `rd`).
pub(super) unsafe extern "C" fn load<const N: usize, const SIGNED: bool>(
    core: *mut Core,
    io: *mut Io,
    addr: u64,
    cycle: u64,
    pc: u64,
    rd_free: u64,
) -> u64 {
    // SAFETY: as in `jal`; `io` is the running trace's, `io.mem` the node's memory, which
    // the fast engine's run leaves to the trace meanwhile.
    let (c, io, mem) = unsafe { (&mut *core, &mut *io, &mut *(*io).mem) };
    let (v, status) = match c.load_quick::<N>(addr) {
        Some(v) => (v, cycle << 2),
        None if c.plain_access::<N>(mem, addr, false) => {
            (c.pc, c.cycle) = (pc, cycle);
            let Ok(v) = c.load::<N>(mem, addr) else {
                unreachable!("a load from plain memory does not trap")
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
    status | (!quiet as u64 * done::RAISED)
}

/// The store `store!` runs, of the low `N` bytes of `v` at `addr`, issued at `cycle`, the
/// op after it at `next`: its quick path (`store_quick`), or `store_in_run`'s where that
/// cannot trap or reach a device (`Core::plain_access`); else 0, nothing changed.
pub(super) unsafe extern "C" fn store<const N: usize>(
    core: *mut Core,
    io: *mut Io,
    addr: u64,
    v: u64,
    cycle: u64,
    next: u64,
) -> u64 {
    // SAFETY: as in `load`.
    let (c, io, mem) = unsafe { (&mut *core, &mut *io, &mut *(*io).mem) };
    if c.store_quick::<N>(addr, v, cycle) {
        return cycle << 2;
    }
    if !c.plain_access::<N>(mem, addr, true) {
        return 0;
    }
    c.cycle = cycle;
    if c.store_op::<N>(mem, addr, v, next).is_err() {
        unreachable!("a store to plain memory does not trap")
    }
    settled(c, io, cycle)
}

/// The multiply or divide `op` (its bits, `Op` as it is) of `a` and `b` issued at `cycle`
/// (the cycle after its issue), as the quiet loop runs it (`muldiv_in_run`): the unit's
/// timing, the result written, the bound raised. Returns the cycle after it shifted left by
/// 2, with `done::END` if a wait for the unit took it to the far limit
/// (`Run::settle_variable`); the wait is taken off `Io::base`. `muldiv_in_run`'s lines
/// again rather than a function the two share: with one, the fast engine's loop compiled
/// to 1.7% more host instructions on compute (6,410 -> 6,522 M, cachegrind, `fast`).
pub(super) unsafe extern "C" fn muldiv(
    core: *mut Core,
    io: *mut Io,
    op: u64,
    a: u64,
    b: u64,
    cycle: u64,
) -> u64 {
    // SAFETY: as in `jal`, `io` the running trace's; `op` the bits of an `Op` (8 bytes of
    // integers, any of which is one).
    let (c, io, op) = unsafe { (&mut *core, &mut *io, std::mem::transmute::<u64, crate::op::Op>(op)) };
    c.cycle = cycle;
    // SAFETY: a trace holds only the M kinds' ops here, for which `muldiv` gives a value.
    let v = unsafe { c.muldiv(op, a, b).unwrap_unchecked() };
    c.set_slot(op.rd, v);
    c.quiet_from = c.quiet_from.max(c.muldiv_watch).max(c.ready_of(op.rd));
    io.base = io.base.wrapping_sub(c.cycle - cycle);
    (c.cycle << 2) | ((c.cycle >= io.far_limit) as u64 * done::END)
}

/// The write-port rule at `muldiv_watch` for op `op` (its bits) issuing in a mul/div's
/// shadow (`issue_checked`): the pending result a cycle later if the op holds the port, and
/// the bound raised. Returns 0.
pub(super) unsafe extern "C" fn port(core: *mut Core, op: u64, _: u64) -> u64 {
    // SAFETY: as in `muldiv`.
    let (c, op) = unsafe { (&mut *core, std::mem::transmute::<u64, crate::op::Op>(op)) };
    c.port_rule(op);
    0
}

/// After an access with its timing, issued at `cycle`, the core's cycle now after it: that
/// cycle as `load` and `store` return it, with `done::END` if it reached the far limit or
/// the horizon, which the access may have brought to now (`Run::settle_access`). The
/// cycles it took beyond the issue are taken off `Io::base`: not ops run.
fn settled(c: &Core, io: &mut Io, cycle: u64) -> u64 {
    io.base = io.base.wrapping_sub(c.cycle - cycle);
    let end = c.cycle >= io.far_limit.min(c.block_end);
    (c.cycle << 2) | (end as u64 * done::END)
}
