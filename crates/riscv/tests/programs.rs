//! Integration tests: C programs built with riscv64-unknown-elf-gcc and run on one core
//! with no NIC. Each test skips (with a printed notice) when the cross compiler is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use nanopu_riscv::testing::{run_to_exit, RunResult};
use nanopu_riscv::Exit;

const CC: &str = "riscv64-unknown-elf-gcc";

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// These tests need the cross compiler; a missing one fails them (never a silent pass).
fn require_cc() {
    let ok = Command::new(CC).arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "{CC} not found: install it with scripts/setup-toolchain");
}

/// Compile `args` into an ELF named `name`; panics with the compiler's output on failure.
fn cc<S: AsRef<std::ffi::OsStr>>(name: &str, args: &[S]) -> Vec<u8> {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.elf"));
    let r = Command::new(CC).args(args).arg("-o").arg(&out).output().expect("run gcc");
    assert!(r.status.success(), "{CC} failed:\n{}", String::from_utf8_lossy(&r.stderr));
    std::fs::read(&out).unwrap()
}

/// Build a bare-metal test program from tests/programs (start.S + link.ld + `src`).
fn bare(src: &str) -> Vec<u8> {
    let d = programs();
    let (ld, start, c) = (d.join("link.ld"), d.join("start.S"), d.join(src));
    let args = [
        "-march=rv64imac_zicsr_zifencei",
        "-mabi=lp64",
        "-mcmodel=medany",
        "-nostdlib",
        "-nostartfiles",
        "-ffreestanding",
        "-O2",
        "-Wl,--no-warn-rwx-segments",
        "-T",
        ld.to_str().unwrap(),
        start.to_str().unwrap(),
        c.to_str().unwrap(),
    ];
    cc(src.trim_end_matches(".c"), &args)
}

fn run(elf: &[u8]) -> RunResult {
    run_to_exit(elf, 50_000_000).expect("loads")
}

fn console(r: &RunResult) -> String {
    String::from_utf8_lossy(&r.console).into_owned()
}

/// The number after `label` in the console output.
fn reported(r: &RunResult, label: &str) -> u64 {
    let text = console(r);
    let rest = text.split(label).nth(1).unwrap_or_else(|| panic!("no {label:?} in {text:?}"));
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn hello_over_htif() {
    require_cc();
    let r = run(&bare("hello.c"));
    assert_eq!(r.exit, Exit::Halted(7));
    assert_eq!(console(&r), "hello from hart 0\n");
}

#[test]
fn calibration_min_of_8192_from_cold_l1() {
    require_cc();
    let r = run(&bare("min8192.c"));
    assert_eq!(r.exit, Exit::Halted(0), "{}", console(&r));
    let cycles = reported(&r, "min8192 cycles");
    let us = cycles as f64 / 3200.0;
    println!("min8192: {cycles} cycles = {us:.1} us (prototype: about 18 us)");
    assert!((9.0..36.0).contains(&us), "{us} us is far from the prototype's 18 us");
}

#[test]
fn calibration_sort_1024_keys() {
    require_cc();
    let r = run(&bare("sort1024.c"));
    assert_eq!(r.exit, Exit::Halted(0), "output not sorted: {}", console(&r));
    let cycles = reported(&r, "sort1024 cycles");
    let us = cycles as f64 / 3200.0;
    println!("sort1024: {cycles} cycles = {us:.1} us (prototype: more than 30 us)");
    assert!(us > 15.0, "{us} us");
}

/// picolibc with semihosting. The multilib must be selected with exactly
/// `-march=rv64imac` (`rv64imac_zicsr` falls back to the hard-float default library).
fn picolibc(name: &str, src: &str) -> Vec<u8> {
    let c = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    cc(name, &picolibc_args("rv64imac", "lp64", &c, &[]))
}

/// `sw/apps/double_picolibc.c` on picolibc's `rv64imafdc/lp64d` multilib: doubles in the
/// F/D registers, libm, printf of doubles (picolibc's crt0 turns mstatus.FS on).
fn picolibc_double() -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sw/apps/double_picolibc.c");
    cc("pico_double", &picolibc_args("rv64imafdc", "lp64d", &src, &["-lm"]))
}

/// The compiler arguments of a semihosting picolibc program for `march`/`mabi`, linked
/// at DRAM's base (code) and 1 MiB above it (data).
fn picolibc_args(march: &str, mabi: &str, src: &Path, libs: &[&str]) -> Vec<String> {
    let fixed = ["--specs=picolibc.specs", "--oslib=semihost", "--crt0=semihost", "-mcmodel=medany", "-O2"];
    let link = ["__flash=0x80000000", "__flash_size=0x100000", "__ram=0x80100000", "__ram_size=0x100000"];
    let mut a: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    a.extend([format!("-march={march}"), format!("-mabi={mabi}")]);
    a.extend(link.iter().map(|d| format!("-Wl,--defsym={d}")));
    a.push(src.to_string_lossy().into_owned());
    a.extend(libs.iter().map(|s| s.to_string()));
    a
}

#[test]
fn picolibc_program_computes_with_doubles() {
    require_picolibc();
    let r = run(&picolibc_double());
    assert_eq!(r.exit, Exit::Halted(0));
    let want = "sqrt(2) = 1.414213562373095\nexp(1) = 2.718281828459\nsin(pi/6) = 0.500000000000\n\
                pi ~ 3.1415826536\n1/3 = 0.3333333333333333\n\
                (int)-2.75 = -2, (long)1e18 = 1000000000000000000\n";
    assert_eq!(console(&r), want);
}

fn require_picolibc() {
    require_cc();
    let args = ["--specs=picolibc.specs", "-print-file-name=picolibc.ld"];
    let ok = Command::new(CC).args(args).output().is_ok_and(|o| o.status.success());
    assert!(ok, "picolibc not usable: install it with scripts/setup-toolchain");
}

#[test]
fn picolibc_semihosting_hello_and_exit_codes() {
    require_picolibc();
    let src = "#include <stdio.h>\nint main(void){ printf(\"hello %d\\n\", 42); return 0; }\n";
    let r = run(&picolibc("pico_hello", src));
    assert_eq!(r.exit, Exit::Halted(0));
    assert_eq!(console(&r), "hello 42\n");
    let src = "#include <stdlib.h>\nint main(void){ exit(3); }\n";
    let r = run(&picolibc("pico_exit3", src));
    assert!(matches!(r.exit, Exit::Halted(c) if c != 0), "{:?}", r.exit);
}

#[test]
fn floating_point_with_fs_off_is_an_illegal_instruction() {
    require_cc();
    let d = programs();
    let src = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fp.c");
    std::fs::write(&src, "volatile double x = 1.5;\nint main(void){ return (int)(x * x); }\n").unwrap();
    let args = [
        "-march=rv64imafdc",
        "-mabi=lp64",
        "-mcmodel=medany",
        "-nostdlib",
        "-nostartfiles",
        "-ffreestanding",
        "-O2",
        "-Wl,--no-warn-rwx-segments",
        "-T",
        d.join("link.ld").to_str().unwrap().to_owned().leak(),
        d.join("start.S").to_str().unwrap().to_owned().leak(),
        src.to_str().unwrap(),
    ];
    let r = run(&cc("fp", &args));
    let Exit::Error(e) = r.exit else { panic!("expected an error, got {:?}", r.exit) };
    assert!(e.to_string().contains("mstatus.FS = 0"), "{e}");
}
