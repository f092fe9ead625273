//! The ELF fuzz target (`fuzz/fuzz_targets/elf.rs`) driven on stable Rust: the seed corpus
//! must load, and `fuzz_smoke_elf` (ignored; `make fuzz-smoke` runs it) fuzzes for
//! NANOPU_FUZZ_SECS seconds from hand-made files and the programs of sw/build.

#[path = "../../../fuzz/driver.rs"]
mod driver;

use std::path::Path;

use nanopu_riscv::asm::{self, reg::*};
use nanopu_riscv::fuzzing;

/// Small files whose headers are a large share of their bytes, and the real programs.
fn seeds() -> Vec<Vec<u8>> {
    let store_loop = [asm::addi(A0, ZERO, 1), asm::lui(A1, 0x8000f), asm::s(0, A0, A1, 3), asm::jal(0, -12)];
    let mut seeds = vec![
        asm::elf_image(&[asm::NOP, asm::jal(0, 0)], false),
        asm::elf_image(&store_loop, true),
        asm::elf_bytes(&[0x01, 0x00, 0x01, 0xa0], false), // c.nop; c.j 0
    ];
    seeds.extend(sw_build());
    seeds
}

/// The programs of sw/build in name order (none if `make sw` has not run).
fn sw_build() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sw/build");
    let mut paths: Vec<_> = ["tests", "apps"]
        .iter()
        .flat_map(|d| std::fs::read_dir(dir.join(d)).into_iter().flatten().flatten())
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|x| x == "elf"))
        .collect();
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

#[test]
fn the_seed_corpus_loads() {
    for (i, s) in seeds().iter().enumerate() {
        assert!(fuzzing::elf(s), "seed {i} is refused");
    }
}

#[test]
#[ignore = "a bounded fuzz run: `make fuzz-smoke`, or --ignored with NANOPU_FUZZ_SECS"]
fn fuzz_smoke_elf() {
    let stats = driver::run("elf", seeds(), &[], fuzzing::elf);
    assert!(stats.accepted > 0, "{stats:?}");
}
