//! The F and D extensions on the core (RISC-V unprivileged ISA, chapters "F" and "D"): the
//! 32 64-bit `f` registers with NaN boxing of single values, `fflags`/`frm`/`fcsr`,
//! `mstatus.FS`, and the timing of Rocket's FPU (pipelined FMA units, the fast FP-to-FP
//! and int-to-FP pipes, the FP-to-int path and the iterative divide/square-root unit;
//! latencies in [`crate::TimingParams`]). Every F/D instruction decodes to `Kind::Fp` with
//! the raw encoding in `imm` (`decode.rs`); only integer operands appear in the op's
//! register fields, so the integer scoreboard and the nanoPU routing need no FP cases.

use crate::core::{Core, Ex};
use crate::fparith::{self as fa, Fmt, Rm, D, S};
use crate::fpconv::{self as fc, IntTy};
use crate::mem::NodeMem;
use crate::op::Op;

/// mstatus.FS (privileged spec "Extension Context Status"): Off = 0, Dirty = 3.
pub const FS: u64 = 3 << 13;
const SD: u64 = 1 << 63;

/// mstatus as read: SD summarizes FS == Dirty (XS and VS are always Off here).
pub fn with_sd(mstatus: u64) -> u64 {
    if mstatus & FS == FS {
        mstatus | SD
    } else {
        mstatus
    }
}

/// FP architectural state and the FPU's timing state.
#[derive(Default, Hash)]
pub(crate) struct FpState {
    pub f: [u64; 32],
    /// Scoreboard of the f registers (cycle the pending result is available).
    pub ready: [u64; 32],
    pub flags: u8,
    pub frm: u8,
    /// First cycle at which the unpipelined divide/square-root unit accepts an operation.
    pub div_free: u64,
}

/// The FP state at reset: every register, flag and scoreboard entry 0.
const RESET: FpState = FpState { f: [0; 32], ready: [0; 32], flags: 0, frm: 0, div_free: 0 };

/// A core's FP state, allocated at its first change: until then it reads as [`RESET`]. A
/// program that runs no F or D instruction (NanoSort, most programs here) then keeps 8 bytes
/// a core instead of 528 (docs/profile.md, "Where a 4-core node's memory goes").
#[derive(Default)]
pub(crate) struct LazyFp(Option<Box<FpState>>);

impl std::ops::Deref for LazyFp {
    type Target = FpState;

    fn deref(&self) -> &FpState {
        self.0.as_deref().unwrap_or(&RESET)
    }
}

impl std::ops::DerefMut for LazyFp {
    fn deref_mut(&mut self) -> &mut FpState {
        self.0.get_or_insert_with(|| Box::new(RESET))
    }
}

/// As the state it reads as: allocated or not, the same state hashes the same.
impl std::hash::Hash for LazyFp {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (**self).hash(h);
    }
}

/// A single value in a 64-bit register is NaN-boxed: upper 32 bits all ones (spec "NaN
/// Boxing of Narrower Values"); anything else reads as the canonical NaN.
fn unbox(v: u64) -> u64 {
    if v >> 32 == 0xffff_ffff {
        v & 0xffff_ffff
    } else {
        S.canonical_nan()
    }
}

fn nan_box(v: u64) -> u64 {
    v | 0xffff_ffff_0000_0000
}

fn bits(x: u32, hi: u32, lo: u32) -> u32 {
    (x >> lo) & ((1 << (hi - lo + 1)) - 1)
}

/// Functional units, for latency (Rocket `FPU.scala`).
#[derive(Clone, Copy)]
enum Unit {
    Fma,
    Misc,
    IntToFp,
    FpToInt,
    DivSqrt,
}

/// An instruction's result: an f register (raw format bits) or an integer register.
enum Out {
    F(u64),
    X(u64),
}

impl Core {
    fn fs_on(&self) -> bool {
        self.csr.mstatus & FS != 0
    }

    fn fp_dirty(&mut self) {
        self.csr.mstatus |= FS;
    }

    /// Read `fflags` (0x001), `frm` (0x002) or `fcsr` (0x003); `None` (illegal) if FS = Off.
    pub(crate) fn fcsr_read(&self, addr: u16) -> Option<u64> {
        let (fl, rm) = (self.fp.flags as u64, self.fp.frm as u64);
        self.fs_on().then_some(match addr {
            1 => fl,
            2 => rm,
            _ => (rm << 5) | fl,
        })
    }

