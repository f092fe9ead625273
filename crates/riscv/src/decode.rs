//! 32-bit instruction decoding to [`Op`] (RISC-V unprivileged spec chapter 34, "RV32/64G
//! Instruction Set Listings": RV64IMAFD + Zicsr + Zifencei, plus the privileged
//! `mret`/`wfi`). Compressed parcels are first expanded by [`crate::rvc`].

use crate::op::{Amo, Kind, Op, SINK};
use crate::rvc;

fn bits(x: u32, hi: u32, lo: u32) -> u32 {
    (x >> lo) & ((1 << (hi - lo + 1)) - 1)
}

fn imm_i(x: u32) -> i32 {
    (x as i32) >> 20
}

fn imm_s(x: u32) -> i32 {
    (((x & 0xfe00_0000) as i32) >> 20) | bits(x, 11, 7) as i32
}

fn imm_b(x: u32) -> i32 {
    let v = (bits(x, 31, 31) << 12) | (bits(x, 7, 7) << 11) | (bits(x, 30, 25) << 5) | (bits(x, 11, 8) << 1);
    ((v << 19) as i32) >> 19
}

fn imm_j(x: u32) -> i32 {
    let v =
        (bits(x, 31, 31) << 20) | (bits(x, 19, 12) << 12) | (bits(x, 20, 20) << 11) | (bits(x, 30, 21) << 1);
    ((v << 11) as i32) >> 11
}

/// Is this raw 32-bit word a floating-point instruction (F/D/Q opcodes)?
pub fn is_fp_opcode(raw: u32) -> bool {
    if raw & 3 != 3 {
        // C.FLD/C.FSD (quadrant 0) and C.FLDSP/C.FSDSP (quadrant 2), funct3 001/101.
        let f3 = bits(raw, 15, 13);
        return raw & 3 != 1 && (f3 == 1 || f3 == 5);
    }
    matches!(raw & 0x7f, 0x07 | 0x27 | 0x43 | 0x47 | 0x4b | 0x4f | 0x53)
}

/// Decode the instruction whose first parcel is `lo` (and second `hi`).
/// `nanopu`: x30/x31 are the netRX/netTX registers (see `net.rs`).
pub fn decode_parcels(lo: u16, hi: u16, nanopu: bool) -> Op {
    let op = if lo & 3 != 3 {
        match rvc::expand(lo as u32) {
            Some(raw) => decode32(raw, 2),
            None => Op::illegal(lo as u32, 2),
        }
    } else {
        decode32(lo as u32 | ((hi as u32) << 16), 4)
    };
    finish(op, lo as u32 | ((hi as u32) << 16), nanopu)
}

/// Route x30/x31 instructions of nanoPU programs to the slow path and sink x0 writes.
fn finish(mut op: Op, raw: u32, nanopu: bool) -> Op {
    if nanopu && op.kind() != Kind::Illegal && (op.rs1 == 30 || op.rs2 == 30 || op.rd == 31) {
        let raw = if op.len() == 2 { raw & 0xffff } else { raw };
        return Op::new(Kind::Net, SINK, 0, 0, raw as i32, op.len());
    }
    // Writes to x0, and to x30 in a nanoPU program (docs/abi.md), are discarded.
    if op.rd == 0 || (nanopu && op.rd == 30) {
        op.rd = SINK;
    }
    op
}

fn mk(kind: Kind, rd: u32, rs1: u32, rs2: u32, imm: i32, len: u8) -> Op {
    Op::new(kind, rd as u8, rs1 as u8, rs2 as u8, imm, len)
}

