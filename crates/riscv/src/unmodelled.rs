//! Which standard extension an encoding nanopu does not model belongs to, so that an
//! illegal-instruction error says "from the Zbb extension" rather than only "illegal".
//!
//! One table, first match wins: (mask, match) pairs in the style of the riscv-opcodes
//! tables, each citing the chapter of the RISC-V unprivileged spec (version 20240411, unless
//! said otherwise) that defines it. Only naming happens here: the decoder (`decode.rs`,
//! `rvc.rs`) makes every one of these encodings illegal, and a test checks that it does.

/// An encoding pattern: `raw & mask == bits` belongs to extension `ext`.
struct Pattern {
    mask: u32,
    bits: u32,
    ext: &'static str,
}

const fn p(mask: u32, bits: u32, ext: &'static str) -> Pattern {
    Pattern { mask, bits, ext }
}

const V: &str = "V (vector)";
const Q: &str = "Q (quad-precision floating point)";
const ZFH: &str = "Zfh (half-precision floating point)";
const ZBA: &str = "Zba (bit manipulation: address generation)";
const ZBB: &str = "Zbb (bit manipulation: basic)";
const ZBC: &str = "Zbc (bit manipulation: carry-less multiply)";
const ZBS: &str = "Zbs (bit manipulation: single bit)";
const ZCB: &str = "Zcb (compressed basic bit manipulation)";

/// Field masks: opcode, funct3, funct7, funct6 (RV64 shifts), rs2 and the 12-bit immediate.
const OPC: u32 = 0x7f;
const F3: u32 = 0x7000 | OPC;
const F7: u32 = 0xfe00_0000 | F3;
const F6: u32 = 0xfc00_0000 | F3;
const F7_RS2: u32 = 0x01f0_0000 | F7;
const F12: u32 = 0xfff0_0000 | F3;
/// funct5 + rs2 of OP-FP, whatever fmt: the fcvt.* conversions name a source format in rs2.
const FCVT_RS2: u32 = 0xf9f0_0000 | OPC;
/// fmt (bits 26..25) of OP-FP and of the four fused multiply-add opcodes (0x43..0x4f).
const FMT_OPFP: u32 = 0x0600_0000 | OPC;
const FMT_FMA: u32 = 0x0600_0000 | 0x73;

