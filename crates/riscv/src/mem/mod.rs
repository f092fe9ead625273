//! One node's memory: DRAM chunks allocated on first write (reads of unwritten ones see the
//! program image or zeros; see `sparse`), the boot info page, the CLINT registers, the
//! shared L2 tags and what lies behind the L2 (the LLC and the DRAM banks).
//!
//! Scale matters here: a cluster holds 65,536 of these, so an idle node must cost a few KiB
//! and a busy one little more than what its programs wrote. The L2 tags are allocated on
//! first access, the LLC's grow with the blocks it holds, the DRAM bank table on the first
//! LLC miss.

mod netops;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::decode::decode_parcels;
use crate::dram::Dram;
use crate::l2::L2;
use crate::llc::Llc;
use crate::op::Op;
use crate::params::{MemParams, TimingParams};
use crate::program::elf::{Dram as DramMap, ElfError};
use crate::program::{Program, PAGE};
use crate::sparse::{Chunk, Resident, Sparse, CHUNK, CHUNKS_PER_PAGE};
use crate::stores::StoreTable;

/// Base of the boot info page (docs/abi.md).
pub const BOOT_BASE: u64 = 0x1000;
/// CLINT layout (docs/abi.md, SiFive CLINT): `msip[h]` u32, `mtimecmp[h]` u64, `mtime` u64.
pub const CLINT_BASE: u64 = 0x0200_0000;
pub const CLINT_SIZE: u64 = 0x1_0000;
pub const MTIMECMP: u64 = 0x0200_4000;
pub const MTIME: u64 = 0x0200_bff8;

static ZERO_CHUNK: Chunk = [0; CHUNK as usize];

/// Chunks made private that a node remembers (`NodeMem::made`): a node's cores take turns
/// every few hundred cycles, and a turn rarely makes more.
const MADE: usize = 8;

/// Memory, CLINT and L2 of one node; shared by its cores.
pub struct NodeMem {
    pub(crate) program: Arc<Program>,
    pub(crate) base: u64,
    pub(crate) size: u64,
    private: Sparse,
    /// The boot info page up to its last written byte (the rest reads as 0).
    boot: Vec<u8>,
    /// The program's arguments (argv), for the HTIF `getmainvars` call (`htif.rs`).
    pub(crate) args: Vec<String>,
    pub(crate) msip: Vec<u32>,
    pub(crate) mtimecmp: Vec<u64>,
    pub(crate) l2: L2,
    /// FASED's last-level cache and DDR3 banks behind the L2 (docs/models/node.md).
    pub(crate) llc: Llc,
    pub(crate) dram: Dram,
    /// The L2's one response path (`port.rs`).
    pub(crate) port: crate::port::Port,
    /// Code pages re-decoded after stores (self-modifying code), and pages stored to since.
    code_over: HashMap<u64, NodeCode>,
    code_dirty: BTreeSet<u64>,
    /// Names what `code_page` gives: changed, to a value no node has had, whenever a code
    /// page is marked stale (`note_store`, `invalidate_code`). A core keeps its fetch page
    /// across runs while this is unchanged (`Core::begin_run`), and cannot mistake another
    /// node's memory for this one.
    pub(crate) code_gen: u64,
    /// Private chunks created so far: host pointers to shared chunks (the image, zeros)
    /// that a core cached are stale once this has changed.
    pub(crate) page_gen: u64,
    /// The last `MADE` chunks made private, chunk `page_gen - k` at `made[(page_gen - k) %
    /// MADE]`: a core that saw `page_gen` a few chunks ago drops only their entries from
    /// its read TLB (`made_since`), not all of them.
    made: [u64; MADE],
    /// What the cores have shown each other of their stores (`stores.rs`).
    pub(crate) stores: StoreTable,
    /// The nanoPU instructions the cores ran lately, decoded (`net.rs`).
    pub(crate) net_ops: netops::NetOps,
}

