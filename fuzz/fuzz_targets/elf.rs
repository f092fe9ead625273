#![no_main]

// An ELF file: loaded, laid out in a node and run briefly (nanopu_riscv::fuzzing).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nanopu_riscv::fuzzing::elf(data);
});