/// Decode a 32-bit instruction word (`len` = 2 when it came from an expanded parcel).
/// Registers are raw here: x0 as a destination is not yet redirected.
pub fn decode32(x: u32, len: u8) -> Op {
    let (rd, rs1, rs2) = (bits(x, 11, 7), bits(x, 19, 15), bits(x, 24, 20));
    let f3 = bits(x, 14, 12);
    let op = match x & 0x7f {
        0x37 => Some(mk(Kind::Lui, rd, 0, 0, (x & 0xffff_f000) as i32, len)),
        0x17 => Some(mk(Kind::Auipc, rd, 0, 0, (x & 0xffff_f000) as i32, len)),
        0x6f => Some(mk(Kind::Jal, rd, 0, 0, imm_j(x), len)),
        0x67 => (f3 == 0).then(|| mk(Kind::Jalr, rd, rs1, 0, imm_i(x), len)),
        0x63 => branch(f3).map(|k| mk(k, 0, rs1, rs2, imm_b(x), len)),
        0x03 => load(f3).map(|k| mk(k, rd, rs1, 0, imm_i(x), len)),
        0x23 => store(f3).map(|k| mk(k, 0, rs1, rs2, imm_s(x), len)),
        0x13 => op_imm(x, f3).map(|(k, imm)| mk(k, rd, rs1, 0, imm, len)),
        0x1b => op_imm32(x, f3).map(|(k, imm)| mk(k, rd, rs1, 0, imm, len)),
        0x33 => op_reg(bits(x, 31, 25), f3)
            .map(|k| mk(k, rd, rs1, rs2, (k == Kind::Bswap) as i32 * f3 as i32, len)),
        0x3b => op_reg32(bits(x, 31, 25), f3).map(|k| mk(k, rd, rs1, rs2, 0, len)),
        0x0f => misc_mem(f3).map(|k| mk(k, 0, 0, 0, 0, len)),
        0x73 => system(x, rd, rs1, f3, len),
        0x2f => atomic(x, rd, rs1, rs2, f3, len),
        0x07 | 0x27 => (f3 == 2 || f3 == 3).then(|| mk(Kind::Fp, 0, rs1, 0, x as i32, len)),
        0x43 | 0x47 | 0x4b | 0x4f => (fmt_ok(x) && rm_ok(f3)).then(|| mk(Kind::Fp, 0, 0, 0, x as i32, len)),
        0x53 => op_fp(x, rd, rs1, rs2, f3, len),
        _ => None,
    };
    op.unwrap_or(Op::illegal(x, len))
}

fn branch(f3: u32) -> Option<Kind> {
    const K: [Option<Kind>; 8] = [
        Some(Kind::Beq),
        Some(Kind::Bne),
        None,
        None,
        Some(Kind::Blt),
        Some(Kind::Bge),
        Some(Kind::Bltu),
        Some(Kind::Bgeu),
    ];
    K[f3 as usize]
}

fn load(f3: u32) -> Option<Kind> {
    const K: [Option<Kind>; 8] = [
        Some(Kind::Lb),
        Some(Kind::Lh),
        Some(Kind::Lw),
        Some(Kind::Ld),
        Some(Kind::Lbu),
        Some(Kind::Lhu),
        Some(Kind::Lwu),
        None,
    ];
    K[f3 as usize]
}

fn store(f3: u32) -> Option<Kind> {
    const K: [Option<Kind>; 4] = [Some(Kind::Sb), Some(Kind::Sh), Some(Kind::Sw), Some(Kind::Sd)];
    K.get(f3 as usize).copied().flatten()
}

fn op_imm(x: u32, f3: u32) -> Option<(Kind, i32)> {
    let shamt = bits(x, 25, 20) as i32;
    let f6 = bits(x, 31, 26);
    Some(match f3 {
        0 => (Kind::Addi, imm_i(x)),
        2 => (Kind::Slti, imm_i(x)),
        3 => (Kind::Sltiu, imm_i(x)),
        4 => (Kind::Xori, imm_i(x)),
        6 => (Kind::Ori, imm_i(x)),
        7 => (Kind::Andi, imm_i(x)),
        1 if f6 == 0 => (Kind::Slli, shamt),
        5 if f6 == 0 => (Kind::Srli, shamt),
        5 if f6 == 0x10 => (Kind::Srai, shamt),
        _ => return None,
    })
}

fn op_imm32(x: u32, f3: u32) -> Option<(Kind, i32)> {
    let shamt = bits(x, 24, 20) as i32;
    let f7 = bits(x, 31, 25);
    Some(match (f3, f7) {
        (0, _) => (Kind::Addiw, imm_i(x)),
        (1, 0) => (Kind::Slliw, shamt),
        (5, 0) => (Kind::Srliw, shamt),
        (5, 0x20) => (Kind::Sraiw, shamt),
        _ => return None,
    })
}

fn op_reg(f7: u32, f3: u32) -> Option<Kind> {
    use Kind::*;
    const BASE: [Kind; 8] = [Add, Sll, Slt, Sltu, Xor, Srl, Or, And];
    const MULDIV: [Kind; 8] = [Mul, Mulh, Mulhsu, Mulhu, Div, Divu, Rem, Remu];
    match (f7, f3) {
        (0, _) => Some(BASE[f3 as usize]),
        (1, _) => Some(MULDIV[f3 as usize]),
        (0x20, 0) => Some(Sub),
        (0x20, 5) => Some(Sra),
        (0x2a, 0..=2) => Some(Bswap),
        _ => None,
    }
}

fn op_reg32(f7: u32, f3: u32) -> Option<Kind> {
    use Kind::*;
    Some(match (f7, f3) {
        (0, 0) => Addw,
        (0x20, 0) => Subw,
        (0, 1) => Sllw,
        (0, 5) => Srlw,
        (0x20, 5) => Sraw,
        (1, 0) => Mulw,
        (1, 4) => Divw,
        (1, 5) => Divuw,
        (1, 6) => Remw,
        (1, 7) => Remuw,
        _ => return None,
    })
}