    /// Write an FP CSR (WARL: only the defined bits are kept); sets FS = Dirty.
    pub(crate) fn fcsr_write(&mut self, addr: u16, v: u64) -> Result<bool, ()> {
        if !self.fs_on() {
            return Err(());
        }
        match addr {
            1 => self.fp.flags = (v & 0x1f) as u8,
            2 => self.fp.frm = (v & 7) as u8,
            _ => (self.fp.flags, self.fp.frm) = ((v & 0x1f) as u8, ((v >> 5) & 7) as u8),
        }
        self.fp_dirty();
        Ok(false)
    }

    /// f register `r` as a value of format `dbl` (singles unboxed).
    fn fval(&self, r: u32, dbl: bool) -> u64 {
        let v = self.fp.f[r as usize];
        if dbl {
            v
        } else {
            unbox(v)
        }
    }

    /// The rounding mode of `raw`: static, or `frm` for 7; reserved ones are illegal.
    fn rm(&self, raw: u32) -> Result<Rm, Ex> {
        let f3 = bits(raw, 14, 12);
        let m = if f3 == 7 { self.fp.frm as u32 } else { f3 };
        Rm::from_bits(m).ok_or_else(|| self.illegal())
    }

    /// Wait for f-register sources (the integer ones were waited for in `exec`).
    fn fp_stall(&mut self, srcs: &[u32]) {
        let r = srcs.iter().map(|&s| self.fp.ready[s as usize]).max().unwrap_or(0);
        let issue = self.cycle - 1;
        if r > issue {
            self.stats.stall_muldiv += r - issue;
            self.cycle += r - issue;
        }
    }

    fn latency(&self, unit: Unit, dbl: bool) -> u64 {
        let t = &self.t;
        match unit {
            Unit::Fma if dbl => t.fp_dfma_latency,
            Unit::Fma => t.fp_sfma_latency,
            Unit::Misc => t.fp_misc_latency,
            Unit::IntToFp => t.fp_from_int_latency,
            Unit::FpToInt => t.fp_to_int_latency,
            Unit::DivSqrt if dbl => t.fp_ddivsqrt_latency,
            Unit::DivSqrt => t.fp_sdivsqrt_latency,
        }
    }

    /// Cycle the result is ready; the divide/square-root unit takes one operation at a time.
    fn fp_done(&mut self, unit: Unit, dbl: bool) -> u64 {
        let issue = self.cycle - 1;
        if let Unit::DivSqrt = unit {
            if self.fp.div_free > issue {
                self.stats.stall_muldiv += self.fp.div_free - issue;
                self.cycle += self.fp.div_free - issue;
            }
            let done = self.cycle - 1 + self.latency(unit, dbl);
            self.fp.div_free = done;
            return done;
        }
        issue + self.latency(unit, dbl)
    }

    /// Write the result, accrue the flags and advance the pc.
    fn fp_commit(&mut self, op: Op, out: Out, fl: u8, unit: Unit, dbl: bool) {
        let done = self.fp_done(unit, dbl);
        match out {
            Out::F(v) => {
                let rd = bits(op.imm as u32, 11, 7) as usize;
                self.fp.f[rd] = if dbl { v } else { nan_box(v) };
                self.fp.ready[rd] = done;
                self.fp_dirty();
            }
            Out::X(v) => {
                self.x[op.rd as usize] = v;
                self.ready[op.rd as usize] = done;
                self.ready_muldiv[op.rd as usize] = true;
            }
        }
        if fl != 0 {
            self.fp.flags |= fl;
            self.fp_dirty();
        }
        self.pc += op.len() as u64;
    }

    /// Execute an F/D instruction; `a` is its integer rs1 operand (0 if it has none).
    pub(crate) fn exec_fp(&mut self, op: Op, mem: &mut NodeMem, a: u64) -> Result<(), Ex> {
        if !self.fs_on() {
            return Err(self.illegal()); // privileged spec: FS = Off traps every F/D access
        }
        let raw = op.imm as u32;
        match raw & 0x7f {
            0x07 => self.fp_load(op, mem, raw, a),
            0x27 => self.fp_store(op, mem, raw, a),
            0x53 => self.fp_op(op, raw, a),
            _ => self.fp_fma(op, raw),
        }
    }

