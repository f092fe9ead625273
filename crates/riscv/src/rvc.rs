//! Compressed (RVC) instruction expansion, RISC-V unprivileged spec chapter 16 ("C"
//! Standard Extension), RV64 variant. Each 16-bit form is rewritten to the 32-bit
//! instruction it is defined to expand to, so there is one decoder and one executor.
//! The D forms (C.FLD, C.FSD, C.FLDSP, C.FSDSP) expand like the integer ones; reserved
//! encodings return `None`.

fn bits(x: u32, hi: u32, lo: u32) -> u32 {
    (x >> lo) & ((1 << (hi - lo + 1)) - 1)
}

/// Sign-extend the low `n` bits of `x`.
fn sext(x: u32, n: u32) -> i32 {
    ((x << (32 - n)) as i32) >> (32 - n)
}

fn i_type(imm: i32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

fn s_type(imm: i32, rs2: u32, rs1: u32, f3: u32, opc: u32) -> u32 {
    let imm = imm as u32;
    (bits(imm, 11, 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (bits(imm, 4, 0) << 7) | opc
}

fn r_type(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

fn b_type(imm: i32, rs1: u32, f3: u32) -> u32 {
    let i = imm as u32;
    let hi = (bits(i, 12, 12) << 6) | bits(i, 10, 5);
    let lo = (bits(i, 4, 1) << 1) | bits(i, 11, 11);
    (hi << 25) | (rs1 << 15) | (f3 << 12) | (lo << 7) | 0x63
}

fn j_type(imm: i32, rd: u32) -> u32 {
    let i = imm as u32;
    let f = (bits(i, 20, 20) << 19) | (bits(i, 10, 1) << 9) | (bits(i, 11, 11) << 8) | bits(i, 19, 12);
    (f << 12) | (rd << 7) | 0x6f
}

/// rd'/rs1'/rs2' 3-bit register fields name x8..x15.
fn creg(x: u32, lo: u32) -> u32 {
    bits(x, lo + 2, lo) + 8
}

/// Expand a 16-bit instruction; `None` if illegal.
pub fn expand(c: u32) -> Option<u32> {
    match c & 3 {
        0 => quadrant0(c),
        1 => quadrant1(c),
        2 => quadrant2(c),
        _ => None,
    }
}

fn quadrant0(c: u32) -> Option<u32> {
    let rd = creg(c, 2);
    let rs1 = creg(c, 7);
    let lw_off = (bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6);
    let ld_off = (bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6);
    match bits(c, 15, 13) {
        0 => {
            let nzuimm =
                (bits(c, 12, 11) << 4) | (bits(c, 10, 7) << 6) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 3);
            (nzuimm != 0).then(|| i_type(nzuimm as i32, 2, 0, rd, 0x13))
        }
        1 => Some(i_type(ld_off as i32, rs1, 3, rd, 0x07)),
        2 => Some(i_type(lw_off as i32, rs1, 2, rd, 0x03)),
        3 => Some(i_type(ld_off as i32, rs1, 3, rd, 0x03)),
        6 => Some(s_type(lw_off as i32, rd, rs1, 2, 0x23)),
        5 => Some(s_type(ld_off as i32, rd, rs1, 3, 0x27)),
        7 => Some(s_type(ld_off as i32, rd, rs1, 3, 0x23)),
        _ => None,
    }
}

fn ci_imm(c: u32) -> i32 {
    sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6)
}

fn quadrant1(c: u32) -> Option<u32> {
    let rd = bits(c, 11, 7);
    match bits(c, 15, 13) {
        0 => Some(i_type(ci_imm(c), rd, 0, rd, 0x13)),
        1 => (rd != 0).then(|| i_type(ci_imm(c), rd, 0, rd, 0x1b)),
        2 => Some(i_type(ci_imm(c), 0, 0, rd, 0x13)),
        3 => lui_addi16sp(c, rd),
        4 => misc_alu(c),
        5 => Some(j_type(cj_imm(c), 0)),
        f3 => Some(b_type(cb_imm(c), creg(c, 7), f3 & 1)),
    }
}

fn lui_addi16sp(c: u32, rd: u32) -> Option<u32> {
    if rd == 2 {
        let raw = (bits(c, 12, 12) << 9)
            | (bits(c, 6, 6) << 4)
            | (bits(c, 5, 5) << 6)
            | (bits(c, 4, 3) << 7)
            | (bits(c, 2, 2) << 5);
        let imm = sext(raw, 10);
        return (imm != 0).then(|| i_type(imm, 2, 0, 2, 0x13));
    }
    let imm = sext((bits(c, 12, 12) << 17) | (bits(c, 6, 2) << 12), 18);
    (imm != 0).then_some(((imm as u32) & 0xffff_f000) | (rd << 7) | 0x37)
}

fn misc_alu(c: u32) -> Option<u32> {
    let rd = creg(c, 7);
    let rs2 = creg(c, 2);
    let shamt = ((bits(c, 12, 12) << 5) | bits(c, 6, 2)) as i32;
    match (bits(c, 11, 10), bits(c, 12, 12), bits(c, 6, 5)) {
        (0, _, _) => Some(i_type(shamt, rd, 5, rd, 0x13)),
        (1, _, _) => Some(i_type(shamt | 0x400, rd, 5, rd, 0x13)),
        (2, _, _) => Some(i_type(ci_imm(c), rd, 7, rd, 0x13)),
        (_, 0, 0) => Some(r_type(0x20, rs2, rd, 0, rd, 0x33)),
        (_, 0, 1) => Some(r_type(0, rs2, rd, 4, rd, 0x33)),
        (_, 0, 2) => Some(r_type(0, rs2, rd, 6, rd, 0x33)),
        (_, 0, _) => Some(r_type(0, rs2, rd, 7, rd, 0x33)),
        (_, _, 0) => Some(r_type(0x20, rs2, rd, 0, rd, 0x3b)),
        (_, _, 1) => Some(r_type(0, rs2, rd, 0, rd, 0x3b)),
        _ => None,
    }
}

fn cj_imm(c: u32) -> i32 {
    let raw = (bits(c, 12, 12) << 11)
        | (bits(c, 11, 11) << 4)
        | (bits(c, 10, 9) << 8)
        | (bits(c, 8, 8) << 10)
        | (bits(c, 7, 7) << 6)
        | (bits(c, 6, 6) << 7)
        | (bits(c, 5, 3) << 1)
        | (bits(c, 2, 2) << 5);
    sext(raw, 12)
}

fn cb_imm(c: u32) -> i32 {
    let raw = (bits(c, 12, 12) << 8)
        | (bits(c, 11, 10) << 3)
        | (bits(c, 6, 5) << 6)
        | (bits(c, 4, 3) << 1)
        | (bits(c, 2, 2) << 5);
    sext(raw, 9)
}

fn quadrant2(c: u32) -> Option<u32> {
    let rd = bits(c, 11, 7);
    let rs2 = bits(c, 6, 2);
    let shamt = ((bits(c, 12, 12) << 5) | bits(c, 6, 2)) as i32;
    let lwsp = (bits(c, 12, 12) << 5) | (bits(c, 6, 4) << 2) | (bits(c, 3, 2) << 6);
    let ldsp = (bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6);
    match bits(c, 15, 13) {
        0 => Some(i_type(shamt, rd, 1, rd, 0x13)),
        1 => Some(i_type(ldsp as i32, 2, 3, rd, 0x07)), // c.fldsp: f0 is a valid target
        2 => (rd != 0).then(|| i_type(lwsp as i32, 2, 2, rd, 0x03)),
        3 => (rd != 0).then(|| i_type(ldsp as i32, 2, 3, rd, 0x03)),
        4 => jr_mv_add(c, rd, rs2),
        6 => Some(s_type(((bits(c, 12, 9) << 2) | (bits(c, 8, 7) << 6)) as i32, rs2, 2, 2, 0x23)),
        5 => Some(s_type(((bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6)) as i32, rs2, 2, 3, 0x27)),
        7 => Some(s_type(((bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6)) as i32, rs2, 2, 3, 0x23)),
        _ => None,
    }
}

fn jr_mv_add(c: u32, rd: u32, rs2: u32) -> Option<u32> {
    match (bits(c, 12, 12), rd, rs2) {
        (0, 0, 0) => None,
        (0, _, 0) => Some(i_type(0, rd, 0, 0, 0x67)),
        (0, _, _) => Some(r_type(0, rs2, 0, 0, rd, 0x33)),
        (_, 0, 0) => Some(0x0010_0073),
        (_, _, 0) => Some(i_type(0, rd, 0, 1, 0x67)),
        _ => Some(r_type(0, rs2, rd, 0, rd, 0x33)),
    }
}

#[cfg(test)]
mod tests {
    use super::expand;

    /// (compressed, expected 32-bit expansion) pairs, both encoded by GNU as 2.40 from
    /// `c.xxx` and the equivalent base instruction (`-march=rv64imac`).
    const PAIRS: &[(u32, u32)] = &[
        (0x1fe0, 0x3fc10413), // c.addi4spn s0, sp, 1020
        (0x005c, 0x00410793), // c.addi4spn a5, sp, 4
        (0x5de8, 0x07c5a503), // c.lw a0, 124(a1)
        (0x4384, 0x0007a483), // c.lw s1, 0(a5)
        (0x7ef0, 0x0f86b603), // c.ld a2, 248(a3)
        (0x6480, 0x0084b403), // c.ld s0, 8(s1)
        (0xc3b8, 0x04e7a023), // c.sw a4, 64(a5)
        (0xfc68, 0x0ea43c23), // c.sd a0, 248(s0)
        (0x0001, 0x00000013), // c.nop
        (0x1501, 0xfe050513), // c.addi a0, -32
        (0x0ffd, 0x01ff8f93), // c.addi t6, 31
        (0x35fd, 0xfff5859b), // c.addiw a1, -1
        (0x2445, 0x0114041b), // c.addiw s0, 17
        (0x5501, 0xfe000513), // c.li a0, -32
        (0x4f15, 0x00500f13), // c.li t5, 5
        (0x7101, 0xe0010113), // c.addi16sp sp, -512
        (0x617d, 0x1f010113), // c.addi16sp sp, 496
        (0x7501, 0xfffe0537), // c.lui a0, 0xfffe0
        (0x637d, 0x0001f337), // c.lui t1, 0x1f
        (0x917d, 0x03f55513), // c.srli a0, 63
        (0x8085, 0x0014d493), // c.srli s1, 1
        (0x9581, 0x4205d593), // c.srai a1, 32
        (0x8795, 0x4057d793), // c.srai a5, 5
        (0x9a7d, 0xfff67613), // c.andi a2, -1
        (0x883d, 0x00f47413), // c.andi s0, 15
        (0x8d0d, 0x40b50533), // c.sub a0, a1
        (0x8c3d, 0x00f44433), // c.xor s0, a5
        (0x8ed9, 0x00e6e6b3), // c.or a3, a4
        (0x8e65, 0x00967633), // c.and a2, s1
        (0x9d1d, 0x40f5053b), // c.subw a0, a5
        (0x9cb1, 0x00c484bb), // c.addw s1, a2
        (0xaffd, 0x7fe0006f), // c.j .+2046
        (0xb001, 0x801ff06f), // c.j .-2048
        (0xcd7d, 0x0e050f63), // c.beqz a0, .+254
        (0xd081, 0xf00480e3), // c.beqz s1, .-256
        (0xe781, 0x00079463), // c.bnez a5, .+8
        (0xfc7d, 0xfe041fe3), // c.bnez s0, .-2
        (0x157e, 0x03f51513), // c.slli a0, 63
        (0x0f86, 0x001f9f93), // c.slli t6, 1
        (0x50fe, 0x0fc12083), // c.lwsp ra, 252(sp)
        (0x4f02, 0x00012f03), // c.lwsp t5, 0(sp)
        (0x757e, 0x1f813503), // c.ldsp a0, 504(sp)
        (0x6da2, 0x00813d83), // c.ldsp s11, 8(sp)
        (0x8082, 0x00008067), // c.jr ra
        (0x8f02, 0x000f0067), // c.jr t5
        (0x857e, 0x01f00533), // c.mv a0, t6
        (0x8ffa, 0x01e00fb3), // c.mv t6, t5
        (0x9002, 0x00100073), // c.ebreak
        (0x9782, 0x000780e7), // c.jalr a5
        (0x957a, 0x01e50533), // c.add a0, t5
        (0x9fae, 0x00bf8fb3), // c.add t6, a1
        (0xdfaa, 0x0ea12e23), // c.swsp a0, 252(sp)
        (0xc07e, 0x01f12023), // c.swsp t6, 0(sp)
        (0xff86, 0x1e113c23), // c.sdsp ra, 504(sp)
        (0xe422, 0x00813423), // c.sdsp s0, 8(sp)
    ];

    #[test]
    fn every_compressed_form_expands_like_the_assembler() {
        for &(c, full) in PAIRS {
            assert_eq!(expand(c), Some(full), "compressed {c:#06x}");
        }
    }

    #[test]
    fn reserved_forms_are_illegal() {
        let illegal = [
            0x0000, // all zeros (c.addi4spn with nzuimm = 0)
            0x8002, // c.jr x0
            0x4002, // c.lwsp x0
            0x6002, // c.ldsp x0
            0x2001, // c.addiw x0
            0x6101, // c.addi16sp 0
            0x6501, // c.lui a0, 0
            0x9c41, // c.subw reserved funct (10)
            0x9c61, // reserved (11)
            0x8000, // quadrant 0 funct3 100: reserved
        ];
        for c in illegal {
            assert_eq!(expand(c), None, "{c:#06x}");
        }
    }
}
