//! Run a RISC-V ELF on one simulated core with no NIC and print what happened.
//! Usage: cargo run --release -p nanopu-riscv --example run -- prog.elf [max_cycles]

use nanopu_riscv::testing::run_to_exit;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run <elf> [max_cycles]");
        std::process::exit(2);
    };
    let max = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10_000_000_000u64);
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = std::time::Instant::now();
    let r = match run_to_exit(&bytes, max) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let secs = start.elapsed().as_secs_f64();
    print!("{}", String::from_utf8_lossy(&r.console));
    eprintln!("exit: {:?}", r.exit);
    eprintln!(
        "cycles {} instret {} ({:.1} us at 3.2 GHz), host {:.3} s, {:.1} MIPS",
        r.cycles,
        r.instret,
        r.cycles as f64 / 3200.0,
        secs,
        r.instret as f64 / secs / 1e6
    );
    eprintln!("{:?}", r.stats);
}
