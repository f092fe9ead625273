//! Malformed ELF files, made by editing one field of a valid file. Each must be refused
//! with an error naming the header, the field and the bound, without a panic (several of
//! these sums overflowed in debug builds) and without allocating more than the file (a
//! 16 GiB `.text` made the loader ask for 64 GiB before it looked at DRAM).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use nanopu_riscv::asm::{self, TEXT};
use nanopu_riscv::{MemParams, Program};

/// Allocations above this are refused: a loader that asks for gigabytes then fails its
/// test at once, instead of thrashing the machine or being killed.
const REFUSE: usize = 1 << 30;

thread_local! {
    /// The largest allocation this thread asked for since `largest_allocation` reset it.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) -> bool {
    let _ = LARGEST.try_with(|c| c.set(c.get().max(size)));
    size <= REFUSE
}

struct Tracking;

// SAFETY: every call the allocator lets through goes to the system allocator unchanged; a
// refused one returns null, which `GlobalAlloc` allows.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if note(l.size()) {
            // SAFETY: the caller's guarantees, passed on unchanged.
            unsafe { System.alloc(l) }
        } else {
            std::ptr::null_mut()
        }
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if note(l.size()) {
            // SAFETY: the caller's guarantees, passed on unchanged.
            unsafe { System.alloc_zeroed(l) }
        } else {
            std::ptr::null_mut()
        }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if note(new) {
            // SAFETY: the caller's guarantees, passed on unchanged.
            unsafe { System.realloc(p, l, new) }
        } else {
            std::ptr::null_mut()
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's guarantees, passed on unchanged.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOC: Tracking = Tracking;

/// `f`'s result and the largest single allocation it made.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|c| c.set(0));
    let r = f();
    (r, LARGEST.with(Cell::get))
}

/// A valid file: two PT_LOADs (text at 64, data at 120), sections null, .text, .symtab,
/// .strtab, .shstrtab.
fn valid() -> Vec<u8> {
    asm::elf_image(&[asm::NOP, asm::jal(0, 0)], false)
}

fn get(e: &[u8], at: usize, n: usize) -> u64 {
    e[at..at + n].iter().rev().fold(0, |a, &b| (a << 8) | u64::from(b))
}

