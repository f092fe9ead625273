//! Multiplies and divides in a trace (`emit.rs`), and the ops after one while its result is
//! pending: the quiet loop hands back after a mul/div (`fast.rs`, `muldiv_in_run`), and
//! the fast engine's checked issue runs what follows until every pending result is ready
//! again; a trace does the same for the ops it can, in "the shadow" of the mul/div.
//!
//! In the shadow the one pending result is the mul/div's (every other entry was past when
//! the quiet trace reached it, and the ops run there set none), so the checked issue
//! (`issue_checked`) comes down to: an op reading the result waits for it (a mul/div
//! stall), the issue, and the write-port rule when the issue reaches `muldiv_watch`
//! (`helpers::port`). The shadow runs the ALU ops that follow the mul/div in the trace; at
//! any other op still in the shadow the trace leaves (`Exit::Raised`, the fast engine's
//! checked issue then), and once the cycle reaches the bound `quiet_from` it goes on as a
//! quiet trace.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData};

use super::{Emit, IO_BASE, MULDIV_WATCH, QUIET_FROM, READY, STALL_MULDIV};
use crate::jit::helpers;
use crate::jit::trace::{Exit, Item};
use crate::op::Op;

impl Emit<'_> {
    /// A multiply or divide: run by its helper (`helpers::muldiv`: the unit's timing, the
    /// result, the bound) at its issue, then on as `after_muldiv` says.
    pub(super) fn muldiv(&mut self, j: usize) {
        let it = &self.t.items[j];
        let op = it.op;
        let (a, b) = (self.read(op.rs1), self.read(op.rs2));
        let bits = op_bits(op);
        let c = self.b.use_var(self.cycle);
        let c1 = self.b.ins().iadd_imm_s(c, 1);
        let args = [self.core, self.io, self.iconst(bits), a, b, c1];
        let status = self.call(helpers::muldiv as *const () as usize, &args);
        self.settled(status, it.off + op.len() as i64 / 2, it.end);
        self.issue();
        self.after_muldiv(j, op.rd);
    }

    /// After op `j`, with the mul/div result for register `d` maybe pending: on as a quiet
    /// trace (`next`) if the cycle reached the bound `quiet_from`; else the next op in the
    /// shadow (`shadow`) if it is an ALU op the trace holds (in the next line if the fast
    /// engine would go on into it with nothing to charge, `cross`), else out before it for
    /// the fast engine's checked issue.
    fn after_muldiv(&mut self, j: usize, d: u8) {
        let it = &self.t.items[j];
        let (next, end) = (it.off + it.op.len() as i64 / 2, it.end);
        let qf = self.word(self.core, QUIET_FROM);
        let c = self.b.use_var(self.cycle);
        let quiet = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, c, qf);
        let (on, shadow) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(quiet, on, &[], shadow, &[]);
        self.b.switch_to_block(on);
        self.next(j);
        self.b.switch_to_block(shadow);
        let Some(k) = self.t.at(next).filter(|&k| in_shadow(&self.t.items[k])) else {
            return self.exit(Exit::Raised(next), end);
        };
        if next >= end {
            // Into the next line as `next_after` goes, far from the horizon.
            let near = self.near();
            let (out, on, to) =
                (self.exit_block(Exit::Raised(next), end), self.b.create_block(), self.b.create_block());
            self.b.ins().brif(near, out, &[], on, &[]);
            self.b.switch_to_block(on);
            self.cross(it.pc + it.op.len() as u64, to, out);
            self.b.switch_to_block(to);
        }
        self.shadow(k, d);
    }

    /// ALU op `k` in the shadow of the mul/div result for register `d` (`issue_checked`):
    /// its wait for the result if it reads it (and out after it with the run ended if the
    /// wait took the cycle to the far limit, as `settle_variable`), then `shadow_op`.
    fn shadow(&mut self, k: usize, d: u8) {
        let it = &self.t.items[k];
        let late = (it.op.rs1 == d || it.op.rs2 == d).then(|| self.wait_for(d));
        self.shadow_op(it);
        self.after_muldiv(k, d);
        if let Some(late) = late {
            self.b.switch_to_block(late);
            self.shadow_op(it);
            self.exit(Exit::End(it.off + it.op.len() as i64 / 2), it.end);
        }
    }

    /// The issue of ALU op `it` in a shadow, the write-port rule if the issue is at
    /// `muldiv_watch` (`helpers::port`), the op.
    fn shadow_op(&mut self, it: &Item) {
        self.issue();
        let watch = self.word(self.core, MULDIV_WATCH);
        let c = self.b.use_var(self.cycle);
        let at_watch = self.b.ins().icmp(IntCC::Equal, c, watch);
        let (port, on) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(at_watch, port, &[], on, &[]);
        self.b.switch_to_block(port);
        let bits = self.iconst(op_bits(it.op));
        self.call(helpers::port as *const () as usize, &[self.core, bits, bits]);
        self.jump_block(on);
        self.b.switch_to_block(on);
        let v = self.alu(it);
        self.write(it.op.rd, v);
    }

    /// `stall` for the result of register `d`: charged to mul/div stalls and taken off the
    /// ops run (`Io::base`). Returns the block reached if the wait took the cycle to the
    /// far limit (to fill), with the builder on the way on.
    fn wait_for(&mut self, d: u8) -> Block {
        let flags = MemFlagsData::trusted();
        let ready = self.b.ins().load(I64, flags, self.core, READY + 8 * d as i32);
        let c = self.b.use_var(self.cycle);
        let waits = self.b.ins().icmp(IntCC::UnsignedGreaterThan, ready, c);
        let (wait, on, late) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(waits, wait, &[], on, &[]);
        self.b.switch_to_block(wait);
        let cycles = self.b.ins().isub(ready, c);
        let stalls = self.word(self.core, STALL_MULDIV);
        let stalls = self.b.ins().iadd(stalls, cycles);
        self.b.ins().store(flags, stalls, self.core, STALL_MULDIV);
        let base = self.word(self.io, IO_BASE);
        let base = self.b.ins().isub(base, cycles);
        self.b.ins().store(flags, base, self.io, IO_BASE);
        self.b.def_var(self.cycle, ready);
        let near = self.near();
        self.b.ins().brif(near, late, &[], on, &[]);
        self.b.switch_to_block(on);
        late
    }
}

/// `op` as the helpers take it (`helpers::muldiv`, `helpers::port`).
fn op_bits(op: Op) -> u64 {
    // SAFETY: an `Op` is 8 bytes of integers (`op.rs`), which the helpers take back as
    // they are.
    unsafe { std::mem::transmute::<Op, u64>(op) }
}

/// Whether op `it` runs in a mul/div's shadow: an ALU op (`exec::is_alu`, what
/// `Emit::alu` runs).
fn in_shadow(it: &Item) -> bool {
    crate::exec::is_alu(it.op.kind())
}
