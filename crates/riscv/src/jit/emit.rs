//! A trace to host code, on Cranelift (`jit/mod.rs` says what the code does). The cycle
//! and the count of ops run live in host registers; the register file is the `Core`'s.

use std::mem::offset_of;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64, I8};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, InstBuilder, JumpTableData, MemFlagsData, SigRef, Signature, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Module};

mod access;
mod muldiv;

use super::helpers;
use super::trace::{links, Exit, Io, Item, Trace, TraceFn};
use crate::cache::{layout as l1, KNOWN_CODE};
use crate::core::Core;
use crate::error::CoreStats;
use crate::op::Kind;

/// Where the trace finds the register file and `instret` in the `Core`.
const X: i32 = offset_of!(Core, x) as i32;
const INSTRET: i32 = (offset_of!(Core, stats) + offset_of!(CoreStats, instret)) as i32;
const STALL_BRANCH: i32 = (offset_of!(Core, stats) + offset_of!(CoreStats, stall_branch)) as i32;
const STALL_LOAD_USE: i32 = (offset_of!(Core, stats) + offset_of!(CoreStats, stall_load_use)) as i32;
const BP: i32 = offset_of!(Core, bp) as i32;
const TLB: i32 = offset_of!(Core, tlb) as i32;
const DLINE: i32 = offset_of!(Core, dline) as i32;
const COH: i32 = offset_of!(Core, coh) as i32;
const READY: i32 = offset_of!(Core, ready) as i32;
const READY_MULDIV: i32 = offset_of!(Core, ready_muldiv) as i32;
const QUIET_FROM: i32 = offset_of!(Core, quiet_from) as i32;
const MULDIV_WATCH: i32 = offset_of!(Core, muldiv_watch) as i32;
const STALL_MULDIV: i32 = (offset_of!(Core, stats) + offset_of!(CoreStats, stall_muldiv)) as i32;
const BLOCK_END: i32 = offset_of!(Core, block_end) as i32;
const ILINE: i32 = offset_of!(Core, iline) as i32;
const IPREV: i32 = offset_of!(Core, iprev) as i32;
const DLINE_DIRTY: i32 = offset_of!(Core, dline_dirty) as i32;
const HTIF_CN: i32 = offset_of!(Core, htif_cn) as i32;
const L1D: i32 = offset_of!(Core, l1d) as i32;
const L1I: i32 = offset_of!(Core, l1i) as i32;
/// And the fields of its `Io`.
const IO_CYCLE: i32 = offset_of!(Io, cycle) as i32;
const IO_FAR: i32 = offset_of!(Io, far_limit) as i32;
const IO_END: i32 = offset_of!(Io, end) as i32;
const IO_BHT: i32 = offset_of!(Io, bht) as i32;
const IO_BTB: i32 = offset_of!(Io, btb) as i32;
const IO_BASE: i32 = offset_of!(Io, base) as i32;

/// The JIT module all of a program's traces go into, and the contexts reused per trace.
pub(crate) struct Compiler {
    module: JITModule,
    ctx: cranelift_codegen::Context,
    fctx: FunctionBuilderContext,
}

impl Compiler {
    /// `None` on a host Cranelift does not support (the cores then run without traces).
    /// `opt_level` none: Cranelift's optimizations made the traces no faster on compute
    /// (0.38 s either way, four runs each) and cost compile time.
    pub(crate) fn new() -> Option<Compiler> {
        let mut flags = settings::builder();
        for (k, v) in [
            ("opt_level", "none"),
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
            ("enable_verifier", "false"),
        ] {
            flags.set(k, v).ok()?;
        }
        let isa = cranelift_native::builder().ok()?.finish(settings::Flags::new(flags)).ok()?;
        let module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let ctx = module.make_context();
        Some(Compiler { module, ctx, fctx: FunctionBuilderContext::new() })
    }

