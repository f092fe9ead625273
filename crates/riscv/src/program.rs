//! A loaded program: the initial memory image and its pre-decoded code, built once and
//! shared (`Arc`) by every core of every node that runs it.

use std::collections::{BTreeMap, HashMap};

use crate::decode::decode_parcels;
use crate::elf::{self, ElfError, Segment, PF_X};
use crate::op::Op;

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
    symbols: HashMap<String, u64>,
    pub(crate) segments: Vec<Segment>,
    image: BTreeMap<u64, Box<Page>>,
    code: Vec<CodeRegion>,
    pub(crate) tohost: Option<u64>,
    pub(crate) fromhost: Option<u64>,
}

impl Program {
    /// Parse, validate, lay out the initial image and pre-decode all code.
    pub fn load(bytes: &[u8]) -> Result<Program, ElfError> {
        let parsed = elf::parse(bytes)?;
        let symbols: HashMap<String, u64> = parsed.symbols.into_iter().collect();
        let mut p = Program {
            entry: parsed.entry,
            nanopu: symbols.contains_key("__nanopu_abi"),
            tohost: symbols.get("tohost").copied(),
            fromhost: symbols.get("fromhost").copied(),
            symbols,
            segments: parsed.segments,
            image: BTreeMap::new(),
            code: Vec::new(),
        };
        if !p.segments.iter().any(|s| s.flags & PF_X != 0 && (s.addr..s.addr + s.memsz).contains(&p.entry)) {
            return Err(ElfError::EntryNotExecutable(p.entry));
        }
        p.build_image(bytes);
        let ranges = code_ranges(&p.segments, &parsed.code);
        p.code = ranges.into_iter().map(|(lo, hi)| p.decode_region(lo, hi)).collect();
        Ok(p)
    }

    pub fn entry(&self) -> u64 {
        self.entry
    }

    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.get(name).copied()
    }

    /// Does the program use the nanoPU register ABI (defines `__nanopu_abi`)?
    /// Address ranges `(base, bytes)` of the executable segments.
    pub fn code_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.code.iter().map(|r| (r.base, 2 * r.ops.len() as u64))
    }

    pub fn is_nanopu(&self) -> bool {
        self.nanopu
    }

    /// Initial contents of page number `pn`, if the image has any bytes there.
    pub(crate) fn page(&self, pn: u64) -> Option<&Page> {
        self.image.get(&pn).map(|b| &**b)
    }

    /// Decoded ops of page `pn` (2048 entries), if it holds code.
    pub(crate) fn code_page(&self, pn: u64) -> Option<&[Op]> {
        let addr = pn * PAGE;
        let r = self.code.iter().find(|r| addr >= r.base && addr < r.base + (r.ops.len() as u64) * 2)?;
        let i = ((addr - r.base) / 2) as usize;
        Some(&r.ops[i..i + OPS_PER_PAGE])
    }

    /// Page numbers of all pre-decoded code.
    pub(crate) fn code_pages(&self) -> impl Iterator<Item = u64> + '_ {
        self.code.iter().flat_map(|r| (r.base / PAGE)..(r.base / PAGE + (r.ops.len() / OPS_PER_PAGE) as u64))
    }

    /// Is page `pn` a pre-decoded code page (stores to it must invalidate decoded ops)?
    pub(crate) fn is_code_page(&self, pn: u64) -> bool {
        self.code_page(pn).is_some()
    }

    fn build_image(&mut self, bytes: &[u8]) {
        for s in &self.segments {
            let data = &bytes[s.offset as usize..(s.offset + s.filesz) as usize];
            for (i, &b) in data.iter().enumerate() {
                let a = s.addr + i as u64;
                let page = self.image.entry(a / PAGE).or_insert_with(|| Box::new([0; PAGE as usize]));
                page[(a % PAGE) as usize] = b;
            }
        }
    }

    fn half(&self, addr: u64) -> u16 {
        let get = |a: u64| self.page(a / PAGE).map_or(0, |p| p[(a % PAGE) as usize]);
        u16::from_le_bytes([get(addr), get(addr + 1)])
    }

    fn decode_region(&self, lo: u64, hi: u64) -> CodeRegion {
        let ops = (lo..hi)
            .step_by(2)
            .map(|a| decode_parcels(self.half(a), self.half(a + 2), self.nanopu))
            .collect();
        CodeRegion { base: lo, ops }
    }
}

/// Page-aligned, merged ranges to pre-decode: executable sections when the file has
/// section headers (so that data sharing an RWX segment is not treated as code), else the
/// file-backed part of executable segments.
fn code_ranges(segments: &[Segment], sections: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut r: Vec<(u64, u64)> = if sections.is_empty() {
        segments.iter().filter(|s| s.flags & PF_X != 0).map(|s| (s.addr, s.addr + s.filesz)).collect()
    } else {
        sections.to_vec()
    };
    r.iter_mut().for_each(|(lo, hi)| (*lo, *hi) = (*lo / PAGE * PAGE, hi.div_ceil(PAGE) * PAGE));
    r.sort();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in r {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}