/// 32-bit encodings.
const TABLE32: &[Pattern] = &[
    // "V" Standard Extension for Vector Operations (chapter 31; vector spec 1.0 section 5):
    // the OP-V major opcode, and LOAD-FP/STORE-FP with the vector widths 0, 5, 6, 7
    // (section 7.3, "Vector Load/Store Width Encoding").
    p(OPC, 0x57, V),
    p(F3, 0x0007, V),
    p(F3, 0x5007, V),
    p(F3, 0x6007, V),
    p(F3, 0x7007, V),
    p(F3, 0x0027, V),
    p(F3, 0x5027, V),
    p(F3, 0x6027, V),
    p(F3, 0x7027, V),
    // "Q" Standard Extension for Quad-Precision Floating-Point (chapter 22): flq/fsq (width
    // 4), fmt = 3, and conversions from Q (fcvt.s.q, fcvt.d.q: rs2 = 3).
    p(F3, 0x4007, Q),
    p(F3, 0x4027, Q),
    p(FMT_OPFP, 0x0600_0053, Q),
    p(FMT_FMA, 0x0600_0043, Q),
    p(FCVT_RS2, 0x4030_0053, Q),
    // "Zfh" and "Zfhmin" Standard Extensions for Half-Precision Floating-Point (chapter 23):
    // flh/fsh (width 1), fmt = 2, and conversions from H (rs2 = 2).
    p(F3, 0x1007, ZFH),
    p(F3, 0x1027, ZFH),
    p(FMT_OPFP, 0x0400_0053, ZFH),
    p(FMT_FMA, 0x0400_0043, ZFH),
    p(FCVT_RS2, 0x4020_0053, ZFH),
    // "B" Extension for Bit Manipulation (chapter 30), Zba: sh1add sh2add sh3add, their .uw
    // forms, add.uw and slli.uw (section 30.4.1).
    p(F7, 0x2000_2033, ZBA),
    p(F7, 0x2000_4033, ZBA),
    p(F7, 0x2000_6033, ZBA),
    p(F7, 0x2000_203b, ZBA),
    p(F7, 0x2000_403b, ZBA),
    p(F7, 0x2000_603b, ZBA),
    p(F7, 0x0800_003b, ZBA),
    p(F6, 0x0800_101b, ZBA),
    // Zbb (section 30.4.2): andn orn xnor; min max minu maxu; rol ror rolw rorw rori roriw;
    // clz ctz cpop sext.b sext.h (and their W forms); orc.b rev8; zext.h.
    p(F7, 0x4000_7033, ZBB),
    p(F7, 0x4000_6033, ZBB),
    p(F7, 0x4000_4033, ZBB),
    p(0xfe00_4000 | OPC, 0x0a00_4033, ZBB),
    p(F7, 0x6000_1033, ZBB),
    p(F7, 0x6000_5033, ZBB),
    p(F7, 0x6000_103b, ZBB),
    p(F7, 0x6000_503b, ZBB),
    p(F6, 0x6000_5013, ZBB),
    p(F7, 0x6000_501b, ZBB),
    p(F7, 0x6000_1013, ZBB),
    p(F7, 0x6000_101b, ZBB),
    p(F12, 0x2870_5013, ZBB),
    p(F12, 0x6b80_5013, ZBB),
    p(F7_RS2, 0x0800_403b, ZBB),
    // Zbc (section 30.4.3): clmul clmulr clmulh.
    p(F7, 0x0a00_1033, ZBC),
    p(F7, 0x0a00_2033, ZBC),
    p(F7, 0x0a00_3033, ZBC),
    // Zbs (section 30.4.4): bclr bext binv bset and their immediate forms.
    p(F7, 0x4800_1033, ZBS),
    p(F7, 0x4800_5033, ZBS),
    p(F7, 0x6800_1033, ZBS),
    p(F7, 0x2800_1033, ZBS),
    p(F6, 0x4800_1013, ZBS),
    p(F6, 0x4800_5013, ZBS),
    p(F6, 0x6800_1013, ZBS),
    p(F6, 0x2800_1013, ZBS),
    // "Zicond" Extension for Integer Conditional Operations (chapter 12): czero.eqz/.nez.
    p(F7, 0x0e00_5033, "Zicond (integer conditional operations)"),
    p(F7, 0x0e00_7033, "Zicond (integer conditional operations)"),
    // "Zicbom", "Zicbop", "Zicboz" (chapter 19, Cache-Management Operations): cbo.zero is
    // MISC-MEM funct3 2 with imm 4; cbo.clean/flush/inval the rest of funct3 2.
    p(F12 | 0xf80, 0x0040_200f, "Zicboz (cache-block zero)"),
    p(F3, 0x200f, "Zicbom (cache-block management)"),
    // "Zawrs" Extension for Wait-on-Reservation-Set instructions (chapter 15).
    p(u32::MAX, 0x00d0_0073, "Zawrs (wait on reservation set)"),
    p(u32::MAX, 0x01d0_0073, "Zawrs (wait on reservation set)"),
    // "Zacas" Extension for Atomic Compare-and-Swap (chapter 16): AMO funct5 00101.
    p(0xf800_0000 | OPC, 0x2800_002f, "Zacas (atomic compare-and-swap)"),
    // "Zimop" May-Be-Operations Extension (chapter 11): SYSTEM funct3 4.
    p(F3, 0x4073, "Zimop (may-be-operations)"),
    // Privileged spec chapter 10, Supervisor-Level ISA: sret and sfence.vma.
    p(u32::MAX, 0x1020_0073, "S (supervisor mode)"),
    p(0xfe00_7fff, 0x1200_0073, "S (supervisor mode)"),
];

/// 16-bit encodings: "Zcb" (chapter 29, section 29.13), the defined encodings only: in
/// quadrant 0 funct6 100000 c.lbu, 100001 c.lhu/c.lh, 100010 c.sb, 100011 c.sh (bit 6 clear);
/// in quadrant 1 funct6 100111 c.mul (funct2 10) and c.zext.b c.sext.b c.zext.h c.sext.h
/// c.zext.w c.not (funct2 11, bits 4..2 = 0..5). The reserved rest is no Zcb instruction.
const TABLE16: &[Pattern] = &[
    p(0xfc03, 0x8000, ZCB),
    p(0xfc03, 0x8400, ZCB),
    p(0xfc03, 0x8800, ZCB),
    p(0xfc43, 0x8c00, ZCB),
    p(0xfc63, 0x9c41, ZCB),
    p(0xfc7f, 0x9c61, ZCB),
    p(0xfc7f, 0x9c65, ZCB),
    p(0xfc7f, 0x9c69, ZCB),
    p(0xfc7f, 0x9c6d, ZCB),
    p(0xfc7f, 0x9c71, ZCB),
    p(0xfc7f, 0x9c75, ZCB),
];

