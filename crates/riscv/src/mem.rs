//! One node's memory: DRAM pages allocated on first write (reads of untouched pages see the
//! program image or zeros), the boot info page, the CLINT registers and the shared L2 tags.
//!
//! Scale matters here: a cluster holds 16,384 of these, so an idle node must cost a few KiB.
//! DRAM is a two-level table (2 MiB leaves, allocated on demand); the L2 tags are allocated
//! on first access.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::cache::L2;
use crate::decode::decode_parcels;
use crate::elf::ElfError;
use crate::op::Op;
use crate::params::{MemParams, TimingParams};
use crate::program::{Page, Program, OPS_PER_PAGE, PAGE};

/// Base of the boot info page (docs/abi.md).
pub const BOOT_BASE: u64 = 0x1000;
/// CLINT layout (docs/abi.md, SiFive CLINT): msip[h] u32, mtimecmp[h] u64, mtime u64.
pub const CLINT_BASE: u64 = 0x0200_0000;
pub const CLINT_SIZE: u64 = 0x1_0000;
pub const MTIMECMP: u64 = 0x0200_4000;
pub const MTIME: u64 = 0x0200_bff8;

const LEAF_PAGES: usize = 512;
static ZERO_PAGE: Page = [0; PAGE as usize];

type Leaf = [Option<Box<Page>>; LEAF_PAGES];

/// Memory, CLINT and L2 of one node; shared by its cores.
pub struct NodeMem {
    pub(crate) program: Arc<Program>,
    pub(crate) base: u64,
    pub(crate) size: u64,
    dir: Vec<Option<Box<Leaf>>>,
    boot: Option<Box<Page>>,
    pub(crate) msip: Vec<u32>,
    pub(crate) mtimecmp: Vec<u64>,
    pub(crate) l2: L2,
    /// Code pages re-decoded after stores (self-modifying code), and pages stored to since.
    code_over: HashMap<u64, Box<[Op]>>,
    code_dirty: BTreeSet<u64>,
    /// Private pages created so far: host pointers to shared pages (the image, zeros) that
    /// a core cached are stale once this has changed.
    pub(crate) page_gen: u64,
}

impl NodeMem {
    /// Lay out a node for `program` with `ncores` harts. Checks the image fits in DRAM.
    pub fn new(
        program: Arc<Program>,
        ncores: usize,
        mem: &MemParams,
        timing: &TimingParams,
    ) -> Result<NodeMem, ElfError> {
        let (base, size) = (mem.dram_base, mem.dram_size);
        if base % PAGE != 0 || size % PAGE != 0 || size == 0 {
            return Err(ElfError::Config(format!(
                "DRAM base {base:#x} and size {size:#x} must be non-zero multiples of 4 KiB"
            )));
        }
        for s in &program.segments {
            if s.addr < base || s.addr.saturating_add(s.memsz) > base + size {
                return Err(ElfError::SegmentOutsideDram {
                    start: s.addr,
                    end: s.addr + s.memsz,
                    base,
                    size,
                });
            }
        }
        let l2 = L2::new(timing.l2_sets, timing.l2_ways);
        if !l2.fits(size / timing.line_bytes.max(1)) {
            return Err(ElfError::Config(format!("DRAM of {size:#x} bytes too large for 16-bit L2 tags")));
        }
        let leaves = (size / PAGE).div_ceil(LEAF_PAGES as u64) as usize;
        Ok(NodeMem {
            program,
            base,
            size,
            dir: (0..leaves).map(|_| None).collect(),
            boot: None,
            msip: vec![0; ncores],
            mtimecmp: vec![u64::MAX; ncores],
            l2,
            code_over: HashMap::new(),
            code_dirty: BTreeSet::new(),
            page_gen: 0,
        })
    }

    /// Set the contents of the boot info page (at most 4096 bytes; the rest reads as 0).
    pub fn write_boot(&mut self, bytes: &[u8]) {
        let page = self.boot.get_or_insert_with(|| Box::new([0; PAGE as usize]));
        let n = bytes.len().min(PAGE as usize);
        page[..n].copy_from_slice(&bytes[..n]);
    }