    /// FLW/FLD: a single is NaN-boxed on its way in. Rocket writes load data to the FP
    /// register file a cycle after the response (`load_wb` in `FPU.scala`).
    fn fp_load(&mut self, op: Op, mem: &mut NodeMem, raw: u32, a: u64) -> Result<(), Ex> {
        let addr = a.wrapping_add(((raw as i32) >> 20) as i64 as u64);
        let dbl = bits(raw, 14, 12) == 3;
        let v = if dbl { self.load::<8>(mem, addr)? } else { nan_box(self.load::<4>(mem, addr)?) };
        let rd = bits(raw, 11, 7) as usize;
        self.fp.f[rd] = v;
        self.fp.ready[rd] = self.cycle - 1 + self.t.load_latency + self.t.fp_load_extra;
        self.fp_dirty();
        self.pc += op.len() as u64;
        Ok(())
    }

    /// FSW/FSD store the register's low 32/64 bits unchanged (no unboxing).
    fn fp_store(&mut self, op: Op, mem: &mut NodeMem, raw: u32, a: u64) -> Result<(), Ex> {
        let imm = (((raw & 0xfe00_0000) as i32) >> 20) | bits(raw, 11, 7) as i32;
        let rs2 = bits(raw, 24, 20);
        self.fp_stall(&[rs2]);
        let addr = a.wrapping_add(imm as i64 as u64);
        let v = self.fp.f[rs2 as usize];
        let next = self.pc + op.len() as u64;
        if bits(raw, 14, 12) == 3 {
            self.store_op::<8>(mem, addr, v, next)
        } else {
            self.store_op::<4>(mem, addr, v, next)
        }
    }

    /// FMADD/FMSUB/FNMSUB/FNMADD: negations of the product and of the addend around one
    /// fused operation (spec "Single-Precision Floating-Point Computational Instructions").
    fn fp_fma(&mut self, op: Op, raw: u32) -> Result<(), Ex> {
        let dbl = bits(raw, 25, 25) == 1;
        let f = if dbl { D } else { S };
        let (r1, r2, r3) = (bits(raw, 19, 15), bits(raw, 24, 20), bits(raw, 31, 27));
        let rm = self.rm(raw)?;
        self.fp_stall(&[r1, r2, r3]);
        let (neg_prod, neg_c) = match raw & 0x7f {
            0x43 => (false, false),
            0x47 => (false, true),
            0x4b => (true, false),
            _ => (true, true),
        };
        let x = self.fval(r1, dbl) ^ if neg_prod { f.sign_bit() } else { 0 };
        let c = self.fval(r3, dbl) ^ if neg_c { f.sign_bit() } else { 0 };
        let mut fl = 0;
        let v = fa::fma(f, x, self.fval(r2, dbl), c, rm, &mut fl);
        self.fp_commit(op, Out::F(v), fl, Unit::Fma, dbl);
        Ok(())
    }

    /// OP-FP (opcode 0x53), dispatched on funct5.
    fn fp_op(&mut self, op: Op, raw: u32, a: u64) -> Result<(), Ex> {
        let dbl = bits(raw, 25, 25) == 1;
        let (r1, r2) = (bits(raw, 19, 15), bits(raw, 24, 20));
        self.fp_stall(&[r1, r2][..fp_sources(raw)]);
        let mut fl = 0;
        let (out, unit) = match bits(raw, 31, 27) {
            0..=3 | 0x0b => self.fp_arith(raw, dbl, &mut fl)?,
            0x08 => (Out::F(self.fp_cvt_fmt(raw, dbl, &mut fl)?), Unit::Misc),
            0x18 => (Out::X(self.fp_to_int(raw, dbl, &mut fl)?), Unit::FpToInt),
            0x1a => (Out::F(self.fp_from_int(raw, dbl, a, &mut fl)?), Unit::IntToFp),
            0x1e => (Out::F(if dbl { a } else { a & 0xffff_ffff }), Unit::IntToFp),
            _ => self.fp_norm(raw, dbl, &mut fl),
        };
        self.fp_commit(op, out, fl, unit, dbl);
        Ok(())
    }