/// The standard extension, not modelled by nanopu, that `raw` (an illegal instruction's
/// encoding, 16 or 32 bits) belongs to, if any.
pub fn unmodelled_extension(raw: u32) -> Option<&'static str> {
    let table = if raw & 3 == 3 { TABLE32 } else { TABLE16 };
    table.iter().find(|e| raw & e.mask == e.bits).map(|e| e.ext)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Kind;

    fn decoded_illegal(raw: u32) -> bool {
        let (lo, hi) = (raw as u16, (raw >> 16) as u16);
        crate::decode::decode_parcels(lo, hi, false).kind() == Kind::Illegal
    }

    #[test]
    fn every_pattern_decodes_as_illegal() {
        for e in TABLE32.iter().chain(TABLE16) {
            assert!(decoded_illegal(e.bits), "{:#010x} ({}) must not execute", e.bits, e.ext);
        }
    }

    #[test]
    fn named_examples() {
        let cases = [
            (0x0c05_7057, V),   // vsetvli x0, a0, e8, m1 style (OP-V)
            (0x0205_0007, V),   // vle8.v v0, (a0)
            (0x0205_7027, V),   // vse64.v v0, (a0)
            (0x0600_0053, Q),   // fadd.q
            (0x0400_0053, ZFH), // fadd.h
            (0x0005_1007, ZFH), // flh f0, 0(a0)
            (0x40b5_7533, ZBB), // andn a0, a0, a1
            (0x6005_1513, ZBB), // clz a0, a0
            (0x20b5_2533, ZBA), // sh1add a0, a0, a1
            (0x0ab5_1533, ZBC), // clmul a0, a0, a1
            (0x48b5_1533, ZBS), // bclr a0, a0, a1
        ];
        for (raw, ext) in cases {
            assert_eq!(unmodelled_extension(raw), Some(ext), "{raw:#010x}");
        }
    }

    #[test]
    fn modelled_and_unknown_encodings_are_not_named() {
        // add, mul, fadd.s, fadd.d, fence, ecall, and reserved opcode 0x6b.
        for raw in [0x00b5_0533, 0x02b5_0533, 0x0000_0053, 0x0200_0053, 0x0ff0_000f, 0x73, 0x6b] {
            assert_eq!(unmodelled_extension(raw), None, "{raw:#010x}");
        }
        assert_eq!(unmodelled_extension(0x4501), None, "c.li a0, 0");
    }

    /// The error of a one-core program whose first instruction is `word` (no trap handler).
    fn error_of(word: u32) -> String {
        let mut b = crate::testing::Bench::new(&[word], false);
        let crate::Exit::Error(e) = b.run(1000) else { panic!("{word:#x} must stop the core") };
        e.to_string()
    }

    fn expect(word: u32, shown: &str, ext: &str) {
        let want = format!(
            "core 0, pc 0x80000000: illegal instruction {shown} (from the {ext} extension, which nanopu does not model) (no trap handler: mtvec = 0)"
        );
        assert_eq!(error_of(word), want);
    }

    #[test]
    fn errors_name_the_extension() {
        expect(0x40b5_7533, "0x40b57533", "Zbb (bit manipulation: basic)"); // andn a0, a0, a1
        expect(0x0205_0007, "0x02050007", "V (vector)"); // vle8.v v0, (a0)
        expect(0x0600_0053, "0x06000053", "Q (quad-precision floating point)"); // fadd.q
        expect(0x0eb5_5533, "0x0eb55533", "Zicond (integer conditional operations)"); // czero.eqz
        expect(0x0045_200f, "0x0045200f", "Zicboz (cache-block zero)"); // cbo.zero (a0)
                                                                        // c.lbu a0, 0(a0) then c.nop: the error shows the 16-bit parcel.
        expect(0x0001_8000, "0x00008000", "Zcb (compressed basic bit manipulation)");
    }

    #[test]
    fn other_illegal_encodings_keep_their_hints() {
        assert!(error_of(0x0000_006b).contains("illegal instruction 0x0000006b (unknown encoding)"));
        assert!(error_of(0x0000_0053).contains("(reserved F/D encoding or rounding mode, or FP off"));
    }
}