    /// Debugger-style read of DRAM or the boot page, without timing (a page at a time).
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        let mut done = 0;
        while done < buf.len() {
            let a = addr.wrapping_add(done as u64);
            match self.dram_page(a) {
                Some(pn) => {
                    let n = in_page(a, buf.len() - done);
                    buf[done..done + n].copy_from_slice(&self.page(pn)[page_range(a, n)]);
                    done += n;
                }
                None => {
                    buf[done] = self.read_byte(a).ok_or_else(|| format!("read at {a:#x}: outside memory"))?;
                    done += 1;
                }
            }
        }
        Ok(())
    }

    /// Debugger-style write of DRAM or the boot page, without timing (a page at a time).
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        let mut done = 0;
        while done < bytes.len() {
            let a = addr.wrapping_add(done as u64);
            let n = if self.dram_page(a).is_some() { in_page(a, bytes.len() - done) } else { 1 };
            if let Some(pn) = self.dram_page(a) {
                self.page_mut(pn)[page_range(a, n)].copy_from_slice(&bytes[done..done + n]);
                self.note_store(pn);
            } else if (BOOT_BASE..BOOT_BASE + PAGE).contains(&a) {
                self.write_boot_byte(a - BOOT_BASE, bytes[done]);
            } else {
                return Err(format!("write at {a:#x}: outside memory"));
            }
            done += n;
        }
        Ok(())
    }

    fn write_boot_byte(&mut self, off: u64, b: u8) {
        self.boot.get_or_insert_with(|| Box::new([0; PAGE as usize]))[off as usize] = b;
    }

    fn read_byte(&self, a: u64) -> Option<u8> {
        if let Some(pn) = self.dram_page(a) {
            return Some(self.page(pn)[(a % PAGE) as usize]);
        }
        (BOOT_BASE..BOOT_BASE + PAGE).contains(&a).then(|| self.boot_page()[(a - BOOT_BASE) as usize])
    }

    pub(crate) fn boot_page(&self) -> &Page {
        self.boot.as_deref().unwrap_or(&ZERO_PAGE)
    }

    /// Absolute page number of a DRAM address, if `addr` is in DRAM.
    #[inline]
    pub(crate) fn dram_page(&self, addr: u64) -> Option<u64> {
        (addr.wrapping_sub(self.base) < self.size).then_some(addr / PAGE)
    }

    fn slot(&self, pn: u64) -> (usize, usize) {
        let rel = (pn - self.base / PAGE) as usize;
        (rel / LEAF_PAGES, rel % LEAF_PAGES)
    }

    /// Current contents of DRAM page `pn` (private copy, program image, or zeros).
    pub(crate) fn page(&self, pn: u64) -> &Page {
        let (d, i) = self.slot(pn);
        if let Some(p) = self.dir[d].as_ref().and_then(|l| l[i].as_deref()) {
            return p;
        }
        self.program.page(pn).unwrap_or(&ZERO_PAGE)
    }

    /// Writable DRAM page `pn`, copied from the image (or zeroed) on first touch.
    pub(crate) fn page_mut(&mut self, pn: u64) -> &mut Page {
        let (d, i) = self.slot(pn);
        let program = &self.program;
        let leaf = self.dir[d].get_or_insert_with(|| Box::new([const { None }; LEAF_PAGES]));
        if leaf[i].is_none() {
            self.page_gen += 1;
        }
        leaf[i].get_or_insert_with(|| Box::new(program.page(pn).copied().unwrap_or([0; PAGE as usize])))
    }

    /// Record a debugger-style store to page `pn`: decoded code there is stale.
    pub(crate) fn note_store(&mut self, pn: u64) {
        if self.program.is_code_page(pn) {
            self.code_dirty.insert(pn);
        }
    }

    /// `fence.i`: every code page this node has written may hold new instructions; they
    /// are re-decoded when next fetched. Program stores need not mark pages themselves:
    /// without a `fence.i` their effect on fetch is unspecified (unprivileged spec 6.1).
    pub(crate) fn invalidate_code(&mut self) {
        let written: Vec<u64> = self.program.code_pages().filter(|&pn| self.is_private(pn)).collect();
        self.code_dirty.extend(written);
    }

    fn is_private(&self, pn: u64) -> bool {
        if self.dram_page(pn * PAGE).is_none() {
            return false;
        }
        let (d, i) = self.slot(pn);
        self.dir[d].as_ref().is_some_and(|l| l[i].is_some())
    }

    /// Decoded ops of code page `pn`, re-decoding it first if it was stored to.
    pub(crate) fn code_page(&mut self, pn: u64) -> Option<&[Op]> {
        if self.code_dirty.remove(&pn) {
            let ops = self.redecode(pn);
            self.code_over.insert(pn, ops);
        }
        if let Some(ops) = self.code_over.get(&pn) {
            return Some(ops);
        }
        self.program.code_page(pn)
    }

    fn redecode(&self, pn: u64) -> Box<[Op]> {
        let nanopu = self.program.is_nanopu();
        let half = |a: u64| {
            let mut b = [0u8; 2];
            self.read(a, &mut b).map_or(0, |_| u16::from_le_bytes(b))
        };
        (0..OPS_PER_PAGE as u64)
            .map(|k| pn * PAGE + 2 * k)
            .map(|a| decode_parcels(half(a), half(a + 2), nanopu))
            .collect()
    }

    /// Read two bytes at `addr` (for decoding outside pre-decoded code). None if unmapped.
    pub(crate) fn fetch_half(&self, addr: u64) -> Option<u16> {
        let mut b = [0u8; 2];
        self.dram_page(addr).and(self.dram_page(addr + 1))?;
        self.read(addr, &mut b).ok().map(|_| u16::from_le_bytes(b))
    }

    /// Private DRAM pages this node holds (written or touched by a store), and page-table
    /// leaves: what the node's memory costs the host beyond the shared program image.
    pub fn resident_pages(&self) -> (usize, usize) {
        let leaves = self.dir.iter().flatten();
        let pages = leaves.clone().map(|l| l.iter().filter(|p| p.is_some()).count()).sum();
        (pages, leaves.count())
    }

    /// Number of harts the CLINT serves.
    pub fn ncores(&self) -> usize {
        self.msip.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_layout_is_small() {
        assert_eq!(std::mem::size_of::<Leaf>(), 4096);
    }
}

/// Bytes from `addr` to the end of its page, at most `left`.
fn in_page(addr: u64, left: usize) -> usize {
    ((PAGE - addr % PAGE) as usize).min(left)
}

/// Offsets inside a page of `n` bytes from `addr`.
fn page_range(addr: u64, n: usize) -> std::ops::Range<usize> {
    let off = (addr % PAGE) as usize;
    off..off + n
}
