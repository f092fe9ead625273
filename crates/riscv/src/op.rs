//! The decoded instruction: a compact, `Copy` record produced once per 2-byte code slot.
//!
//! Register fields are already resolved for the fast path: a write to `x0` targets the
//! scratch slot [`SINK`], and source fields of formats that have no such operand are 0 (x0,
//! never written, always ready), so the executor and the scoreboard need no format checks.

/// Register slot that absorbs writes to `x0` (and to `x30` in nanoPU mode).
pub const SINK: u8 = 32;
/// Scratch slots holding popped netRX words for rs1 / rs2 (see `net.rs`).
pub const RX1: u8 = 33;
pub const RX2: u8 = 34;
/// Size of the register file array including the scratch slots.
pub const NREGS: usize = 35;

/// Operation kinds. One variant per instruction after compressed expansion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Illegal,
    /// Instruction touches x30/x31 in a nanoPU program: re-decoded on the slow path.
    Net,
    /// The PC is not in fetchable memory (instruction access fault).
    FetchFault,
    Lui,
    Auipc,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Ld,
    Lbu,
    Lhu,
    Lwu,
    Sb,
    Sh,
    Sw,
    Sd,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Addiw,
    Slliw,
    Srliw,
    Sraiw,
    Addw,
    Subw,
    Sllw,
    Srlw,
    Sraw,
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    Div,
    Divu,
    Rem,
    Remu,
    Mulw,
    Divw,
    Divuw,
    Remw,
    Remuw,
    Fence,
    FenceI,
    Ecall,
    Ebreak,
    Mret,
    Wfi,
    /// CSR ops: `imm` bits 11..0 = CSR address, bits 16..12 = uimm for the `i` forms.
    Csrrw,
    Csrrs,
    Csrrc,
    Csrrwi,
    Csrrsi,
    Csrrci,
    /// Atomics: `imm` = AMO function (see `Amo`), width in the kind.
    LrW,
    ScW,
    AmoW,
    LrD,
    ScD,
    AmoD,
    /// The IceNIC cores' byte swap (`TimingParams::bswap_insns`): `imm` = funct3, 0/1/2 for
    /// 2/4/8 bytes.
    Bswap,
    /// Every F/D instruction (`fpu.rs`): `imm` = the raw (expanded) encoding; `rd`/`rs1`
    /// name only integer operands (FMV/FCVT/compare/classify results, FMV/FCVT sources,
    /// load/store bases) and are SINK/0 otherwise; f registers are read from `imm`.
    Fp,
}

impl Kind {
    /// An M-extension kind (`Mul` to `Remuw`, declared in a row): the mul/div unit's.
    #[inline(always)]
    pub fn is_muldiv(self) -> bool {
        (Kind::Mul as u8..=Kind::Remuw as u8).contains(&(self as u8))
    }
}

/// AMO functions (funct5 of the A extension), stored in `Op::imm` for `AmoW`/`AmoD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amo {
    Swap,
    Add,
    Xor,
    And,
    Or,
    Min,
    Max,
    Minu,
    Maxu,
}

impl Amo {
    pub fn from_funct5(f: u32) -> Option<Amo> {
        Some(match f {
            0b00001 => Amo::Swap,
            0b00000 => Amo::Add,
            0b00100 => Amo::Xor,
            0b01100 => Amo::And,
            0b01000 => Amo::Or,
            0b10000 => Amo::Min,
            0b10100 => Amo::Max,
            0b11000 => Amo::Minu,
            0b11100 => Amo::Maxu,
            _ => return None,
        })
    }

    pub fn from_imm(imm: i32) -> Amo {
        const ALL: [Amo; 9] =
            [Amo::Swap, Amo::Add, Amo::Xor, Amo::And, Amo::Or, Amo::Min, Amo::Max, Amo::Minu, Amo::Maxu];
        ALL[(imm as usize).min(8)]
    }
}

/// One decoded instruction in 8 bytes, so that it travels in one host register (at 12
/// bytes the executor kept it on the stack and re-read its fields from there, a
/// store-forwarding stall on every instruction). The kind and the length share a byte:
/// the kind in bits 6..0, bit 7 set for a 4-byte instruction. For `Illegal` and `Net`,
/// `imm` holds the raw bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Op {
    pub imm: i32,
    code: u8,
    pub rd: u8,
    pub rs1: u8,
    pub rs2: u8,
}

/// The bit of `Op::code` that marks a 4-byte op.
pub(crate) const LONG: u8 = 0x80;

// Every kind fits in the 7 bits `code` leaves it.
const _: () = assert!((Kind::Fp as u8) < 0x80 && std::mem::size_of::<Op>() == 8);

impl Op {
    pub const ILLEGAL0: Op = Op::illegal(0, 2);

    /// `len` is the instruction's length in bytes, 2 or 4.
    pub const fn new(kind: Kind, rd: u8, rs1: u8, rs2: u8, imm: i32, len: u8) -> Op {
        Op { imm, code: kind as u8 | if len == 4 { LONG } else { 0 }, rd, rs1, rs2 }
    }

    pub const fn illegal(raw: u32, len: u8) -> Op {
        Op::new(Kind::Illegal, SINK, 0, 0, raw as i32, len)
    }

    #[inline(always)]
    pub fn kind(self) -> Kind {
        // SAFETY: `code` is only made by `new`, from a `Kind` (repr(u8), below 0x80).
        unsafe { std::mem::transmute::<u8, Kind>(self.code & 0x7f) }
    }

    /// The kind and length byte: the kind, with bit 7 set for a 4-byte op (`LONG`). The
    /// fast engine dispatches on it, so that each arm knows its op's length.
    #[inline(always)]
    pub(crate) fn code(self) -> u8 {
        self.code
    }

    /// Code slots (of 2 bytes) the instruction spans: 1 or 2.
    #[inline(always)]
    pub fn slots(self) -> usize {
        1 + (self.code >> 7) as usize
    }

    /// Length in bytes: 2 or 4 (never empty, hence no `is_empty`).
    #[inline(always)]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(self) -> u8 {
        2 + ((self.code >> 7) << 1)
    }
}