    /// FADD/FSUB/FMUL (the FMA pipeline), FDIV/FSQRT (the divide/square-root unit).
    fn fp_arith(&self, raw: u32, dbl: bool, fl: &mut u8) -> Result<(Out, Unit), Ex> {
        let f = if dbl { D } else { S };
        let rm = self.rm(raw)?;
        let (x, y) = (self.fval(bits(raw, 19, 15), dbl), self.fval(bits(raw, 24, 20), dbl));
        Ok(match bits(raw, 31, 27) {
            0 => (Out::F(fa::add(f, x, y, rm, fl)), Unit::Fma),
            1 => (Out::F(fa::sub(f, x, y, rm, fl)), Unit::Fma),
            2 => (Out::F(fa::mul(f, x, y, rm, fl)), Unit::Fma),
            3 => (Out::F(fa::div(f, x, y, rm, fl)), Unit::DivSqrt),
            _ => (Out::F(fa::sqrt(f, x, rm, fl)), Unit::DivSqrt),
        })
    }

    /// The operations without a rounding mode: sign injection, min/max, compares,
    /// FMV.X.W/FMV.X.D and FCLASS (funct3 selects the operation).
    fn fp_norm(&self, raw: u32, dbl: bool, fl: &mut u8) -> (Out, Unit) {
        let f = if dbl { D } else { S };
        let (r1, f3) = (bits(raw, 19, 15), bits(raw, 14, 12));
        let (x, y) = (self.fval(r1, dbl), self.fval(bits(raw, 24, 20), dbl));
        match bits(raw, 31, 27) {
            0x04 => (Out::F(fc::sgnj(f, x, y, f3)), Unit::Misc),
            0x05 => (Out::F(fc::min_max(f, x, y, f3 == 1, fl)), Unit::Misc),
            0x14 => (Out::X(compare(f, x, y, f3, fl) as u64), Unit::FpToInt),
            _ if f3 == 1 => (Out::X(fc::fclass(f, x)), Unit::FpToInt),
            _ => (Out::X(fmv_x(self.fp.f[r1 as usize], dbl)), Unit::FpToInt),
        }
    }

    /// FCVT.S.D (`dbl` false) and FCVT.D.S (`dbl` true).
    fn fp_cvt_fmt(&self, raw: u32, dbl: bool, fl: &mut u8) -> Result<u64, Ex> {
        let (from, to) = if dbl { (S, D) } else { (D, S) };
        let rm = self.rm(raw)?;
        Ok(fc::convert(from, to, self.fval(bits(raw, 19, 15), !dbl), rm, fl))
    }

    fn fp_to_int(&self, raw: u32, dbl: bool, fl: &mut u8) -> Result<u64, Ex> {
        let f: Fmt = if dbl { D } else { S };
        let rm = self.rm(raw)?;
        let ty = IntTy::from_rs2(bits(raw, 24, 20));
        Ok(fc::to_int(f, self.fval(bits(raw, 19, 15), dbl), ty, rm, fl))
    }

    fn fp_from_int(&self, raw: u32, dbl: bool, a: u64, fl: &mut u8) -> Result<u64, Ex> {
        let f = if dbl { D } else { S };
        let rm = self.rm(raw)?;
        Ok(fc::from_int(f, a, IntTy::from_rs2(bits(raw, 24, 20)), rm, fl))
    }

    /// f register `i` (0..32) as stored, for tests and tools.
    pub fn freg(&self, i: usize) -> u64 {
        self.fp.f[i & 31]
    }

    /// The accrued exception flags (`fflags`).
    pub fn fflags(&self) -> u8 {
        self.fp.flags
    }
}

/// How many of rs1, rs2 an OP-FP instruction reads as f registers: none when rs1 is an
/// integer (FCVT from integers, FMV.W.X / FMV.D.X), only rs1 when rs2 is a fixed field.
fn fp_sources(raw: u32) -> usize {
    match bits(raw, 31, 27) {
        0x1a | 0x1e => 0,
        0x0b | 0x08 | 0x18 | 0x1c => 1,
        _ => 2,
    }
}

/// FEQ (funct3 2), FLT (1), FLE (0).
fn compare(f: Fmt, x: u64, y: u64, f3: u32, fl: &mut u8) -> bool {
    match f3 {
        2 => fc::feq(f, x, y, fl),
        1 => fc::flt_le(f, x, y, false, fl),
        _ => fc::flt_le(f, x, y, true, fl),
    }
}

/// FMV.X.W moves the low 32 bits unchanged, sign-extended (no unboxing); FMV.X.D all 64.
fn fmv_x(v: u64, dbl: bool) -> u64 {
    if dbl {
        v
    } else {
        v as i32 as i64 as u64
    }
}