fn misc_mem(f3: u32) -> Option<Kind> {
    match f3 {
        0 => Some(Kind::Fence),
        1 => Some(Kind::FenceI),
        _ => None,
    }
}

fn system(x: u32, rd: u32, rs1: u32, f3: u32, len: u8) -> Option<Op> {
    let csr = (x >> 20) as i32;
    let k = match f3 {
        0 => return priv_op(x).map(|k| mk(k, 0, 0, 0, 0, len)),
        1 => return Some(mk(Kind::Csrrw, rd, rs1, 0, csr, len)),
        2 => return Some(mk(Kind::Csrrs, rd, rs1, 0, csr, len)),
        3 => return Some(mk(Kind::Csrrc, rd, rs1, 0, csr, len)),
        5 => Kind::Csrrwi,
        6 => Kind::Csrrsi,
        7 => Kind::Csrrci,
        _ => return None,
    };
    // Immediate forms: the 5-bit uimm travels in imm bits 16..12, rs1 stays x0.
    Some(mk(k, rd, 0, 0, csr | ((rs1 as i32) << 12), len))
}

fn priv_op(x: u32) -> Option<Kind> {
    match x {
        0x0000_0073 => Some(Kind::Ecall),
        0x0010_0073 => Some(Kind::Ebreak),
        0x3020_0073 => Some(Kind::Mret),
        0x1050_0073 => Some(Kind::Wfi),
        _ => None,
    }
}

fn atomic(x: u32, rd: u32, rs1: u32, rs2: u32, f3: u32, len: u8) -> Option<Op> {
    let f5 = bits(x, 31, 27);
    let dbl = match f3 {
        2 => false,
        3 => true,
        _ => return None,
    };
    let (lr, sc, amo) =
        if dbl { (Kind::LrD, Kind::ScD, Kind::AmoD) } else { (Kind::LrW, Kind::ScW, Kind::AmoW) };
    match f5 {
        0b00010 if rs2 == 0 => Some(mk(lr, rd, rs1, 0, 0, len)),
        0b00011 => Some(mk(sc, rd, rs1, rs2, 0, len)),
        _ => Amo::from_funct5(f5).map(|a| mk(amo, rd, rs1, rs2, a as i32, len)),
    }
}

/// The fmt field (bits 26..25): S (0) and D (1) exist; H and Q are not implemented.
fn fmt_ok(x: u32) -> bool {
    bits(x, 26, 25) < 2
}

/// Static rounding modes 5 and 6 are reserved (spec "Rounding mode encoding"); 7 is dynamic
/// and checked against `frm` when executed.
fn rm_ok(f3: u32) -> bool {
    f3 != 5 && f3 != 6
}

/// OP-FP (RV32F/RV64F/RV32D/RV64D listings): which encodings exist, and whether the op's
/// rd / rs1 are integer registers (rs2 never is).
fn op_fp(x: u32, rd: u32, rs1: u32, rs2: u32, f3: u32, len: u8) -> Option<Op> {
    let fmt = bits(x, 26, 25);
    let (ok, int_rd, int_rs1) = match bits(x, 31, 27) {
        0..=3 => (rm_ok(f3), false, false),            // fadd fsub fmul fdiv
        0x0b => (rm_ok(f3) && rs2 == 0, false, false), // fsqrt
        0x04 => (f3 < 3, false, false),                // fsgnj fsgnjn fsgnjx
        0x05 => (f3 < 2, false, false),                // fmin fmax
        0x08 => (rm_ok(f3) && rs2 == 1 - fmt.min(1), false, false), // fcvt.s.d / fcvt.d.s
        0x14 => (f3 < 3, true, false),                 // fle flt feq
        0x18 => (rm_ok(f3) && rs2 < 4, true, false),   // fcvt.{w,wu,l,lu}.fmt
        0x1a => (rm_ok(f3) && rs2 < 4, false, true),   // fcvt.fmt.{w,wu,l,lu}
        0x1c => (f3 < 2 && rs2 == 0, true, false),     // fmv.x.{w,d}, fclass
        0x1e => (f3 == 0 && rs2 == 0, false, true),    // fmv.{w,d}.x
        _ => (false, false, false),
    };
    let (rd, rs1) = (if int_rd { rd } else { 0 }, if int_rs1 { rs1 } else { 0 });
    (ok && fmt_ok(x)).then(|| mk(Kind::Fp, rd, rs1, 0, x as i32, len))
}
