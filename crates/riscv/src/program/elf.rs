//! Minimal ELF64 little-endian reader for RISC-V executables (System V gABI, "ELF-64 Object
//! File Format"; RISC-V psABI for `e_flags`). Only what loading needs: program headers,
//! section headers (to find the code) and the symbol table.
//!
//! The file is untrusted input. Every offset and size in it is checked, with checked
//! arithmetic, against the file's length and every address range against the node's DRAM
//! before anything is allocated: a malformed file is an error that names the header and
//! the field or bound, never a panic, and never costs more memory than DRAM or the file.

use std::fmt;

use crate::params::MemParams;
use crate::program::PAGE;

/// Why an ELF file cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElfError {
    BadMagic,
    Class32,
    BigEndian,
    WrongMachine(u16),
    NotExecutable(u16),
    /// `what` ends at byte `end`, past the end of the file (`len` bytes).
    Truncated {
        what: String,
        end: u64,
        len: u64,
    },
    /// A field contradicts the format or another field; the message names them.
    Malformed(String),
    /// `what` occupies `[start, end)`, which is not inside DRAM `[base, base + size)`.
    OutsideDram {
        what: String,
        start: u64,
        end: u64,
        base: u64,
        size: u64,
    },
    EntryNotExecutable(u64),
    Rve,
    /// The quad-precision float ABI (`lp64q`): Q is not implemented.
    QuadFloat,
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
            ElfError::Truncated { what, end, len } => {
                write!(
                    f,
                    "truncated ELF: {what} ends at byte {end:#x}, past the end of the file ({len} bytes)"
                )
            }
            ElfError::Malformed(msg) => write!(f, "malformed ELF: {msg}"),
            ElfError::OutsideDram { what, start, end, base, size } => {
                // u128: a DRAM given to NodeMem unchecked may end past 2^64.
                let top = u128::from(*base) + u128::from(*size);
                write!(f, "{what} [{start:#x}, {end:#x}) outside DRAM [{base:#x}, {top:#x})")
            }
            ElfError::EntryNotExecutable(e) => {
                write!(f, "entry point {e:#x} is outside any executable segment")
            }
            ElfError::Rve => write!(f, "built for RVE (16 registers); use -march=rv64imac"),
            ElfError::QuadFloat => {
                write!(f, "built for the quad-float ABI (lp64q, Q extension); use -mabi=lp64d or lp64")
            }
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
const SHT_NOBITS: u32 = 8;
const EM_RISCV: u16 = 243;
/// RISC-V psABI e_flags: float ABI field (0 soft, 2 single, 4 double, 6 quad) and the RVE
/// bit. lp64f and lp64d run on the F/D implementation (`fpu.rs`); lp64q does not.
const EF_FLOAT_ABI: u32 = 0x6;
const EF_FLOAT_ABI_QUAD: u32 = 0x6;
const EF_RVE: u32 = 0x8;
/// ELF64 sizes of the file header, a program header, a section header and a symbol.
const EHDR: usize = 64;
const PHDR: usize = 56;
const SHDR: usize = 64;
const SYM: usize = 24;

/// A loadable segment, placed at its physical (load) address as bare-metal loaders do.
/// `parse` guarantees `offset + filesz` is within the file, `filesz <= memsz`, and
/// `[addr, addr + memsz)` is inside DRAM.
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
    /// Loadable segments that occupy memory, in address order, disjoint.
    pub segments: Vec<Segment>,
    /// Address ranges of allocated executable sections (empty if no section headers).
    pub code: Vec<(u64, u64)>,
    pub symbols: Symbols,
}

/// The symbol table: (st_name, st_value) pairs and one copy of the string table. Names are
/// looked up in place rather than copied per symbol, since many symbols naming one long
/// string would make a small file cost gigabytes.
#[derive(Debug, Default)]
pub struct Symbols {
    strtab: Vec<u8>,
    entries: Vec<(u32, u64)>,
}

impl Symbols {
    /// The value of the last symbol named `name` (what a map filled in order would hold).
    pub fn get(&self, name: &str) -> Option<u64> {
        let named = |&&(off, _): &&(u32, u64)| cstr(&self.strtab, u64::from(off)) == Some(name.as_bytes());
        self.entries.iter().rev().find(named).map(|&(_, value)| value)
    }

    /// The name of the nearest symbol at or below `addr` (the function holding it, for a
    /// program built with symbols), skipping local labels (`.L…`) and mapping symbols (`$x`).
    pub fn at_or_below(&self, addr: u64) -> Option<String> {
        let name = |off: u32| cstr(&self.strtab, u64::from(off)).filter(|n| is_named(n));
        let best = self.entries.iter().filter(|&&(off, v)| v <= addr && name(off).is_some());
        let (off, _) = best.max_by_key(|&&(_, v)| v)?;
        name(*off).map(|n| String::from_utf8_lossy(n).into_owned())
    }
}

