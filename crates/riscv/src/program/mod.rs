//! A loaded program: the initial memory image and its pre-decoded code, built once and
//! shared (`Arc`) by every core of every node that runs it.

pub mod abi;
pub mod elf;
pub(crate) mod pageindex;
pub mod stack;

use crate::decode::decode_parcels;
use crate::op::Op;
use crate::params::MemParams;
use abi::{AbiChoice, AbiSource};
use elf::{ElfError, Segment, Symbols, PF_X};
use pageindex::PageIndex;

pub const PAGE: u64 = 4096;
pub type Page = [u8; PAGE as usize];
/// Decoded ops per page: one per 2-byte slot.
pub const OPS_PER_PAGE: usize = (PAGE / 2) as usize;

/// A run of whole pages of decoded code, starting at a page-aligned `base`.
pub struct CodeRegion {
    pub base: u64,
    pub ops: Vec<Op>,
}

/// A loaded ELF image.
pub struct Program {
    entry: u64,
    nanopu: bool,
    abi_source: AbiSource,
    /// Defines `__nanopu_runtime` or `__nanopu_abi`: built with our runtime (`sw/lib/crt0.S`).
    ours: bool,
    symbols: Symbols,
    pub(crate) segments: Vec<Segment>,
    /// The image's pages, found by page number through `image_at`: every software-TLB
    /// miss to memory a node has not written looks a page up here.
    image: Vec<Box<Page>>,
    image_at: PageIndex,
    code: Vec<CodeRegion>,
    /// What a core engine keeps per program, made at its first use: the translated traces
    /// of `Engine::Jit` (`jit::Traces`). Typed `Any` here, so that the program does not
    /// depend on the engines that run it.
    engine_cache: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    pub(crate) tohost: Option<u64>,
    pub(crate) fromhost: Option<u64>,
}

impl Program {
    /// Parse, validate for nodes with the default DRAM ([`MemParams::default`]), lay out
    /// the initial image and pre-decode all code.
    pub fn load(bytes: &[u8]) -> Result<Program, ElfError> {
        Program::load_for(bytes, &MemParams::default())
    }

    /// [`Program::load`] for nodes whose DRAM is `mem`: every segment and executable
    /// section must lie inside it. Nothing is allocated before the whole file is checked.
    pub fn load_for(bytes: &[u8], mem: &MemParams) -> Result<Program, ElfError> {
        Program::load_as(bytes, mem, AbiChoice::Auto)
    }

    /// [`Program::load_for`] with the register ABI decided by `abi` (`abi.rs`).
    pub fn load_as(bytes: &[u8], mem: &MemParams, abi: AbiChoice) -> Result<Program, ElfError> {
        let parsed = elf::parse(bytes, mem)?;
        let s = &parsed.symbols;
        let (marker, tohost, fromhost) =
            (s.get("__nanopu_abi").is_some(), s.get("tohost"), s.get("fromhost"));
        let ours = marker || s.get("__nanopu_runtime").is_some();
        let (nanopu, abi_source) = abi::decide(abi, marker, &parsed.segments, bytes);
        let mut p = Program {
            entry: parsed.entry,
            nanopu,
            abi_source,
            ours,
            tohost,
            fromhost,
            symbols: parsed.symbols,
            segments: parsed.segments,
            image: Vec::new(),
            image_at: PageIndex::new(mem.dram_base / PAGE),
            code: Vec::new(),
            engine_cache: std::sync::OnceLock::new(),
        };
        p.check_entry(&parsed.code)?;
        p.build_image(bytes);
        let ranges = code_ranges(&p.segments, &parsed.code);
        p.code = ranges.into_iter().map(|(lo, hi)| p.decode_region(lo, hi)).collect();
        Ok(p)
    }

    /// The entry must be code: in an executable segment, or in an executable section of a
    /// loaded segment (the riscv-tests' link script gives its one segment the flags R|W
    /// only, and Spike and QEMU, which ignore segment flags, run it).
    fn check_entry(&self, sections: &[(u64, u64)]) -> Result<(), ElfError> {
        let e = self.entry;
        let holds = |s: &Segment| e.checked_sub(s.addr).is_some_and(|off| off < s.memsz);
        let in_section =
            sections.iter().any(|&(lo, hi)| (lo..hi).contains(&e)) && self.segments.iter().any(holds);
        match in_section || self.segments.iter().any(|s| s.flags & PF_X != 0 && holds(s)) {
            true => Ok(()),
            false => Err(ElfError::EntryNotExecutable(e)),
        }
    }

