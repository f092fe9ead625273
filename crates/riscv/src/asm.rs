//! A tiny assembler and ELF writer for tests and benchmarks that must not depend on a
//! cross compiler: instruction encoders (RISC-V unprivileged spec chapter 34 formats) and
//! [`elf_image`], which wraps code in a minimal RV64 executable with `tohost`/`fromhost`.

/// Register numbers by ABI name, for readability in tests.
pub mod reg {
    pub const ZERO: u32 = 0;
    pub const RA: u32 = 1;
    pub const SP: u32 = 2;
    pub const T0: u32 = 5;
    pub const T1: u32 = 6;
    pub const T2: u32 = 7;
    pub const A0: u32 = 10;
    pub const A1: u32 = 11;
    pub const A2: u32 = 12;
    pub const A3: u32 = 13;
    pub const A4: u32 = 14;
    pub const A5: u32 = 15;
    pub const T5: u32 = 30;
    pub const T6: u32 = 31;
}

pub fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

pub fn i(imm: i32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

pub fn s(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let m = imm as u32;
    ((m >> 5 & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((m & 0x1f) << 7) | 0x23
}

pub fn b(off: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let m = off as u32;
    let hi = ((m >> 12 & 1) << 6) | (m >> 5 & 0x3f);
    let lo = ((m >> 1 & 0xf) << 1) | (m >> 11 & 1);
    (hi << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (lo << 7) | 0x63
}

pub fn jal(rd: u32, off: i32) -> u32 {
    let m = off as u32;
    let f = ((m >> 20 & 1) << 19) | ((m >> 1 & 0x3ff) << 9) | ((m >> 11 & 1) << 8) | (m >> 12 & 0xff);
    (f << 12) | (rd << 7) | 0x6f
}

pub fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x13)
}
pub fn lui(rd: u32, imm20: u32) -> u32 {
    (imm20 << 12) | (rd << 7) | 0x37
}
pub fn auipc(rd: u32, imm20: u32) -> u32 {
    (imm20 << 12) | (rd << 7) | 0x17
}
/// An A-extension op: `funct5`, width funct3 (2 = W, 3 = D).
pub fn amo(f5: u32, f3: u32, rd: u32, rs1: u32, rs2: u32) -> u32 {
    r(f5 << 2, rs2, rs1, f3, rd, 0x2f)
}
/// `la rd, TEXT + 4 * index` from the instruction at `at` (two instructions: auipc, addi).
pub fn la_index(rd: u32, at: usize, index: usize) -> [u32; 2] {
    [auipc(rd, 0), addi(rd, rd, 4 * (index as i32 - at as i32))]
}
pub fn add(rd: u32, rs1: u32, rs2: u32) -> u32 {
    r(0, rs2, rs1, 0, rd, 0x33)
}
pub fn ld(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 3, rd, 0x03)
}
pub fn sd(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 3)
}
pub fn csrrw(rd: u32, csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 1, rd, 0x73)
}
pub fn csrrs(rd: u32, csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 2, rd, 0x73)
}
pub fn csrrwi(rd: u32, csr: u32, uimm: u32) -> u32 {
    i(csr as i32, uimm, 5, rd, 0x73)
}
pub fn bne(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 1)
}
pub fn beq(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 0)
}
/// OP-FP (F/D listings): `funct5`, `fmt` (0 = S, 1 = D), `rm` (funct3).
pub fn fop(f5: u32, fmt: u32, rd: u32, rs1: u32, rs2: u32, rm: u32) -> u32 {
    r((f5 << 2) | fmt, rs2, rs1, rm, rd, 0x53)
}
/// R4-type fused multiply-add: `opc` 0x43 fmadd, 0x47 fmsub, 0x4b fnmsub, 0x4f fnmadd.
pub fn fma4(opc: u32, fmt: u32, rd: u32, rs1: u32, rs2: u32, rs3: u32, rm: u32) -> u32 {
    (rs3 << 27) | (fmt << 25) | (rs2 << 20) | (rs1 << 15) | (rm << 12) | (rd << 7) | opc
}
/// `flw`/`fld` (`dbl`) rd, imm(rs1).
pub fn fload(dbl: bool, rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 2 + dbl as u32, rd, 0x07)
}
/// `fsw`/`fsd` (`dbl`) rs2, imm(rs1).
pub fn fstore(dbl: bool, rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 2 + dbl as u32) | 0x04 // opcode 0x27 = STORE | 0x04
}
/// `li rd, v` for any 64-bit `v` (lui/addi pairs and shifts; long but simple).
pub fn li64(rd: u32, v: u64) -> Vec<u32> {
    let mut out = vec![addi(rd, 0, 0)];
    for k in (0..4).rev() {
        let part = ((v >> (16 * k)) & 0xffff) as i32;
        out.extend([i(8, rd, 1, rd, 0x13), addi(rd, rd, part >> 8), i(8, rd, 1, rd, 0x13)]);
        out.push(addi(rd, rd, part & 0xff));
    }
    out
}
pub const ECALL: u32 = 0x0000_0073;
pub const EBREAK: u32 = 0x0010_0073;
pub const MRET: u32 = 0x3020_0073;
pub const WFI: u32 = 0x1050_0073;
pub const NOP: u32 = 0x0000_0013;