fn is_named(n: &[u8]) -> bool {
    !n.is_empty() && n[0] != b'.' && n[0] != b'$'
}

/// DRAM sizes from here on are refused: 2^32 - 1 pages.
const MAX_DRAM: u64 = (u32::MAX as u64) * PAGE;

/// DRAM as `[base, end)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dram {
    base: u64,
    end: u64,
}

impl Dram {
    /// Checks `mem`: page-aligned, not empty, below 16 TiB (the tables of pages keep a
    /// page as its 32-bit distance from DRAM's first, `pageindex.rs`) and ending below 2^64.
    pub(crate) fn new(mem: &MemParams) -> Result<Dram, ElfError> {
        let (base, size) = (mem.dram_base, mem.dram_size);
        let fits = base % PAGE == 0 && size % PAGE == 0 && size > 0 && size < MAX_DRAM;
        match base.checked_add(size) {
            Some(end) if fits => Ok(Dram { base, end }),
            _ => Err(ElfError::Config(format!(
                "DRAM base {base:#x} and size {size:#x} must be non-zero multiples of 4 KiB ending below 2^64, the size below 16 TiB"
            ))),
        }
    }

    /// Checks that `what`, at `[start, end)`, lies inside.
    pub(crate) fn holds(&self, what: &str, start: u64, end: u64) -> Result<(), ElfError> {
        if start >= self.base && end <= self.end {
            return Ok(());
        }
        let (base, size) = (self.base, self.end - self.base);
        Err(ElfError::OutsideDram { what: what.into(), start, end, base, size })
    }
}

/// The little-endian number in the `n` (at most 8) bytes at `off`, if `b` has them.
fn le(b: &[u8], off: usize, n: usize) -> Option<u64> {
    let bytes = b.get(off..off.checked_add(n)?)?;
    Some(bytes.iter().rev().fold(0, |a, &x| (a << 8) | u64::from(x)))
}

/// A field of a header already checked to be whole. The 0 for a missing field is never
/// produced; it only keeps a broken invariant from becoming a panic.
fn field(h: &[u8], off: usize, n: usize) -> u64 {
    le(h, off, n).unwrap_or(0)
}

/// `start + len`, or an error naming `who` and the fields summed.
fn sum(who: &str, fields: &str, start: u64, len: u64) -> Result<u64, ElfError> {
    start.checked_add(len).ok_or_else(|| ElfError::Malformed(format!("{who}: {fields} overflows")))
}

/// The `len` bytes at `off` that `who`'s `fields` ("p_offset + p_filesz") describe.
fn bytes_at<'a>(b: &'a [u8], who: &str, fields: &str, off: u64, len: u64) -> Result<&'a [u8], ElfError> {
    let end = sum(who, fields, off, len)?;
    if end > b.len() as u64 {
        return Err(ElfError::Truncated { what: who.into(), end, len: b.len() as u64 });
    }
    // Both bounds are at most b.len(), so they fit in usize.
    Ok(b.get(off as usize..end as usize).unwrap_or_default())
}

/// The NUL-terminated string at `off` of a string table (up to its end if unterminated).
fn cstr(tab: &[u8], off: u64) -> Option<&[u8]> {
    let s = tab.get(usize::try_from(off).ok()?..)?;
    Some(&s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())])
}

fn check_ident(b: &[u8]) -> Result<(), ElfError> {
    if b.len() < 4 || b[..4] != *b"\x7fELF" {
        return Err(ElfError::BadMagic);
    }
    if b.len() < EHDR {
        return Err(ElfError::Truncated { what: "ELF header".into(), end: EHDR as u64, len: b.len() as u64 });
    }
    if b[4] != 2 {
        return Err(ElfError::Class32);
    }
    if b[5] != 1 {
        return Err(ElfError::BigEndian);
    }
    Ok(())
}

fn check_target(b: &[u8]) -> Result<(), ElfError> {
    let machine = field(b, 18, 2) as u16;
    if machine != EM_RISCV {
        return Err(ElfError::WrongMachine(machine));
    }
    let ty = field(b, 16, 2) as u16;
    if ty != 2 {
        return Err(ElfError::NotExecutable(ty));
    }
    let flags = field(b, 48, 4) as u32;
    if flags & EF_RVE != 0 {
        return Err(ElfError::Rve);
    }
    if flags & EF_FLOAT_ABI == EF_FLOAT_ABI_QUAD {
        return Err(ElfError::QuadFloat);
    }
    Ok(())
}

/// The ELF header fields loading uses.
struct Header {
    entry: u64,
    phoff: u64,
    phnum: u64,
    shoff: u64,
    shnum: u64,
    shstrndx: u64,
}