impl NodeMem {
    /// Lay out a node for `program` with `ncores` harts. Checks the image fits in DRAM.
    pub fn new(
        program: Arc<Program>,
        ncores: usize,
        mem: &MemParams,
        timing: &TimingParams,
    ) -> Result<NodeMem, ElfError> {
        NodeMem::sharing(program, ncores, mem, timing, Arc::new(timing.dram.clone()))
    }

    /// `new`, with the DRAM's timing `dram` (`timing.dram`) shared with other nodes: a
    /// cluster's nodes keep one copy rather than 96 bytes each.
    pub fn sharing(
        program: Arc<Program>,
        ncores: usize,
        mem: &MemParams,
        timing: &TimingParams,
        dram: Arc<crate::params::Ddr3Params>,
    ) -> Result<NodeMem, ElfError> {
        debug_assert!(*dram == timing.dram);
        let map = DramMap::new(mem)?;
        let (base, size) = (mem.dram_base, mem.dram_size);
        for s in &program.segments {
            // The program may have been loaded for another, larger DRAM.
            map.holds("segment", s.addr, s.addr.saturating_add(s.memsz))?;
        }
        let (l2, llc) = shared_caches(timing, size)?;
        Ok(NodeMem {
            program,
            base,
            size,
            private: Sparse::new(base / PAGE),
            boot: Vec::new(),
            args: Vec::new(),
            msip: vec![0; ncores],
            mtimecmp: vec![u64::MAX; ncores],
            l2,
            llc,
            dram: Dram::new(dram),
            port: crate::port::Port::default(),
            code_over: HashMap::new(),
            code_dirty: BTreeSet::new(),
            code_gen: fresh_code_gen(),
            page_gen: 0,
            made: [u64::MAX; MADE],
            stores: StoreTable::default(),
            net_ops: Default::default(),
        })
    }

    /// The arguments the HTIF `getmainvars` call gives the program (argv, program name
    /// first), as the prototype's host passed them (docs/abi.md "HTIF").
    pub fn set_args(&mut self, args: Vec<String>) {
        self.args = args;
    }

    /// Core `by` stored to `line` at `cycle` while another core of the node ran
    /// (`core/coherence.rs`): the cores whose L1 D-cache may hold the line (`stores.rs`).
    #[inline]
    pub fn record_store(&mut self, by: usize, line: u64, cycle: u64) -> crate::stores::Holders {
        self.stores.record(by, line, cycle)
    }

    /// The cores whose L1 D-cache may hold `line` by the regions they filled
    /// (`StoreTable::may_hold`).
    #[inline]
    pub fn may_hold(&self, line: u64) -> crate::stores::Holders {
        self.stores.may_hold(line)
    }

    /// No core of the node that may still read is before cycle `earliest`: stores no core
    /// can wait for may be forgotten.
    pub fn prune_stores(&mut self, earliest: u64) {
        self.stores.prune(earliest);
    }

    /// Would `prune_stores` prune now (`StoreTable::prune_due`)? Finding `earliest` takes a
    /// pass over the node's cores, which most stores need not make.
    #[inline]
    pub fn stores_prune_due(&self) -> bool {
        self.stores.prune_due()
    }

    /// Every core of the node has exited: no store can be waited for any more, and the
    /// table's memory is freed.
    pub fn forget_stores(&mut self) {
        self.stores.clear();
    }