    /// `t` as host code, or `None` if Cranelift refuses it (the op then runs as before).
    pub(crate) fn compile(&mut self, t: &Trace) -> Option<TraceFn> {
        let sig = signature(&self.module, 3);
        let id = self.module.declare_anonymous_function(&sig).ok()?;
        self.ctx.func.signature = sig;
        let sigs = [3, 4, 6].map(|n| signature(&self.module, n));
        let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
        let sigs = sigs.map(|s| b.import_signature(s));
        Emit::new(b, t, sigs).trace(self.module.target_config());
        let made = self.module.define_function(id, &mut self.ctx);
        self.module.clear_context(&mut self.ctx);
        made.ok()?;
        self.module.finalize_definitions().ok()?;
        let code = self.module.get_finalized_function(id);
        // SAFETY: the function was built with `TraceFn`'s signature (`signature(.., 3)`).
        Some(unsafe { std::mem::transmute::<*const u8, TraceFn>(code) })
    }
}

/// `n` `u64` parameters, one `u64` result.
fn signature(m: &JITModule, n: usize) -> Signature {
    let mut s = m.make_signature();
    s.params.extend((0..n).map(|_| AbiParam::new(I64)));
    s.returns.push(AbiParam::new(I64));
    s
}

/// The builder of one trace.
struct Emit<'a> {
    b: FunctionBuilder<'a>,
    t: &'a Trace,
    core: Value,
    io: Value,
    k: Value,
    far: Value,
    cycle: Variable,
    /// One block per op, in the trace's order.
    blocks: Vec<Block>,
    /// Helpers' signatures, of 3, 4 and 6 parameters.
    s3: SigRef,
    s4: SigRef,
    s6: SigRef,
    /// Blocks that leave the trace, to fill at the end.
    exits: Vec<(Block, Exit, i64)>,
    /// The trace's one way out (`exit_all`).
    out: Block,
    /// Blocks that wait for a load's result before an op (`stall_block`), to fill at the end.
    stalls: Vec<(Block, usize, u64)>,
}