fn header(b: &[u8]) -> Result<Header, ElfError> {
    let h = Header {
        entry: field(b, 24, 8),
        phoff: field(b, 32, 8),
        shoff: field(b, 40, 8),
        phnum: field(b, 56, 2),
        shnum: field(b, 60, 2),
        shstrndx: field(b, 62, 2),
    };
    if h.entry & 1 != 0 {
        // Instructions are 2-byte aligned (the C extension); no PC is odd.
        let e = h.entry;
        return Err(ElfError::Malformed(format!(
            "ELF header: e_entry {e:#x} is odd; no RISC-V instruction starts there"
        )));
    }
    entry_size("e_phentsize", field(b, 54, 2), h.phnum, PHDR)?;
    entry_size("e_shentsize", field(b, 58, 2), if h.shoff == 0 { 0 } else { h.shnum }, SHDR)?;
    Ok(h)
}

/// Table entries must have the ELF64 size: another size means another format or a corrupt
/// header, and 0 would read every entry from the same bytes.
fn entry_size(name: &str, size: u64, num: u64, want: usize) -> Result<(), ElfError> {
    if num == 0 || size == want as u64 {
        return Ok(());
    }
    Err(ElfError::Malformed(format!("ELF header: {name} is {size}, expected {want} for ELF64")))
}

/// Parse and validate an ELF64 RISC-V executable for nodes whose DRAM is `mem`.
pub fn parse(b: &[u8], mem: &MemParams) -> Result<Parsed, ElfError> {
    check_ident(b)?;
    check_target(b)?;
    let h = header(b)?;
    let dram = Dram::new(mem)?;
    let segments = segments(b, &h, dram)?;
    let (code, symbols) = sections(b, &h, dram)?;
    Ok(Parsed { entry: h.entry, segments, code, symbols })
}

fn segments(b: &[u8], h: &Header, dram: Dram) -> Result<Vec<Segment>, ElfError> {
    let fields = "e_phoff + e_phnum * e_phentsize";
    let table = bytes_at(b, "program header table", fields, h.phoff, h.phnum * PHDR as u64)?;
    let mut out = Vec::new();
    for (i, ph) in table.chunks_exact(PHDR).enumerate() {
        if field(ph, 0, 4) as u32 == PT_LOAD {
            out.extend(segment(b, i, ph, dram)?.map(|s| (i, s)));
        }
    }
    disjoint(&mut out)?;
    Ok(out.into_iter().map(|(_, s)| s).collect())
}

/// Program header `i`, of type PT_LOAD, checked; None if it occupies no memory.
fn segment(b: &[u8], i: usize, ph: &[u8], dram: Dram) -> Result<Option<Segment>, ElfError> {
    let (flags, offset, addr) = (field(ph, 4, 4) as u32, field(ph, 8, 8), field(ph, 24, 8));
    let s = Segment { flags, offset, addr, filesz: field(ph, 32, 8), memsz: field(ph, 40, 8) };
    let who = format!("program header {i}");
    bytes_at(b, &who, "p_offset + p_filesz", s.offset, s.filesz)?;
    if s.filesz > s.memsz {
        let msg = format!("{who}: p_filesz {:#x} exceeds p_memsz {:#x}", s.filesz, s.memsz);
        return Err(ElfError::Malformed(msg));
    }
    if s.memsz == 0 {
        return Ok(None);
    }
    dram.holds(&who, s.addr, sum(&who, "p_paddr + p_memsz", s.addr, s.memsz)?)?;
    Ok(Some(s))
}

/// Sorts segments by address and checks that none share one: the image would depend on
/// the order in which they were copied.
fn disjoint(segs: &mut [(usize, Segment)]) -> Result<(), ElfError> {
    segs.sort_by_key(|(_, s)| s.addr);
    for pair in segs.windows(2) {
        let ((i, a), (j, b)) = (&pair[0], &pair[1]);
        // No overflow: `segment` checked addr + memsz.
        if a.addr + a.memsz > b.addr {
            return Err(ElfError::Malformed(format!("program headers {i} and {j} overlap in memory")));
        }
    }
    Ok(())
}

/// What the section headers give: code ranges and the symbol table.
type Sections = (Vec<(u64, u64)>, Symbols);

fn sections(b: &[u8], h: &Header, dram: Dram) -> Result<Sections, ElfError> {
    let mut out = Sections::default();
    if h.shoff == 0 {
        return Ok(out);
    }
    let fields = "e_shoff + e_shnum * e_shentsize";
    let table = bytes_at(b, "section header table", fields, h.shoff, h.shnum * SHDR as u64)?;
    let shdrs: Vec<&[u8]> = table.chunks_exact(SHDR).collect();
    let names = Names::new(b, &shdrs, h.shstrndx);
    for (i, sh) in shdrs.iter().enumerate() {
        let exec = SHF_ALLOC | SHF_EXECINSTR;
        if field(sh, 8, 8) & exec == exec && field(sh, 32, 8) > 0 {
            out.0.push(code_section(b, &names.of(i), sh, dram)?);
        }
        if field(sh, 4, 4) as u32 == SHT_SYMTAB {
            out.1 = symbols(b, &shdrs, &names, i)?;
        }
    }
    Ok(out)
}