    /// Set the contents of the boot info page (at most 4096 bytes; the rest reads as 0).
    /// Only bytes up to the last non-zero one are kept: the boot info is a few hundred
    /// bytes in a zero-padded page.
    ///
    /// The page is not made whole first: zeroing 4 KiB and looking through them for the
    /// last non-zero byte, a byte at a time, took 60% of `Node::new`'s own host time
    /// (`perf`, the 16,384-node network benchmark).
    pub fn write_boot(&mut self, bytes: &[u8]) {
        let mut page = std::mem::take(&mut self.boot);
        let n = bytes.len().min(PAGE as usize);
        page.resize(page.len().max(n), 0);
        page[..n].copy_from_slice(&bytes[..n]);
        page.truncate(page.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1));
        page.shrink_to_fit();
        self.boot = page;
    }

    /// Debugger-style read of DRAM or the boot page, without timing (a chunk at a time).
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        let mut done = 0;
        while done < buf.len() {
            let a = addr.wrapping_add(done as u64);
            match self.dram_page(a) {
                Some(_) => {
                    let n = in_chunk(a, buf.len() - done);
                    buf[done..done + n].copy_from_slice(&self.chunk(a / CHUNK)[chunk_range(a, n)]);
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

    /// Debugger-style write of DRAM or the boot page, without timing (a chunk at a time).
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        let mut done = 0;
        while done < bytes.len() {
            let a = addr.wrapping_add(done as u64);
            let n = if self.dram_page(a).is_some() { in_chunk(a, bytes.len() - done) } else { 1 };
            if self.dram_page(a).is_some() {
                self.store_in_chunk(a, &bytes[done..done + n]);
                self.note_store(a / PAGE);
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
        let off = off as usize;
        if self.boot.len() <= off {
            self.boot.resize(off + 1, 0);
        }
        self.boot[off] = b;
    }

    fn read_byte(&self, a: u64) -> Option<u8> {
        if self.dram_page(a).is_some() {
            return Some(self.chunk(a / CHUNK)[(a % CHUNK) as usize]);
        }
        (BOOT_BASE..BOOT_BASE + PAGE).contains(&a).then(|| self.boot_byte(a - BOOT_BASE))
    }

    /// Byte `off` of the boot info page.
    pub(crate) fn boot_byte(&self, off: u64) -> u8 {
        self.boot.get(off as usize).copied().unwrap_or(0)
    }

    /// Absolute page number of a DRAM address, if `addr` is in DRAM.
    #[inline]
    pub(crate) fn dram_page(&self, addr: u64) -> Option<u64> {
        (addr.wrapping_sub(self.base) < self.size).then_some(addr / PAGE)
    }

    /// Current contents of DRAM chunk `cn` (private copy, program image, or zeros).
    pub(crate) fn chunk(&self, cn: u64) -> &Chunk {
        if let Some(c) = self.private.get(cn) {
            return c;
        }
        self.image_chunk(cn)
    }

    /// Chunk `cn` for a core's TLB (`core/tlb.rs`): the private copy, or the shared bytes.
    /// Inline in a load's TLB miss (`Core::load_slow`), as `store_in_chunk` is in a store's.
    #[inline(always)]
    pub(crate) fn chunk_ref(&mut self, cn: u64) -> ChunkRef<'_> {
        match self.private.get_mut(cn) {
            Some(c) => ChunkRef::Private(c),
            None => ChunkRef::Shared(image_chunk(&self.program, cn)),
        }
    }

    /// Chunk `cn` of the program image (zeros where the image has nothing).
    fn image_chunk(&self, cn: u64) -> &Chunk {
        image_chunk(&self.program, cn)
    }

    /// Chunk `cn + 1`'s shared bytes, if it is in `cn`'s page and not private (for a core's
    /// TLB, `Core::enter_next_shared`).
    pub(crate) fn next_shared(&self, cn: u64) -> Option<&Chunk> {
        let next = cn + 1;
        let shared = !next.is_multiple_of(CHUNKS_PER_PAGE) && !self.is_private_chunk(next);
        shared.then(|| image_chunk(&self.program, next))
    }

    /// Is chunk `cn` (in DRAM) private to this node?
    pub(crate) fn is_private_chunk(&self, cn: u64) -> bool {
        self.private.has(cn)
    }

    /// Writable DRAM chunk `cn`, copied from the image (or zeroed) on first touch (for
    /// tests: the simulator's stores make chunks private in `store_in_chunk`).
    #[cfg(test)]
    pub(crate) fn chunk_mut(&mut self, cn: u64) -> &mut Chunk {
        let program = &self.program;
        Made { private: &mut self.private, page_gen: &mut self.page_gen, made: &mut self.made }
            .get(cn, || *image_chunk(program, cn))
    }

    /// The chunks made private since `page_gen` was `gen`, if they are few enough to be
    /// known (else the caller forgets every shared chunk it holds).
    pub(crate) fn made_since(&self, gen: u64) -> Option<impl Iterator<Item = u64> + '_> {
        let n = self.page_gen.checked_sub(gen).filter(|&n| n <= MADE as u64)?;
        Some((self.page_gen - n + 1..=self.page_gen).map(|g| self.made[(g % MADE as u64) as usize]))
    }

    /// Store `bytes` (inside one DRAM chunk) at `addr`. A store that leaves the bytes as
    /// they are does not make the chunk private: zeroing fresh memory (memset of a buffer
    /// before use) then costs the host nothing. Returns the chunk as it is now (for a
    /// core's TLB). Inline, so that a core's store (`store_slow`) compares its few bytes
    /// with the image's in place rather than by a call to `memcmp`; the image's chunk is
    /// looked up once (1,024-core sort: 481,591 `memcmp` calls and 820,164 of
    /// `Program::page` for 650,066 of this, callgrind).
    #[inline(always)]
    pub(crate) fn store_in_chunk(&mut self, addr: u64, bytes: &[u8]) -> ChunkRef<'_> {
        let (cn, range) = (addr / CHUNK, chunk_range(addr, bytes.len()));
        let c = match self.private.slot_of(cn) {
            Some(s) => self.private.at_mut(s),
            None => {
                let image = image_chunk(&self.program, cn);
                if image[range.clone()] == *bytes {
                    return ChunkRef::Shared(image);
                }
                Made { private: &mut self.private, page_gen: &mut self.page_gen, made: &mut self.made }
                    .get(cn, || *image)
            }
        };
        c[range].copy_from_slice(bytes);
        ChunkRef::Private(c)
    }

    /// Record a debugger-style store to page `pn`: decoded code there is stale.
    pub(crate) fn note_store(&mut self, pn: u64) {
        if self.program.is_code_page(pn) {
            self.code_dirty.insert(pn);
            self.code_gen = fresh_code_gen();
        }
    }

    /// `fence.i`: every code page this node has written may hold new instructions; they
    /// are re-decoded when next fetched. Program stores need not mark pages themselves:
    /// without a `fence.i` their effect on fetch is unspecified (unprivileged spec 6.1).
    pub(crate) fn invalidate_code(&mut self) {
        let written: Vec<u64> = self.program.code_pages().filter(|&pn| self.is_private(pn)).collect();
        self.code_dirty.extend(written);
        self.code_gen = fresh_code_gen();
    }

    fn is_private(&self, pn: u64) -> bool {
        self.private.has_page(pn)
    }

    /// Decoded ops of code page `pn`, brought up to this node's memory first if it was
    /// stored to.
    pub(crate) fn code_page(&mut self, pn: u64) -> Option<&[Op]> {
        if self.code_dirty.remove(&pn) {
            self.refresh_code(pn);
        }
        if let Some(code) = self.code_over.get(&pn) {
            return Some(&code.ops);
        }
        self.program.code_page(pn)
    }

    /// Decode again the ops of page `pn` whose bytes changed since they were decoded: a
    /// store next to code (`tohost` in the last code page, which the host clears after
    /// every HTIF command) marks the page without changing any code, and then costs a
    /// comparison of the page's private chunks, not a page of decoding. A page whose
    /// memory still matches the program's image keeps the program's shared ops.
    fn refresh_code(&mut self, pn: u64) {
        let changed = self.changed_chunks(pn);
        if changed.is_empty() {
            return;
        }
        let mut code = self.code_over.remove(&pn).unwrap_or_else(|| self.program_code(pn));
        for cn in changed {
            self.redecode_chunk(&mut code.ops, pn, cn);
            code.remember(cn, self.chunk(cn));
        }
        self.code_over.insert(pn, code);
    }

    /// Chunks of page `pn` (and the next page's first, where its last op may end) whose
    /// bytes differ from those its ops were decoded from. Only private chunks can. Of the
    /// next page's first chunk only the two bytes the page's last op reaches count, and only
    /// if that op is a 32-bit one as memory holds it now (if its parcel changed, its own
    /// chunk is decoded again anyway): a program's data right after its code (NanoSort's
    /// `.bss` follows the page of `.htif`) would otherwise give every node that runs
    /// `fence.i` its own copy of the page's ops, 16 KiB (docs/profile.md).
    fn changed_chunks(&self, pn: u64) -> Vec<u64> {
        let first = pn * CHUNKS_PER_PAGE;
        let next = first + CHUNKS_PER_PAGE;
        let long_last = self.half_at((pn + 1) * PAGE - 2).is_some_and(|h| h & 3 == 3);
        let reach = |cn: u64| match cn == next {
            false => CHUNK as usize,
            true if long_last => 2,
            true => 0,
        };
        (first..=next)
            .filter(|&cn| {
                let n = reach(cn);
                self.is_private_chunk(cn) && self.decoded_from(pn, cn)[..n] != self.chunk(cn)[..n]
            })
            .collect()
    }

    /// The bytes of chunk `cn` that page `pn`'s current ops were decoded from.
    fn decoded_from(&self, pn: u64, cn: u64) -> &Chunk {
        let seen = self.code_over.get(&pn).and_then(|code| code.seen(cn));
        seen.unwrap_or_else(|| self.image_chunk(cn))
    }

    /// The program's ops of code page `pn`, as this node's own copy to overwrite.
    fn program_code(&self, pn: u64) -> NodeCode {
        let ops = self.program.code_page(pn).expect("a program code page").into();
        NodeCode { ops, seen: Vec::new() }
    }

    /// Decode from this node's memory the ops of page `pn` (`ops`) whose bytes touch chunk
    /// `cn`: the chunk's own, and the op before it, whose upper half may lie in it.
    fn redecode_chunk(&self, ops: &mut [Op], pn: u64, cn: u64) {
        let lo = (cn * CHUNK).saturating_sub(2).max(pn * PAGE);
        let hi = (cn * CHUNK + CHUNK).min(pn * PAGE + PAGE);
        (lo..hi).step_by(2).for_each(|a| ops[((a - pn * PAGE) / 2) as usize] = self.decode_at(a));
    }

    /// The op at `addr` as this node's memory holds it.
    fn decode_at(&self, addr: u64) -> Op {
        let half = |a: u64| {
            let mut b = [0u8; 2];
            self.read(a, &mut b).map_or(0, |_| u16::from_le_bytes(b))
        };
        decode_parcels(half(addr), half(addr + 2), self.program.is_nanopu())
    }

    /// The two bytes at `addr` as `read` gives them (None where it fails), from one chunk
    /// lookup when both are in one DRAM chunk: read after every run of a core sharing its
    /// node (`Core::loops_in_place`).
    pub(crate) fn half_at(&self, addr: u64) -> Option<u16> {
        let off = (addr % CHUNK) as usize;
        if off + 1 < CHUNK as usize && self.dram_page(addr).and(self.dram_page(addr + 1)).is_some() {
            let c = self.chunk(addr / CHUNK);
            return Some(u16::from_le_bytes([c[off], c[off + 1]]));
        }
        let mut b = [0u8; 2];
        self.read(addr, &mut b).ok().map(|_| u16::from_le_bytes(b))
    }

    /// Read two bytes at `addr` (for decoding outside pre-decoded code). None if unmapped.
    pub(crate) fn fetch_half(&self, addr: u64) -> Option<u16> {
        let mut b = [0u8; 2];
        self.dram_page(addr).and(self.dram_page(addr + 1))?;
        self.read(addr, &mut b).ok().map(|_| u16::from_le_bytes(b))
    }

    /// What this node's memory costs the host beyond the shared program image: the pages
    /// that hold private chunks and the chunks (written by a store or the host).
    pub fn resident(&self) -> Resident {
        self.private.resident()
    }

    /// Number of harts the CLINT serves.
    pub fn ncores(&self) -> usize {
        self.msip.len()
    }
}