impl<'a> Emit<'a> {
    fn new(mut b: FunctionBuilder<'a>, t: &'a Trace, [s3, s4, s6]: [SigRef; 3]) -> Emit<'a> {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (core, io, k) = (b.block_params(entry)[0], b.block_params(entry)[1], b.block_params(entry)[2]);
        let cycle = b.declare_var(I64);
        let c = b.ins().load(I64, MemFlagsData::trusted(), io, IO_CYCLE);
        let far = b.ins().load(I64, MemFlagsData::trusted(), io, IO_FAR);
        b.def_var(cycle, c);
        let blocks = t.items.iter().map(|_| b.create_block()).collect();
        let out = b.create_block();
        b.append_block_param(out, I64);
        b.append_block_param(out, I64);
        Emit { b, t, core, io, k, far, cycle, blocks, s3, s4, s6, exits: Vec::new(), out, stalls: Vec::new() }
    }

    fn trace(mut self, config: cranelift_codegen::isa::TargetFrontendConfig) {
        // Entered at op `k` (the third parameter).
        let calls: Vec<_> = self.blocks.iter().map(|&bl| self.b.func.dfg.block_call(bl, &[])).collect();
        let first = self.b.func.dfg.block_call(self.blocks[0], &[]);
        let table = JumpTableData::new(first, &calls);
        let table = self.b.create_jump_table(table);
        self.b.ins().br_table(self.k, table);
        for j in 0..self.t.items.len() {
            self.b.switch_to_block(self.blocks[j]);
            self.item(j);
        }
        for (block, e, end) in std::mem::take(&mut self.exits) {
            self.b.switch_to_block(block);
            self.exit(e, end);
        }
        self.fill_stalls();
        self.exit_all();
        self.b.seal_all_blocks();
        self.b.finalize(config);
    }

    fn item(&mut self, j: usize) {
        let it = &self.t.items[j];
        match it.op.kind() {
            Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu => self.branch(j),
            Kind::Jal => self.jal(j),
            Kind::Jalr => self.jalr(j),
            Kind::Lb | Kind::Lh | Kind::Lw | Kind::Ld | Kind::Lbu | Kind::Lhu | Kind::Lwu => self.load(j),
            Kind::Sb | Kind::Sh | Kind::Sw | Kind::Sd => self.store(j),
            k if crate::muldiv::is_muldiv(k) => self.muldiv(j),
            _ => {
                self.issue();
                let v = self.alu(it);
                self.write(it.op.rd, v);
                self.next(j);
            }
        }
    }

    /// The op's issue cycle (one more op run: `exit_all` counts them).
    fn issue(&mut self) {
        let v = self.b.use_var(self.cycle);
        let v = self.b.ins().iadd_imm_s(v, 1);
        self.b.def_var(self.cycle, v);
    }

    fn read(&mut self, r: u8) -> Value {
        self.b.ins().load(I64, MemFlagsData::trusted(), self.core, X + 8 * r as i32)
    }

    fn write(&mut self, r: u8, v: Value) {
        self.b.ins().store(MemFlagsData::trusted(), v, self.core, X + 8 * r as i32);
    }

    /// On to the op after op `j`: in its line, its block if the trace has it; into the next
    /// line as `next_line_of_run` goes (`cross`), else out at it with the run's end the
    /// line's.
    fn next(&mut self, j: usize) {
        self.next_after(j, 0, Exit::Next);
    }

    /// `next`, with the next op waiting `wait` cycles first (`stall_block`), and out with
    /// `out` (`Exit::Raised` after a load the quiet loop would hand back after).
    fn next_after(&mut self, j: usize, wait: u64, out: fn(i64) -> Exit) {
        let it = &self.t.items[j];
        let (next, end) = (it.off + it.op.len() as i64 / 2, it.end);
        let pc = it.pc + it.op.len() as u64;
        let Some(k) = self.t.at(next) else {
            return self.exit(out(next), end);
        };
        let to = self.stall_block(k, wait);
        if next < end {
            self.b.ins().jump(to, &[]);
            return;
        }
        let near = self.near();
        let (out, on) = (self.exit_block(out(next), end), self.b.create_block());
        self.b.ins().brif(near, out, &[], on, &[]);
        self.b.switch_to_block(on);
        self.cross(pc, to, out);
    }

    /// To `to`, entering its line at `pc` as the fast engine would with nothing to charge:
    /// before the horizon (`block_end`, which a load or store before the trace may have
    /// brought nearer than the far limit), and the current line or one the L1 knows it
    /// holds (`enter_line` with no miss: `known_line`, which makes it current); else to
    /// `out`, nothing changed. The line is known when translating,
    /// so its known slot and key are constants.
    fn cross(&mut self, pc: u64, to: Block, out: Block) {
        let flags = MemFlagsData::trusted();
        let line = pc >> self.t.shape.line_shift;
        let end = self.b.ins().load(I64, flags, self.core, BLOCK_END);
        let c = self.b.use_var(self.cycle);
        let late = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, c, end);
        self.on_unless(late, out);
        let iline = self.b.ins().load(I64, flags, self.core, ILINE);
        let here = self.b.ins().icmp_imm_s(IntCC::Equal, iline, line as i64);
        let (other, enter) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(here, to, &[], other, &[]);
        self.b.switch_to_block(other);
        let prev = self.b.ins().load(I64, flags, self.core, IPREV);
        let prev = self.b.ins().icmp_imm_s(IntCC::Equal, prev, line as i64);
        let slot = L1I + l1::KNOWN_CODE_AT + 4 * (line as usize & (KNOWN_CODE - 1)) as i32;
        let known = self.b.ins().sload32(flags, self.core, slot);
        let known = self.b.ins().ushr_imm_s(known, 1);
        let known = self.b.ins().icmp_imm_s(IntCC::Equal, known, line as i64);
        let known = self.b.ins().bor(prev, known);
        self.b.ins().brif(known, enter, &[], out, &[]);
        self.b.switch_to_block(enter);
        self.b.ins().store(flags, iline, self.core, IPREV);
        let line = self.iconst(line);
        self.b.ins().store(flags, line, self.core, ILINE);
        self.b.ins().jump(to, &[]);
    }

    fn jump(&mut self, k: usize) {
        let block = self.blocks[k];
        self.b.ins().jump(block, &[]);
    }

    /// Leave the trace with `e`, the run's end `end`: to the one block that writes the
    /// cycle, the end and `instret` back and returns the exit's code (`exit_all`).
    fn exit(&mut self, e: Exit, end: i64) {
        // From code slots of the entry's to code slots of the page's.
        let e = match e {
            Exit::Next(off) => Exit::Next(off + self.t.slot),
            Exit::Raised(off) => Exit::Raised(off + self.t.slot),
            Exit::End(off) => Exit::End(off + self.t.slot),
            jump => jump,
        };
        let code = self.b.ins().iconst(I64, e.code() as i64);
        let end = self.b.ins().iconst(I64, end + self.t.slot);
        self.b.ins().jump(self.out, &[BlockArg::Value(code), BlockArg::Value(end)]);
    }

    /// The trace's one way out: its parameters the exit's code and the run's end.
    fn exit_all(&mut self) {
        self.b.switch_to_block(self.out);
        let (code, end) = (self.b.block_params(self.out)[0], self.b.block_params(self.out)[1]);
        let flags = MemFlagsData::trusted();
        let cycle = self.b.use_var(self.cycle);
        // The ops run: each took one cycle to issue, and every other cycle the trace added
        // is a branch's penalty or a load's use waited for, each counted in its stall
        // counter, or an access's timing a helper charged (`Io::base`).
        let (c0, s0) = (self.word(self.io, IO_CYCLE), self.word(self.io, IO_BASE));
        let (branch, load_use) = (self.word(self.core, STALL_BRANCH), self.word(self.core, STALL_LOAD_USE));
        let stalls = self.b.ins().iadd(branch, load_use);
        let stalls = self.b.ins().isub(stalls, s0);
        let ran = self.b.ins().isub(cycle, c0);
        let ran = self.b.ins().isub(ran, stalls);
        self.b.ins().store(flags, cycle, self.io, IO_CYCLE);
        self.b.ins().store(flags, end, self.io, IO_END);
        let n = self.word(self.core, INSTRET);
        let n = self.b.ins().iadd(n, ran);
        self.b.ins().store(flags, n, self.core, INSTRET);
        self.b.ins().return_(&[code]);
    }

    /// A block that leaves the trace with `e` (filled at the end, `trace`: a block is
    /// filled before the builder switches to another). Its own block, not a branch to `out`
    /// with the exit's code as arguments: those constants were then made on the way on too
    /// (3.6% more host instructions on compute).
    fn exit_block(&mut self, e: Exit, end: i64) -> Block {
        let out = self.b.create_block();
        self.exits.push((out, e, end));
        out
    }

    /// The 64-bit word at `base` + `off`.
    fn word(&mut self, base: Value, off: i32) -> Value {
        self.b.ins().load(I64, MemFlagsData::trusted(), base, off)
    }

    fn call(&mut self, f: usize, args: &[Value]) -> Value {
        let sig = match args.len() {
            3 => self.s3,
            4 => self.s4,
            _ => self.s6,
        };
        let f = self.b.ins().iconst(I64, f as i64);
        let call = self.b.ins().call_indirect(sig, f, args);
        self.b.inst_results(call)[0]
    }

    fn add_cycles(&mut self, n: Value) {
        let c = self.b.use_var(self.cycle);
        let c = self.b.ins().iadd(c, n);
        self.b.def_var(self.cycle, c);
    }

    /// `exec::alu` of the op's kind.
    fn alu(&mut self, it: &Item) -> Value {
        let op = it.op;
        let imm = op.imm as i64;
        let b = &mut self.b;
        let x = |b: &mut FunctionBuilder, r: u8, core: Value| {
            b.ins().load(I64, MemFlagsData::trusted(), core, X + 8 * r as i32)
        };
        let a = x(b, op.rs1, self.core);
        use Kind::*;
        let bv = match op.kind() {
            Add | Sub | Sll | Slt | Sltu | Xor | Srl | Sra | Or | And | Addw | Subw | Sllw | Srlw | Sraw => {
                Some(x(b, op.rs2, self.core))
            }
            _ => None,
        };
        let bb = || bv.expect("a register operand");
        let flag = |b: &mut FunctionBuilder, c: Value| b.ins().uextend(I64, c);
        let w = |b: &mut FunctionBuilder, v: Value| {
            let v = b.ins().ireduce(I32, v);
            b.ins().sextend(I64, v)
        };
        match op.kind() {
            Lui => b.ins().iconst(I64, imm),
            Auipc => b.ins().iconst(I64, it.pc.wrapping_add(imm as u64) as i64),
            Addi => b.ins().iadd_imm_s(a, imm),
            Slti => {
                let c = b.ins().icmp_imm_s(IntCC::SignedLessThan, a, imm);
                flag(b, c)
            }
            Sltiu => {
                let c = b.ins().icmp_imm_s(IntCC::UnsignedLessThan, a, imm);
                flag(b, c)
            }
            Xori => b.ins().bxor_imm_s(a, imm),
            Ori => b.ins().bor_imm_s(a, imm),
            Andi => b.ins().band_imm_s(a, imm),
            Slli => b.ins().ishl_imm_s(a, imm & 63),
            Srli => b.ins().ushr_imm_s(a, imm & 63),
            Srai => b.ins().sshr_imm_s(a, imm & 63),
            Add => b.ins().iadd(a, bb()),
            Sub => b.ins().isub(a, bb()),
            Sll => b.ins().ishl(a, bb()),
            Slt => {
                let c = b.ins().icmp(IntCC::SignedLessThan, a, bb());
                flag(b, c)
            }
            Sltu => {
                let c = b.ins().icmp(IntCC::UnsignedLessThan, a, bb());
                flag(b, c)
            }
            Xor => b.ins().bxor(a, bb()),
            Srl => b.ins().ushr(a, bb()),
            Sra => b.ins().sshr(a, bb()),
            Or => b.ins().bor(a, bb()),
            And => b.ins().band(a, bb()),
            Addiw => {
                let v = b.ins().iadd_imm_s(a, imm);
                w(b, v)
            }
            Addw => {
                let v = b.ins().iadd(a, bb());
                w(b, v)
            }
            Subw => {
                let v = b.ins().isub(a, bb());
                w(b, v)
            }
            Slliw | Srliw | Sraiw | Sllw | Srlw | Sraw => {
                let a32 = b.ins().ireduce(I32, a);
                let v = match op.kind() {
                    Slliw => b.ins().ishl_imm_s(a32, imm & 31),
                    Srliw => b.ins().ushr_imm_s(a32, imm & 31),
                    Sraiw => b.ins().sshr_imm_s(a32, imm & 31),
                    k => {
                        let s = b.ins().ireduce(I32, bb());
                        match k {
                            Sllw => b.ins().ishl(a32, s),
                            Srlw => b.ins().ushr(a32, s),
                            _ => b.ins().sshr(a32, s),
                        }
                    }
                };
                b.ins().sextend(I64, v)
            }
            k => unreachable!("{k:?} is not an ALU kind a trace runs"),
        }
    }

    /// A conditional branch (`branch_to`): the predictor and its penalty through `helpers`;
    /// taken, out of the line or near the horizon a jump out, else on at its target; not
    /// taken, on, unless a mispredict brought the horizon near (the run ends after it).
    fn branch(&mut self, j: usize) {
        let it = &self.t.items[j];
        self.issue();
        let op = it.op;
        let (a, bv) = (self.read(op.rs1), self.read(op.rs2));
        let cc = match op.kind() {
            Kind::Beq => IntCC::Equal,
            Kind::Bne => IntCC::NotEqual,
            Kind::Blt => IntCC::SignedLessThan,
            Kind::Bge => IntCC::SignedGreaterThanOrEqual,
            Kind::Bltu => IntCC::UnsignedLessThan,
            _ => IntCC::UnsignedGreaterThanOrEqual,
        };
        let taken = self.b.ins().icmp(cc, a, bv);
        let taken64 = self.b.ins().uextend(I64, taken);
        let target = it.pc.wrapping_add(op.imm as i64 as u64);
        let pen = self.predict(it.pc, taken64, target);
        self.add_cycles(pen);
        let (yes, no) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(taken, yes, &[], no, &[]);
        self.b.switch_to_block(yes);
        self.taken(it, target);
        self.b.switch_to_block(no);
        let next = it.off + op.len() as i64 / 2;
        let (out, on, charged) =
            (self.exit_block(Exit::End(next), next), self.b.create_block(), self.b.create_block());
        // Only a mispredict's penalty can have brought the horizon near.
        self.b.ins().brif(pen, charged, &[], on, &[]);
        self.b.switch_to_block(charged);
        let near = self.near();
        self.b.ins().brif(near, out, &[], on, &[]);
        self.b.switch_to_block(on);
        self.next(j);
    }

    /// `BranchPred::branch_inline` for the branch at `pc` to `target`, resolved `taken`
    /// (0 or 1), with what depends only on the pc computed here (the BHT index's part of
    /// the pc, the BTB's slot and packed entry). Returns the cycles a mispredict adds,
    /// charged to the branch stall counter.
    fn predict(&mut self, pc: u64, taken64: Value, target: u64) -> Value {
        use crate::bpred::layout;
        let sh = self.t.shape;
        let flags = MemFlagsData::trusted();
        let bp = self.b.ins().iadd_imm_s(self.core, BP as i64);
        // The BHT: its index from the pc and the history's hash, its counter read and set.
        let hist = self.b.ins().uload8(I64, flags, bp, layout::HISTORY);
        let table = self.iconst(layout::HASH.as_ptr() as u64);
        let at = self.b.ins().iadd(table, hist);
        let hash = self.b.ins().uload8(I64, flags, at, 0);
        let addr = crate::bpred::bht_pc_part(pc, sh.bht_bits);
        let hash = self.b.ins().ishl_imm_s(hash, sh.hash_shift as i64);
        let i = self.b.ins().bxor_imm_s(hash, addr as i64);
        let i = self.b.ins().band_imm_s(i, ((1u64 << sh.bht_bits) - 1) as i64);
        let words = self.b.ins().load(I64, flags, self.io, IO_BHT);
        let word = self.b.ins().ushr_imm_s(i, 6);
        let word = self.b.ins().ishl_imm_s(word, 3);
        let wa = self.b.ins().iadd(words, word);
        let w = self.b.ins().load(I64, flags, wa, 0);
        let one = self.iconst(1);
        let bit = self.b.ins().ishl(one, i);
        let set = self.b.ins().band(w, bit);
        let counter = self.b.ins().icmp_imm_s(IntCC::NotEqual, set, 0);
        let (on, off) = (self.b.ins().bor(w, bit), self.b.ins().band_not(w, bit));
        let w2 = self.b.ins().select(taken64, on, off);
        self.b.ins().store(flags, w2, wa, 0);
        let newest = self.b.ins().ishl_imm_s(taken64, 7);
        let older = self.b.ins().ushr_imm_s(hist, 1);
        let hist2 = self.b.ins().bor(newest, older);
        self.b.ins().istore8(flags, hist2, bp, layout::HISTORY);
        // The BTB: held if its slot holds the pc; a taken branch's entry set.
        let held = self.btb(pc, taken64, target);
        let both = self.b.ins().band(counter, held);
        let taken8 = self.b.ins().ireduce(I8, taken64);
        let mis = self.b.ins().icmp(IntCC::NotEqual, both, taken8);
        self.mispredict_penalty(mis)
    }

    /// The cycles a mispredict adds if `mis` (an `I8` 0 or 1), charged to the branch stall
    /// counter.
    fn mispredict_penalty(&mut self, mis: Value) -> Value {
        let flags = MemFlagsData::trusted();
        let (p, zero) = (self.iconst(self.t.shape.penalty), self.iconst(0));
        let pen = self.b.ins().select(mis, p, zero);
        let s = self.b.ins().load(I64, flags, self.core, STALL_BRANCH);
        let s = self.b.ins().iadd(s, pen);
        self.b.ins().store(flags, s, self.core, STALL_BRANCH);
        pen
    }

    /// `BranchPred::jal` for a `jal` at `pc` to `target` that links nothing (no return
    /// stack push): the BTB holds the pair if its slot holds the pc (a direct jump's target
    /// is the pc's own), and the pair is written. Returns the cycles a mispredict adds,
    /// charged to the branch stall counter (`helpers::jal`'s, without the call: compute
    /// makes 1.4 M `jal`s).
    fn jump_predict(&mut self, pc: u64, target: u64) -> Value {
        let taken = self.iconst(1);
        let held = self.btb(pc, taken, target);
        let mis = self.b.ins().bxor_imm_s(held, 1);
        self.mispredict_penalty(mis)
    }

    /// The BTB part of `predict`: whether it held `pc` (an `I8` 0 or 1), a taken branch's
    /// packed pair written (`Trace::new` made sure it packs).
    fn btb(&mut self, pc: u64, taken64: Value, target: u64) -> Value {
        let flags = MemFlagsData::trusted();
        let slot = crate::bpred::btb_index(pc, (1 << self.t.shape.btb_bits) - 1) as i32;
        let entries = self.b.ins().load(I64, flags, self.io, IO_BTB);
        let e = self.b.ins().load(I64, flags, entries, slot * 8);
        let at = self.b.ins().ushr_imm_s(e, 32);
        let held = self.b.ins().icmp_imm_s(IntCC::Equal, at, pc as i64);
        let entry = crate::bpred::pack(pc, target).expect("a pair that packs (`Trace::new`)");
        let entry = self.iconst(entry);
        let kept = self.b.ins().select(taken64, entry, e);
        self.b.ins().store(flags, kept, entries, slot * 8);
        held
    }

    /// A taken branch to `target` (`branch_to`): in its line and far from the horizon, on
    /// there; out of it, as a jump (`jump_to`).
    fn taken(&mut self, it: &Item, target: u64) {
        if (target ^ it.pc) >> self.t.shape.line_shift != 0 {
            return self.jump_to(it, target);
        }
        let off = it.off + (target.wrapping_sub(it.pc) as i64) / 2;
        let near = self.near();
        let (out, on) = (self.exit_block(Exit::Jump(target), it.end), self.b.create_block());
        self.b.ins().brif(near, out, &[], on, &[]);
        self.b.switch_to_block(on);
        match self.t.at(off) {
            Some(k) => self.jump(k),
            None => self.exit(Exit::Next(off), it.end),
        }
    }

    /// A jump to `target` that ends the fast engine's line run (`Flow::Jump`): on at its
    /// op if the trace has it, far from the horizon and the line entered with no miss
    /// (`run_lines` then runs it in the quiet loop as well), else out with the jump.
    fn jump_to(&mut self, it: &Item, target: u64) {
        let off = it.off + (target.wrapping_sub(it.pc) as i64) / 2;
        let Some(k) = self.t.at(off) else {
            return self.exit(Exit::Jump(target), it.end);
        };
        let near = self.near();
        let (out, on) = (self.exit_block(Exit::Jump(target), it.end), self.b.create_block());
        self.b.ins().brif(near, out, &[], on, &[]);
        self.b.switch_to_block(on);
        let to = self.blocks[k];
        self.cross(target, to, out);
    }

    /// Whether the cycle has reached the far limit (`Run::settle_variable`).
    fn near(&mut self) -> Value {
        let c = self.b.use_var(self.cycle);
        self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, c, self.far)
    }

    fn iconst(&mut self, v: u64) -> Value {
        self.b.ins().iconst(I64, v as i64)
    }

    /// `jal` (`jal_to`): the predictor, the link, out to the target.
    fn jal(&mut self, j: usize) {
        let it = &self.t.items[j];
        self.issue();
        let op = it.op;
        let target = it.pc.wrapping_add(op.imm as i64 as u64);
        let next = it.pc + op.len() as u64;
        let pen = match links(op) {
            true => {
                let args = [self.core, self.iconst(it.pc), self.iconst(target), self.iconst(next)];
                self.call(helpers::jal as *const () as usize, &args)
            }
            false => self.jump_predict(it.pc, target),
        };
        self.add_cycles(pen);
        let nv = self.iconst(next);
        self.write(op.rd, nv);
        self.jump_to(it, target);
    }

    /// `jalr` (`Core::jalr`): the predictor (`helpers::jalr`), the link; then on at its
    /// target if that is one of the trace's return sites (`Trace::return_sites`: a return
    /// from a call in it), far from the horizon and its line entered with no miss
    /// (`cross`), as `run_lines` would go on there; else out with the jump (the target is
    /// the exit's code), as after a predictor that left its packed form.
    fn jalr(&mut self, j: usize) {
        let it = &self.t.items[j];
        let op = it.op;
        self.issue();
        let base = self.read(op.rs1);
        let target = self.b.ins().iadd_imm_s(base, op.imm as i64);
        let target = self.b.ins().band_imm_s(target, -2);
        let next = it.pc + op.len() as u64;
        let ret = op.rd == crate::op::SINK && matches!(op.rs1, 1 | 5);
        let link_ret = if links(op) { next } else { 0 } | if ret { helpers::RET } else { 0 };
        let args = [self.core, self.iconst(it.pc), target, self.iconst(link_ret)];
        let answer = self.call(helpers::jalr as *const () as usize, &args);
        let pen = self.b.ins().band_imm_s(answer, helpers::BTB_WIDE as i64 - 1);
        self.add_cycles(pen);
        let nv = self.iconst(next);
        self.write(op.rd, nv);
        let out = self.b.create_block();
        let wide = self.b.ins().band_imm_s(answer, helpers::BTB_WIDE as i64);
        self.on_unless(wide, out);
        let near = self.near();
        self.on_unless(near, out);
        for k in self.t.return_sites() {
            let site = self.t.items[k].pc;
            let (there, other) = (self.b.create_block(), self.b.create_block());
            let is = self.b.ins().icmp_imm_s(IntCC::Equal, target, site as i64);
            self.b.ins().brif(is, there, &[], other, &[]);
            self.b.switch_to_block(there);
            let to = self.blocks[k];
            self.cross(site, to, out);
            self.b.switch_to_block(other);
        }
        self.jump_block(out);
        self.b.switch_to_block(out);
        let end = self.b.ins().iconst(I64, it.end + self.t.slot);
        self.b.ins().jump(self.out, &[BlockArg::Value(target), BlockArg::Value(end)]);
    }

    fn jump_block(&mut self, to: Block) {
        self.b.ins().jump(to, &[]);
    }

    /// On in a new block if `cond` is 0, else to `to`.
    fn on_unless(&mut self, cond: Value, to: Block) {
        let on = self.b.create_block();
        self.b.ins().brif(cond, to, &[], on, &[]);
        self.b.switch_to_block(on);
    }
}