/// Section names from the section header string table, for messages. A file without a
/// usable one still loads; its sections are then named by number only.
struct Names<'a> {
    shdrs: &'a [&'a [u8]],
    table: &'a [u8],
}

impl<'a> Names<'a> {
    fn new(b: &'a [u8], shdrs: &'a [&'a [u8]], shstrndx: u64) -> Names<'a> {
        let sh = usize::try_from(shstrndx).ok().and_then(|i| shdrs.get(i));
        let table = sh.and_then(|sh| bytes_at(b, "", "", field(sh, 24, 8), field(sh, 32, 8)).ok());
        Names { shdrs, table: table.unwrap_or_default() }
    }

    /// "section 1 (.text)", the name cut to 64 bytes.
    fn of(&self, i: usize) -> String {
        let name = self.shdrs.get(i).and_then(|sh| cstr(self.table, field(sh, 0, 4))).unwrap_or_default();
        match String::from_utf8_lossy(&name[..name.len().min(64)]) {
            n if n.is_empty() => format!("section {i}"),
            n => format!("section {i} ({n})"),
        }
    }
}

/// An allocated executable section's address range, checked against DRAM and, unless it
/// has no bytes in the file (SHT_NOBITS), against the file.
fn code_section(b: &[u8], who: &str, sh: &[u8], dram: Dram) -> Result<(u64, u64), ElfError> {
    let (addr, offset, size) = (field(sh, 16, 8), field(sh, 24, 8), field(sh, 32, 8));
    let end = sum(who, "sh_addr + sh_size", addr, size)?;
    dram.holds(who, addr, end)?;
    if field(sh, 4, 4) as u32 != SHT_NOBITS {
        bytes_at(b, who, "sh_offset + sh_size", offset, size)?;
    }
    Ok((addr, end))
}

/// The symbol table in section `i`, with the string table its sh_link names.
fn symbols(b: &[u8], shdrs: &[&[u8]], names: &Names, i: usize) -> Result<Symbols, ElfError> {
    let (who, sh) = (names.of(i), shdrs.get(i).copied().unwrap_or_default());
    let table = bytes_at(b, &who, "sh_offset + sh_size", field(sh, 24, 8), field(sh, 32, 8))?;
    let strtab = linked(b, shdrs, names, &who, sh)?;
    let entries: Vec<(u32, u64)> = table.chunks_exact(SYM).filter_map(symbol).collect();
    if let Some(&(name, _)) = entries.iter().find(|&&(name, _)| name as usize >= strtab.len()) {
        let msg =
            format!("{who}: st_name {name:#x} is past the end of its string table ({} bytes)", strtab.len());
        return Err(ElfError::Malformed(msg));
    }
    Ok(Symbols { strtab: strtab.to_vec(), entries })
}

/// The bytes of the section that section header `sh` (of `who`) names in sh_link.
fn linked<'a>(
    b: &'a [u8],
    shdrs: &[&[u8]],
    names: &Names,
    who: &str,
    sh: &[u8],
) -> Result<&'a [u8], ElfError> {
    let link = field(sh, 40, 4) as usize;
    let Some(to) = shdrs.get(link) else {
        let msg = format!("{who}: sh_link {link} is not a section (e_shnum {})", shdrs.len());
        return Err(ElfError::Malformed(msg));
    };
    bytes_at(b, &names.of(link), "sh_offset + sh_size", field(to, 24, 8), field(to, 32, 8))
}

/// (st_name, st_value) of a named symbol defined in some section.
fn symbol(sym: &[u8]) -> Option<(u32, u64)> {
    let (name, shndx) = (field(sym, 0, 4) as u32, field(sym, 6, 2));
    (name != 0 && shndx != 0).then(|| (name, field(sym, 8, 8)))
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
        e[48] |= 6;
        assert!(err(&e).contains("lp64q"));
        for abi in [2, 4] {
            let mut e = image();
            e[48] |= abi; // lp64f, lp64d
            assert!(Program::load(&e).is_ok(), "float ABI {abi} is accepted");
        }
        let mut e = image();
        e[24] = 0x10; // entry 0x8000_0010 is past the 8-byte text segment
        assert!(err(&e).contains("outside any executable segment"));
        let mut e = image();
        e[24] += 1; // entry 0x8000_0001: odd, where no instruction starts
        assert!(err(&e).contains("e_entry 0x80000001 is odd"), "{}", err(&e));
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