fn put(e: &mut [u8], at: usize, n: usize, v: u64) {
    e[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// Offset of program header `i`, of section header `i`.
fn ph(i: usize) -> usize {
    64 + 56 * i
}

fn sh(e: &[u8], i: usize) -> usize {
    get(e, 40, 8) as usize + 64 * i
}

/// `valid()` with `n` bytes at `at` set to `v`.
fn with(at: impl Fn(&[u8]) -> usize, n: usize, v: u64) -> Vec<u8> {
    let mut e = valid();
    let at = at(&e);
    put(&mut e, at, n, v);
    e
}

fn err_for(e: &[u8], mem: &MemParams) -> String {
    Program::load_for(e, mem).err().expect("the file should be refused").to_string()
}

fn err(e: &[u8]) -> String {
    err_for(e, &MemParams::default())
}

const TEXT_SIZE: fn(&[u8]) -> usize = |e| sh(e, 1) + 32;
const TEXT_ADDR: fn(&[u8]) -> usize = |e| sh(e, 1) + 16;
const TEXT_TYPE: fn(&[u8]) -> usize = |e| sh(e, 1) + 4;

#[test]
fn a_16_gib_text_section_is_refused_without_allocating() {
    let e = with(TEXT_SIZE, 8, 1 << 34);
    let (r, largest) = largest_allocation(|| Program::load(&e).err().map(|e| e.to_string()));
    assert_eq!(
        r.as_deref(),
        Some("section 1 (.text) [0x80000000, 0x480000000) outside DRAM [0x80000000, 0x90000000)")
    );
    assert!(largest < 64 << 10, "largest allocation {largest} bytes");
}

#[test]
fn a_16_gib_text_section_in_a_larger_dram_is_checked_against_the_file() {
    let big = MemParams { dram_base: 0x8000_0000, dram_size: 1 << 40 };
    let e = with(TEXT_SIZE, 8, 1 << 34);
    let (r, largest) = largest_allocation(|| err_for(&e, &big));
    let want = format!(
        "truncated ELF: section 1 (.text) ends at byte 0x400001000, past the end of the file ({} bytes)",
        e.len()
    );
    assert_eq!(r, want);
    assert!(largest < 64 << 10, "largest allocation {largest} bytes");
}

#[test]
fn code_is_pre_decoded_only_where_the_file_has_bytes() {
    // A 16 GiB executable SHT_NOBITS section has no file bytes to check: only the part
    // of it inside a file-backed executable segment (one page here) is pre-decoded.
    let big = MemParams { dram_base: 0x8000_0000, dram_size: 1 << 40 };
    let mut e = with(TEXT_SIZE, 8, 1 << 34);
    let at = TEXT_TYPE(&e);
    put(&mut e, at, 4, 8);
    let (p, largest) = largest_allocation(|| Program::load_for(&e, &big).expect("loads"));
    assert_eq!(p.code_ranges().collect::<Vec<_>>(), [(TEXT, 4096)]);
    assert!(largest < 64 << 10, "largest allocation {largest} bytes");
}

#[test]
fn sums_that_overflow_are_errors_naming_the_fields() {
    let cases: [(Vec<u8>, &str); 7] = [
        (with(|_| 32, 8, u64::MAX - 2), "program header table: e_phoff + e_phnum * e_phentsize overflows"),
        (with(|_| 40, 8, u64::MAX - 2), "section header table: e_shoff + e_shnum * e_shentsize overflows"),
        (with(|_| ph(0) + 8, 8, u64::MAX - 4), "program header 0: p_offset + p_filesz overflows"),
        (with(|_| ph(0) + 24, 8, u64::MAX - 4), "program header 0: p_paddr + p_memsz overflows"),
        (with(TEXT_ADDR, 8, u64::MAX - 4), "section 1 (.text): sh_addr + sh_size overflows"),
        (with(|e| sh(e, 2) + 24, 8, u64::MAX), "section 2 (.symtab): sh_offset + sh_size overflows"),
        (with(|e| sh(e, 3) + 24, 8, u64::MAX), "section 3 (.strtab): sh_offset + sh_size overflows"),
    ];
    for (e, want) in cases {
        assert_eq!(err(&e), format!("malformed ELF: {want}"));
    }
}

#[test]
fn sizes_past_the_end_of_the_file_name_the_header_and_the_end() {
    let len = valid().len();
    let past = |what: &str, end: u64, len: usize| {
        format!("truncated ELF: {what} ends at byte {end:#x}, past the end of the file ({len} bytes)")
    };
    assert_eq!(err(&valid()[..0x1004]), past("program header 0", 0x1008, 0x1004));
    assert_eq!(err(&with(|_| 56, 2, 0xffff)), past("program header table", 64 + 56 * 0xffff, len));
    assert_eq!(err(&with(TEXT_SIZE, 8, 0x10000)), past("section 1 (.text)", 0x11000, len));
    assert_eq!(err(&valid()[..40]), past("ELF header", 64, 40));
}

#[test]
fn every_prefix_of_a_valid_file_is_refused() {
    let e = valid();
    for len in 0..e.len() {
        assert!(Program::load(&e[..len]).is_err(), "prefix of {len} bytes");
    }
    Program::load(&e).expect("the whole file loads");
}

#[test]
fn inconsistent_fields_are_malformed() {
    let shdrs = valid().len() - 5 * 64;
    let cases: [(Vec<u8>, String); 6] = [
        (with(|_| 54, 2, 0), "ELF header: e_phentsize is 0, expected 56 for ELF64".into()),
        (with(|_| 58, 2, 32), "ELF header: e_shentsize is 32, expected 64 for ELF64".into()),
        (with(|_| ph(1) + 40, 8, 16), "program header 1: p_filesz 0x20 exceeds p_memsz 0x10".into()),
        (with(|_| ph(1) + 24, 8, TEXT + 4), "program headers 0 and 1 overlap in memory".into()),
        (
            with(|e| sh(e, 2) + 40, 4, 99),
            "section 2 (.symtab): sh_link 99 is not a section (e_shnum 5)".into(),
        ),
        (
            with(|e| sh(e, 3) + 32, 8, 2),
            "section 2 (.symtab): st_name 0x8 is past the end of its string table (2 bytes)".into(),
        ),
    ];
    assert_eq!(get(&valid(), 40, 8) as usize, shdrs);
    for (e, want) in cases {
        assert_eq!(err(&e), format!("malformed ELF: {want}"));
    }
}

#[test]
fn segments_and_sections_outside_dram_name_the_bound() {
    let e = with(|_| ph(1) + 40, 8, 1 << 40);
    assert_eq!(err(&e), "program header 1 [0x8000f000, 0x1008000f000) outside DRAM [0x80000000, 0x90000000)");
    let small = MemParams { dram_base: 0x8000_0000, dram_size: 0x8000 };
    assert_eq!(
        err_for(&valid(), &small),
        "program header 1 [0x8000f000, 0x80010000) outside DRAM [0x80000000, 0x80008000)"
    );
    let no_names = with(|_| 62, 2, 99);
    let mut e = no_names.clone();
    put(&mut e, TEXT_ADDR(&no_names), 8, 0x1000);
    assert_eq!(err(&e), "section 1 [0x1000, 0x1008) outside DRAM [0x80000000, 0x90000000)");
    Program::load(&no_names).expect("section names are only for messages");
}

#[test]
fn a_dram_that_wraps_around_is_a_configuration_error() {
    let wraps = MemParams { dram_base: 0xffff_ffff_ffff_f000, dram_size: 0x2000 };
    assert!(err_for(&valid(), &wraps).contains("must be non-zero multiples of 4 KiB ending below 2^64"));
}

#[test]
fn the_programs_of_sw_build_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sw/build");
    let elfs = ["tests", "apps"].iter().flat_map(|d| std::fs::read_dir(dir.join(d)).into_iter().flatten());
    let mut n = 0;
    for path in elfs.flatten().map(|f| f.path()).filter(|p| p.extension().is_some_and(|x| x == "elf")) {
        let p = Program::load(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(p.code_ranges().count() > 0, "{}", path.display());
        n += 1;
    }
    if n == 0 {
        eprintln!("sw/build has no programs (run `make sw`): only the hand-made files were checked");
    }
}

#[test]
fn section_headers_say_what_is_code_whatever_the_segment_flags() {
    // The riscv-tests' link script makes its one segment R|W only (flags 6); Spike and QEMU
    // ignore segment flags, and the .text section says it is code.
    let e = with(|_| ph(0) + 4, 4, 6);
    let p = Program::load(&e).expect("the executable section makes it code");
    assert_eq!(p.code_ranges().count(), 1, "and it is pre-decoded");
    // Without section headers, nothing says the segment is code.
    let mut bare = e.clone();
    put(&mut bare, 40, 8, 0);
    assert_eq!(err(&bare), "entry point 0x80000000 is outside any executable segment");
}
