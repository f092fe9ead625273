//! Minimal ELF64 little-endian reader for RISC-V executables (System V gABI, "ELF-64 Object
//! File Format"; RISC-V psABI for `e_flags`). Only what loading needs: program headers,
//! section headers (to find the code) and the symbol table.

use std::fmt;

/// Why an ELF file cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElfError {
    BadMagic,
    Class32,
    BigEndian,
    WrongMachine(u16),
    NotExecutable(u16),
    Truncated(&'static str),
    SegmentOutsideDram { start: u64, end: u64, base: u64, size: u64 },
    EntryNotExecutable(u64),
    Rve,
    HardFloat,
    Config(String),
}

fn machine_name(m: u16) -> String {
    match m {
        0 => "no machine".into(),
        3 => "x86".into(),
        8 => "MIPS".into(),
        20 => "PowerPC".into(),
        21 => "PowerPC64".into(),
        40 => "ARM".into(),
        62 => "x86-64".into(),
        183 => "AArch64".into(),
        243 => "RISC-V".into(),
        _ => format!("machine {m}"),
    }
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfError::BadMagic => write!(f, "not an ELF file (bad magic)"),
            ElfError::Class32 => write!(f, "32-bit ELF, expected ELF64 (RV64)"),
            ElfError::BigEndian => write!(f, "big-endian ELF, expected little-endian"),
            ElfError::WrongMachine(m) => write!(f, "ELF for {}, expected RISC-V", machine_name(*m)),
            ElfError::NotExecutable(t) => {
                write!(f, "not an executable ELF (e_type {t}); link a static executable")
            }
            ElfError::Truncated(what) => {
                write!(f, "truncated ELF: {what} extends past the end of the file")
            }
            ElfError::SegmentOutsideDram { start, end, base, size } => {
                write!(f, "segment [{start:#x}, {end:#x}) outside DRAM [{base:#x}, {:#x})", base + size)
            }
            ElfError::EntryNotExecutable(e) => {
                write!(f, "entry point {e:#x} is outside any executable segment")
            }
            ElfError::Rve => write!(f, "built for RVE (16 registers); use -march=rv64imac"),
            ElfError::HardFloat => write!(f, "built for hard-float ABI; use -mabi=lp64"),
            ElfError::Config(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for ElfError {}

pub const PF_X: u32 = 1;
const PT_LOAD: u32 = 1;
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;
const SHT_SYMTAB: u32 = 2;
const EM_RISCV: u16 = 243;
/// RISC-V psABI e_flags: float ABI field and the RVE bit.
const EF_FLOAT_ABI: u32 = 0x6;
const EF_RVE: u32 = 0x8;

/// A loadable segment, placed at its physical (load) address as bare-metal loaders do.
#[derive(Debug, Clone)]
pub struct Segment {
    pub addr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub flags: u32,
    pub offset: u64,
}

/// What the loader needs from a parsed file.
#[derive(Debug, Default)]
pub struct Parsed {
    pub entry: u64,
    pub segments: Vec<Segment>,
    /// Address ranges of allocated executable sections (empty if no section headers).
    pub code: Vec<(u64, u64)>,
    pub symbols: Vec<(String, u64)>,
}

fn rd(b: &[u8], off: usize, n: usize, what: &'static str) -> Result<u64, ElfError> {
    let s = b.get(off..off + n).ok_or(ElfError::Truncated(what))?;
    Ok(s.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64))
}

fn check_ident(b: &[u8]) -> Result<(), ElfError> {
    if b.len() < 4 || b[..4] != *b"\x7fELF" {
        return Err(ElfError::BadMagic);
    }
    if b.len() < 64 {
        return Err(ElfError::Truncated("ELF header"));
    }
    if b[4] != 2 {
        return Err(ElfError::Class32);
    }
    if b[5] != 1 {
        return Err(ElfError::BigEndian);
    }
    Ok(())
}

fn check_header(b: &[u8]) -> Result<(), ElfError> {
    let machine = rd(b, 18, 2, "ELF header")? as u16;
    if machine != EM_RISCV {
        return Err(ElfError::WrongMachine(machine));
    }
    let ty = rd(b, 16, 2, "ELF header")? as u16;
    if ty != 2 {
        return Err(ElfError::NotExecutable(ty));
    }
    let flags = rd(b, 48, 4, "ELF header")? as u32;
    if flags & EF_RVE != 0 {
        return Err(ElfError::Rve);
    }
    if flags & EF_FLOAT_ABI != 0 {
        return Err(ElfError::HardFloat);
    }
    Ok(())
}

/// Parse and validate an ELF64 RISC-V executable.
pub fn parse(b: &[u8]) -> Result<Parsed, ElfError> {
    check_ident(b)?;
    check_header(b)?;
    let mut p = Parsed { entry: rd(b, 24, 8, "ELF header")?, ..Parsed::default() };
    p.segments = segments(b)?;
    let (code, symbols) = sections(b)?;
    p.code = code;
    p.symbols = symbols;
    Ok(p)
}

fn segments(b: &[u8]) -> Result<Vec<Segment>, ElfError> {
    let (phoff, phent, phnum) =
        (rd(b, 32, 8, "")? as usize, rd(b, 54, 2, "")? as usize, rd(b, 56, 2, "")? as usize);
    let mut out = Vec::new();
    for i in 0..phnum {
        let h = phoff.saturating_add(i * phent);
        if rd(b, h, 4, "program header")? as u32 != PT_LOAD {
            continue;
        }
        let seg = Segment {
            flags: rd(b, h + 4, 4, "program header")? as u32,
            offset: rd(b, h + 8, 8, "program header")?,
            addr: rd(b, h + 24, 8, "program header")?,
            filesz: rd(b, h + 32, 8, "program header")?,
            memsz: rd(b, h + 40, 8, "program header")?,
        };
        if seg.offset.checked_add(seg.filesz).is_none_or(|e| e > b.len() as u64) {
            return Err(ElfError::Truncated("segment"));
        }
        if seg.memsz > 0 {
            out.push(seg);
        }
    }
    Ok(out)
}

type Sections = (Vec<(u64, u64)>, Vec<(String, u64)>);

fn sections(b: &[u8]) -> Result<Sections, ElfError> {
    let (shoff, shent, shnum) =
        (rd(b, 40, 8, "")? as usize, rd(b, 58, 2, "")? as usize, rd(b, 60, 2, "")? as usize);
    let (mut code, mut syms) = (Vec::new(), Vec::new());
    if shoff == 0 {
        return Ok((code, syms));
    }
    for i in 0..shnum {
        let h = shoff.saturating_add(i * shent);
        let (ty, flags) = (rd(b, h + 4, 4, "section header")? as u32, rd(b, h + 8, 8, "section header")?);
        let (addr, size) = (rd(b, h + 16, 8, "section header")?, rd(b, h + 32, 8, "section header")?);
        if flags & (SHF_ALLOC | SHF_EXECINSTR) == SHF_ALLOC | SHF_EXECINSTR && size > 0 {
            code.push((addr, addr + size));
        }
        if ty == SHT_SYMTAB {
            let link = rd(b, h + 40, 4, "section header")? as usize;
            let str_h = shoff.saturating_add(link * shent);
            let str_off = rd(b, str_h + 24, 8, "section header")? as usize;
            syms = symbols(b, rd(b, h + 24, 8, "")? as usize, size as usize, str_off)?;
        }
    }
    Ok((code, syms))
}

fn symbols(b: &[u8], off: usize, size: usize, strtab: usize) -> Result<Vec<(String, u64)>, ElfError> {
    let mut out = Vec::new();
    for s in (off..off.saturating_add(size)).step_by(24) {
        let name_off = rd(b, s, 4, "symbol table")? as usize;
        let value = rd(b, s + 8, 8, "symbol table")?;
        let shndx = rd(b, s + 6, 2, "symbol table")?;
        if name_off == 0 || shndx == 0 {
            continue;
        }
        let start = strtab.saturating_add(name_off);
        let name = b.get(start..).ok_or(ElfError::Truncated("string table"))?;
        let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
        out.push((String::from_utf8_lossy(&name[..len]).into_owned(), value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::asm;
    use crate::{MemParams, NodeMem, Program, TimingParams};

    fn image() -> Vec<u8> {
        asm::elf_image(&[asm::NOP, asm::jal(0, 0)], false)
    }

    fn err(bytes: &[u8]) -> String {
        Program::load(bytes).err().expect("should fail").to_string()
    }

    #[test]
    fn rejects_bad_files_with_a_cause() {
        assert_eq!(err(b"#!/bin/sh\n"), "not an ELF file (bad magic)");
        let mut e = image();
        e[4] = 1;
        assert!(err(&e).contains("32-bit ELF"));
        let mut e = image();
        e[5] = 2;
        assert!(err(&e).contains("big-endian"));
        let mut e = image();
        e[18] = 62;
        assert_eq!(err(&e), "ELF for x86-64, expected RISC-V");
        let mut e = image();
        e[16] = 1;
        assert!(err(&e).contains("not an executable"));
        let mut e = image();
        e[48] |= 4;
        assert_eq!(err(&e), "built for hard-float ABI; use -mabi=lp64");
        let mut e = image();
        e[24] = 0x10; // entry 0x8000_0010 is past the 8-byte text segment
        assert!(err(&e).contains("outside any executable segment"));
        assert!(err(&image()[..0x1004]).contains("truncated"));
    }

    #[test]
    fn segments_must_fit_in_dram() {
        let p = Arc::new(Program::load(&image()).unwrap());
        let small = MemParams { dram_base: 0x8000_0000, dram_size: 0x8000 };
        let e = NodeMem::new(p, 1, &small, &TimingParams::default()).err().unwrap();
        assert!(e.to_string().contains("outside DRAM"), "{e}");
    }

    #[test]
    fn symbols_and_abi_marker() {
        let p = Program::load(&asm::elf_image(&[asm::NOP], true)).unwrap();
        assert_eq!(p.symbol("tohost"), Some(asm::TOHOST));
        assert!(p.is_nanopu());
        assert_eq!(p.entry(), asm::TEXT);
    }
}