/// Load address of the code and the HTIF mailbox produced by [`elf_image`].
pub const TEXT: u64 = 0x8000_0000;
pub const TOHOST: u64 = 0x8000_f000;

/// Load a 32-bit address (lui sign-extends, so clear the top, then add the low bits).
pub fn la_dram(rd: u32, addr: u64) -> Vec<u32> {
    let mut v = vec![lui(rd, (addr >> 12) as u32 & 0xfffff), i(32, rd, 1, rd, 0x13), i(32, rd, 5, rd, 0x13)];
    let mut lo = (addr & 0xfff) as i32;
    while lo > 0 {
        let step = lo.min(0x7ff);
        v.push(addi(rd, rd, step));
        lo -= step;
    }
    v
}

/// `la rd, tohost`.
pub fn la_tohost(rd: u32) -> Vec<u32> {
    la_dram(rd, TOHOST)
}

/// Exit with the code in register `code` through HTIF: tohost = code << 1 | 1.
pub fn exit_with(code: u32) -> Vec<u32> {
    let mut v = vec![i(1, code, 1, code, 0x13), i(1, code, 6, code, 0x13)];
    v.extend(la_tohost(reg::T0));
    v.extend([sd(code, reg::T0, 0), jal(0, 0)]);
    v
}

/// Wrap 32-bit instruction words into an executable: code at [`TEXT`] (entry), a
/// zero-initialised data page holding `tohost`/`fromhost` at [`TOHOST`]. `nanopu` adds
/// the `__nanopu_abi` symbol.
pub fn elf_image(code: &[u32], nanopu: bool) -> Vec<u8> {
    let text: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    elf_bytes(&text, nanopu)
}

fn push16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn push32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn push64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// Build the ELF: header, two PT_LOADs (text RX, mailbox RW), sections .text, .symtab,
/// .strtab, .shstrtab.
pub fn elf_bytes(text: &[u8], nanopu: bool) -> Vec<u8> {
    let mut names: Vec<(&str, u64)> = vec![("tohost", TOHOST), ("fromhost", TOHOST + 8), ("_start", TEXT)];
    if nanopu {
        names.push(("__nanopu_abi", TOHOST + 16));
    }
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 24];
    for (n, addr) in &names {
        push32(&mut symtab, strtab.len() as u32);
        symtab.extend_from_slice(&[0x10, 0]); // global, no type
        push16(&mut symtab, 1); // in .text's section index (any non-zero)
        push64(&mut symtab, *addr);
        push64(&mut symtab, 8);
        strtab.extend_from_slice(n.as_bytes());
        strtab.push(0);
    }
    let shstr = b"\0.text\0.symtab\0.strtab\0.shstrtab\0".to_vec();
    let text_off = 0x1000u64;
    let data_off = text_off + text.len() as u64;
    let sym_off = data_off + 32;
    let str_off = sym_off + symtab.len() as u64;
    let shstr_off = str_off + strtab.len() as u64;
    let sh_off = (shstr_off + shstr.len() as u64).div_ceil(8) * 8;
    let mut e = Vec::new();
    header(&mut e, sh_off);
    phdr(&mut e, 5, text_off, TEXT, text.len() as u64, text.len() as u64);
    phdr(&mut e, 6, data_off, TOHOST, 32, 4096);
    e.resize(text_off as usize, 0);
    e.extend_from_slice(text);
    e.extend_from_slice(&[0; 32]);
    e.extend_from_slice(&symtab);
    e.extend_from_slice(&strtab);
    e.extend_from_slice(&shstr);
    e.resize(sh_off as usize, 0);
    e.extend_from_slice(&[0; 64]);
    shdr(&mut e, 1, 1, 6, TEXT, text_off, text.len() as u64, 0, 0);
    shdr(&mut e, 7, 2, 0, 0, sym_off, symtab.len() as u64, 3, 24);
    shdr(&mut e, 15, 3, 0, 0, str_off, strtab.len() as u64, 0, 0);
    shdr(&mut e, 23, 3, 0, 0, shstr_off, shstr.len() as u64, 0, 0);
    e
}

fn header(e: &mut Vec<u8>, sh_off: u64) {
    e.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    push16(e, 2); // ET_EXEC
    push16(e, 243); // EM_RISCV
    push32(e, 1);
    push64(e, TEXT);
    push64(e, 64); // phoff
    push64(e, sh_off);
    push32(e, 0x1); // e_flags: RVC, soft float
    push16(e, 64);
    push16(e, 56);
    push16(e, 2);
    push16(e, 64);
    push16(e, 5);
    push16(e, 4);
}

fn phdr(e: &mut Vec<u8>, flags: u32, off: u64, addr: u64, filesz: u64, memsz: u64) {
    push32(e, 1);
    push32(e, flags);
    push64(e, off);
    push64(e, addr);
    push64(e, addr);
    push64(e, filesz);
    push64(e, memsz);
    push64(e, 0x1000);
}

#[allow(clippy::too_many_arguments)]
fn shdr(
    e: &mut Vec<u8>,
    name: u32,
    ty: u32,
    flags: u64,
    addr: u64,
    off: u64,
    size: u64,
    link: u32,
    entsize: u64,
) {
    push32(e, name);
    push32(e, ty);
    push64(e, flags);
    push64(e, addr);
    push64(e, off);
    push64(e, size);
    push32(e, link);
    push32(e, 0);
    push64(e, 8);
    push64(e, entsize);
}