/// The fields of `NodeMem` that making a chunk private changes, borrowed apart from its
/// program, whose image the new chunk is copied from.
struct Made<'a> {
    private: &'a mut Sparse,
    page_gen: &'a mut u64,
    made: &'a mut [u64; MADE],
}

impl<'a> Made<'a> {
    /// Private chunk `cn`, made from `image()` (its bytes in the image) if there is none
    /// yet; a chunk made is counted and remembered (`NodeMem::page_gen`, `made`).
    fn get(self, cn: u64, image: impl FnOnce() -> Chunk) -> &'a mut Chunk {
        let (c, made) = self.private.get_or_make(cn, image);
        if made {
            *self.page_gen += 1;
            self.made[(*self.page_gen % MADE as u64) as usize] = cn;
        }
        c
    }
}

/// A DRAM chunk's current bytes: the node's private copy, or the image's (or zeros) that
/// it still shares.
pub(crate) enum ChunkRef<'a> {
    Private(&'a mut Chunk),
    Shared(&'a Chunk),
}

/// A code page decoded from one node's memory: its ops, and the bytes of the private chunks
/// they were decoded from (for any other chunk, the image's), so that only chunks whose
/// bytes change are decoded again.
struct NodeCode {
    ops: Box<[Op]>,
    seen: Vec<(u64, Box<Chunk>)>,
}

impl NodeCode {
    /// The bytes of chunk `cn` the ops were last decoded from, if it was decoded at all.
    fn seen(&self, cn: u64) -> Option<&Chunk> {
        self.seen.iter().find(|(c, _)| *c == cn).map(|(_, bytes)| &**bytes)
    }

    /// The ops now hold chunk `cn` decoded from `bytes`.
    fn remember(&mut self, cn: u64, bytes: &Chunk) {
        match self.seen.iter_mut().find(|(c, _)| *c == cn) {
            Some((_, seen)) => **seen = *bytes,
            None => self.seen.push((cn, Box::new(*bytes))),
        }
    }
}

/// A code generation no node has had (`NodeMem::code_gen`). Only equality matters, so the
/// order in which threads draw them leaves every simulated result as it is.
fn fresh_code_gen() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Chunk `cn` of `program`'s image (zeros where the image has nothing).
fn image_chunk(program: &Program, cn: u64) -> &Chunk {
    let Some(page) = program.page(cn / CHUNKS_PER_PAGE) else {
        return &ZERO_CHUNK;
    };
    let at = ((cn % CHUNKS_PER_PAGE) * CHUNK) as usize;
    page[at..at + CHUNK as usize].try_into().expect("a chunk lies inside its page")
}

/// The node's L2 and LLC tags for a DRAM of `size` bytes; both tag in 16 bits.
fn shared_caches(timing: &TimingParams, size: u64) -> Result<(L2, Llc), ElfError> {
    let too_large =
        |what| ElfError::Config(format!("DRAM of {size:#x} bytes too large for 16-bit {what} tags"));
    let l2 = L2::new(timing.l2_sets, timing.l2_ways);
    if !l2.fits(size / timing.line_bytes.max(1)) {
        return Err(too_large("L2"));
    }
    let llc = Llc::new(timing.llc_sets, timing.llc_ways, timing.llc_block_bytes);
    if !llc.fits(size) {
        return Err(too_large("LLC"));
    }
    Ok((l2, llc))
}

/// Bytes from `addr` to the end of its chunk, at most `left`.
fn in_chunk(addr: u64, left: usize) -> usize {
    ((CHUNK - addr % CHUNK) as usize).min(left)
}

/// Offsets inside a chunk of `n` bytes from `addr`.
fn chunk_range(addr: u64, n: usize) -> std::ops::Range<usize> {
    let off = (addr % CHUNK) as usize;
    off..off + n
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, TEXT};
    use crate::testing::Bench;

    const PN: u64 = TEXT / super::PAGE;

    fn bench() -> Bench {
        Bench::new(&[asm::NOP, asm::NOP, asm::addi(10, 0, 1), asm::NOP], false)
    }

    #[test]
    fn a_host_store_to_code_is_fetched_and_one_putting_it_back_too() {
        let mut b = bench();
        let nop = b.mem.code_page(PN).unwrap()[0];
        b.mem.write(TEXT, &asm::addi(10, 0, 42).to_le_bytes()).unwrap();
        assert_eq!(b.mem.code_page(PN).unwrap()[0].imm, 42);
        b.mem.write(TEXT, &asm::NOP.to_le_bytes()).unwrap();
        assert_eq!(b.mem.code_page(PN).unwrap()[0], nop);
        assert_eq!(b.mem.code_page(PN).unwrap()[4].imm, 1, "the ops of other chunks as they were");
    }

    #[test]
    fn a_store_that_changes_no_code_keeps_the_decoded_page() {
        let mut b = bench();
        b.mem.write(TEXT + 0x800, &[0x13, 0, 0, 0]).unwrap();
        let ops = b.mem.code_page(PN).unwrap().as_ptr();
        b.mem.write(TEXT + 0x800, &[0x13, 0, 0, 0]).unwrap();
        assert_eq!(b.mem.code_page(PN).unwrap().as_ptr(), ops);
    }

    /// Data written just past a code page leaves the page's ops shared, unless it changes
    /// the upper half of a 32-bit instruction that starts in the page's last two bytes.
    #[test]
    fn data_after_a_code_page_keeps_its_ops_shared_unless_the_last_op_reaches_it() {
        let next = TEXT + super::PAGE;
        let changes_page = |code: &[u32], addr: u64| {
            let mut b = Bench::new(code, false);
            b.mem.chunk_mut(TEXT / super::CHUNK); // private, with the image's bytes
            b.mem.write(addr, &[0xff; 2]).unwrap();
            b.mem.invalidate_code();
            let shared = b.mem.program.clone();
            b.mem.code_page(PN).unwrap().as_ptr() != shared.code_page(PN).unwrap().as_ptr()
        };
        // The page ends in zeros (a 16-bit parcel): its last op reaches nothing past it.
        assert!(!changes_page(&[asm::NOP; 4], next));
        // 1,023 NOPs, a c.nop and an `addi` straddling the end of the page.
        let addi = asm::addi(10, 0, 1);
        let mut long = vec![asm::NOP; 1023];
        long.extend([0x0001 | addi << 16, addi >> 16]);
        assert!(!changes_page(&long, next + 2), "past the straddling op");
        assert!(changes_page(&long, next), "the straddling op's upper half");
    }

    /// A core that saw the node's `page_gen` a few chunks ago is told exactly which chunks
    /// became private since; one that saw it more than `MADE` chunks ago, or never, is told
    /// nothing (and forgets every shared chunk).
    #[test]
    fn made_since_names_the_chunks_made_private_while_it_can() {
        let mut b = bench();
        let data = (TEXT + 4 * super::PAGE) / super::CHUNK;
        let gen = b.mem.page_gen;
        for k in 0..3 {
            b.mem.chunk_mut(data + 2 * k);
        }
        b.mem.chunk_mut(data); // already private: not made again
        let made: Vec<u64> = b.mem.made_since(gen).unwrap().collect();
        assert_eq!(made, [data, data + 2, data + 4]);
        assert_eq!(b.mem.made_since(b.mem.page_gen).unwrap().count(), 0);
        for k in 3..3 + super::MADE as u64 {
            b.mem.chunk_mut(data + 2 * k);
        }
        assert!(b.mem.made_since(gen).is_none() && b.mem.made_since(u64::MAX).is_none());
        assert_eq!(b.mem.made_since(b.mem.page_gen - super::MADE as u64).unwrap().count(), super::MADE);
    }

    #[test]
    fn fence_i_over_code_as_loaded_keeps_the_program_ops() {
        let mut b = bench();
        b.mem.chunk_mut(TEXT / super::CHUNK); // private, with the image's bytes
        b.mem.invalidate_code();
        let shared = b.mem.program.clone();
        assert_eq!(b.mem.code_page(PN).unwrap().as_ptr(), shared.code_page(PN).unwrap().as_ptr());
    }
}