    pub fn entry(&self) -> u64 {
        self.entry
    }

    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.get(name)
    }

    /// Address ranges `(base, bytes)` of the pre-decoded code.
    pub fn code_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.code.iter().map(|r| (r.base, 2 * r.ops.len() as u64))
    }

    /// Does the program use the nanoPU register ABI (x30/x31 are the network registers)?
    pub fn is_nanopu(&self) -> bool {
        self.nanopu
    }

    /// Was the program built with our runtime (whose harts each exit on their own) rather
    /// than the prototype's? Our `crt0.S` defines `__nanopu_runtime`, and `__nanopu_abi`
    /// too unless the program is plain RISC-V (the IceNIC programs; docs/abi.md).
    pub fn built_with_our_runtime(&self) -> bool {
        self.ours
    }

    /// Why [`Program::is_nanopu`] says what it says.
    pub fn abi_source(&self) -> &AbiSource {
        &self.abi_source
    }

    /// Initial contents of page number `pn`, if the image has any bytes there.
    pub(crate) fn page(&self, pn: u64) -> Option<&Page> {
        self.image_at.find(pn).map(|i| &*self.image[i as usize])
    }

    /// Decoded ops of page `pn` (2048 entries), if it holds code.
    pub(crate) fn code_page(&self, pn: u64) -> Option<&[Op]> {
        let addr = pn * PAGE;
        let r = self.code.iter().find(|r| addr >= r.base && addr < r.base + (r.ops.len() as u64) * 2)?;
        let i = ((addr - r.base) / 2) as usize;
        Some(&r.ops[i..i + OPS_PER_PAGE])
    }

    /// The engine's per-program cache (`engine_cache`), made by `make` from the decoded
    /// code at the first call; `None` if another type was made first.
    #[inline(always)]
    pub(crate) fn engine_cache<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce(&[CodeRegion]) -> T,
    ) -> Option<&T> {
        self.engine_cache.get_or_init(|| Box::new(make(&self.code))).downcast_ref()
    }

    /// Page numbers of all pre-decoded code.
    pub(crate) fn code_pages(&self) -> impl Iterator<Item = u64> + '_ {
        self.code.iter().flat_map(|r| (r.base / PAGE)..(r.base / PAGE + (r.ops.len() / OPS_PER_PAGE) as u64))
    }

    /// Is page `pn` a pre-decoded code page (stores to it must invalidate decoded ops)?
    pub(crate) fn is_code_page(&self, pn: u64) -> bool {
        self.code_page(pn).is_some()
    }

    /// Copies each segment's file bytes into the image.
    fn build_image(&mut self, bytes: &[u8]) {
        for (addr, offset, filesz) in
            self.segments.iter().map(|s| (s.addr, s.offset, s.filesz)).collect::<Vec<_>>()
        {
            // `elf::parse` checked that offset + filesz is within the file.
            let data = bytes.get(offset as usize..).and_then(|d| d.get(..filesz as usize));
            self.copy_into(addr, data.unwrap_or_default());
        }
    }

    /// Copies `data` into the image at `addr`, a page at a time.
    fn copy_into(&mut self, mut addr: u64, mut data: &[u8]) {
        while !data.is_empty() {
            let at = (addr % PAGE) as usize;
            let n = data.len().min(PAGE as usize - at);
            let page = self.image_page(addr / PAGE);
            page[at..at + n].copy_from_slice(&data[..n]);
            (addr, data) = (addr.wrapping_add(n as u64), &data[n..]);
        }
    }

    /// Page `pn` of the image, made of zeros if it has none yet.
    fn image_page(&mut self, pn: u64) -> &mut Page {
        let i = self.image_at.find(pn).unwrap_or_else(|| {
            self.image_at.insert(pn, self.image.len() as u32);
            self.image.push(Box::new([0; PAGE as usize]));
            self.image.len() as u32 - 1
        });
        &mut self.image[i as usize]
    }

    fn half(&self, addr: u64) -> u16 {
        let get = |a: u64| self.page(a / PAGE).map_or(0, |p| p[(a % PAGE) as usize]);
        u16::from_le_bytes([get(addr), get(addr.wrapping_add(1))])
    }

    fn decode_region(&self, lo: u64, hi: u64) -> CodeRegion {
        let ops = (lo..hi)
            .step_by(2)
            .map(|a| decode_parcels(self.half(a), self.half(a.wrapping_add(2)), self.nanopu))
            .collect();
        CodeRegion { base: lo, ops }
    }
}

/// Page-aligned, merged ranges to pre-decode: the file-backed parts of executable
/// segments, narrowed to executable sections when the file has section headers (so that
/// data sharing an RWX segment is not treated as code). Code anywhere else is zeros at
/// load and is decoded when fetched, so pre-decoding it would only cost memory: a section
/// header claiming more code than the file holds must not cost more than the file.
fn code_ranges(segments: &[Segment], sections: &[(u64, u64)]) -> Vec<(u64, u64)> {
    // A file whose segments are all marked non-executable but whose sections say what is
    // code (the riscv-tests': see `check_entry`) has its code found by the sections alone.
    let none_x = !segments.iter().any(|s| s.flags & PF_X != 0) && !sections.is_empty();
    let exec = segments.iter().filter(|s| s.flags & PF_X != 0 || none_x);
    let loaded = merged(exec.map(|s| (s.addr, s.addr + s.filesz)).collect());
    let code = if sections.is_empty() { loaded } else { intersect(&loaded, &merged(sections.to_vec())) };
    // No overflow: DRAM, which holds every segment, ends on a page boundary below 2^64.
    merged(code.into_iter().map(|(lo, hi)| (lo / PAGE * PAGE, hi.div_ceil(PAGE) * PAGE)).collect())
}

/// `r` sorted, without empty ranges, overlapping or touching ones joined.
fn merged(mut r: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    r.retain(|(lo, hi)| lo < hi);
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(r.len());
    for (lo, hi) in r {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// The addresses in both `a` and `b`, each sorted and disjoint.
fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while let (Some(&(alo, ahi)), Some(&(blo, bhi))) = (a.get(i), b.get(j)) {
        let (lo, hi) = (alo.max(blo), ahi.min(bhi));
        if lo < hi {
            out.push((lo, hi));
        }
        if ahi < bhi {
            i += 1
        } else {
            j += 1
        }
    }
    out
}
