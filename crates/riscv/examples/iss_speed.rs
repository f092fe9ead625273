//! ISS speed: simulated instructions per host second on a compute-bound program, with the
//! timing model on. Usage:
//!   cargo run --release -p nanopu-riscv --example iss_speed [-- prog.elf]
//! Without an argument it runs a built-in loop (ALU ops, a load/store pair, a branch);
//! with one it runs the given ELF to completion on one core.

use std::time::Instant;

use nanopu_riscv::asm::{self, reg::*};
use nanopu_riscv::testing::run_to_exit;

/// 200 million iterations of a 10-instruction loop body.
fn builtin() -> Vec<u8> {
    let mut code = vec![
        asm::lui(T1, 200_000), // t1 = 200e3 * 4096 / 4096... iterations = 200_000 << 12 / 4096
        asm::i(12, T1, 5, T1, 0x13), // srli t1, t1, 12 -> 200_000
        asm::lui(T2, 1000),    // t2 = 1000 (after shift) : inner count multiplier
        asm::i(12, T2, 5, T2, 0x13),
        asm::r(1, T2, T1, 0, T1, 0x33), // mul t1, t1, t2 -> 2e8
        0x0000_8117,                    // auipc sp, 8: a stack page in DRAM
        asm::i(-16, SP, 7, SP, 0x13),   // andi sp, sp, -16
    ];
    let body = [
        asm::add(A1, A1, T1),
        asm::r(0, A1, A2, 4, A2, 0x33), // xor a2, a2, a1
        asm::i(3, A2, 1, A3, 0x13),     // slli a3, a2, 3
        asm::i(5, A1, 5, A4, 0x13),     // srli a4, a1, 5
        asm::add(A2, A3, A4),
        asm::sd(A2, SP, 0),
        asm::ld(A5, SP, 8),
        asm::add(A0, A0, A5),
        asm::addi(T1, T1, -1),
    ];
    code.extend_from_slice(&body);
    code.push(asm::bne(T1, ZERO, -4 * body.len() as i32));
    code.push(asm::addi(A0, ZERO, 0));
    code.extend(asm::exit_with(A0));
    asm::elf_image(&code, false)
}

fn main() {
    let elf = match std::env::args().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        None => builtin(),
    };
    let start = Instant::now();
    let r = run_to_exit(&elf, u64::MAX / 2).expect("valid ELF");
    let secs = start.elapsed().as_secs_f64();
    println!("exit {:?}", r.exit);
    println!(
        "instructions {} cycles {} (IPC {:.2})",
        r.instret,
        r.cycles,
        r.instret as f64 / r.cycles as f64
    );
    println!("host {:.3} s: {:.1} MIPS", secs, r.instret as f64 / secs / 1e6);
}
