//! Bad input gets a clear error, never a panic or a hang.

mod common;

use common::*;
use nanopu_cluster::{SimError, Simulation};

fn setup_error(bytes: &[u8]) -> String {
    match Simulation::new(bytes, cfg(1)) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted a bad ELF"),
    }
}

#[test]
fn not_an_elf() {
    assert!(setup_error(b"#!/bin/sh\necho hi\n").to_lowercase().contains("elf"));
    assert!(setup_error(&[]).to_lowercase().contains("elf"));
}

#[test]
fn wrong_architecture_is_named() {
    let mut elf = elf("tests/rv64m.elf");
    elf[18] = 62; // e_machine = EM_X86_64
    elf[19] = 0;
    let e = setup_error(&elf);
    assert!(e.contains("x86"), "{e}");
}

#[test]
fn truncated_elf() {
    let elf = elf("tests/rv64m.elf");
    let e = setup_error(&elf[..100]);
    assert!(e.to_lowercase().contains("truncat"), "{e}");
}

#[test]
fn message_length_zero_stops_the_run() {
    let e = run(&elf("tests/err_nic_bad_len.elf"), cfg(1)).unwrap_err();
    assert!(matches!(e, SimError::Core { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("length 0") && text.contains("core 0") && text.contains("pc 0x"), "{text}");
}

fn core_error(prog: &str) -> String {
    let e = run(&elf(prog), cfg(1)).unwrap_err();
    assert!(matches!(e, SimError::Core { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("core 0") && text.contains("pc 0x"), "{text}");
    text
}

#[test]
fn illegal_instruction_names_the_encoding() {
    let e = core_error("tests/err_illegal_fp.elf");
    assert!(e.contains("illegal instruction") && e.contains("0x00000053"), "{e}");
}

#[test]
fn access_outside_memory_names_the_address() {
    let e = core_error("tests/err_bad_access.elf");
    assert!(e.contains("access fault") && e.contains("0x40000000"), "{e}");
}

#[test]
fn context_id_out_of_range() {
    let e = core_error("tests/err_bad_context.elf");
    assert!(e.contains("70000") && e.contains("out of range"), "{e}");
}

#[test]
fn message_longer_than_the_maximum() {
    let e = core_error("tests/err_long_msg.elf");
    assert!(e.contains("4000") && e.contains("max_msg_bytes"), "{e}");
}

#[test]
fn spinning_program_reports_every_core() {
    let mut c = cfg(4);
    c.max_cycles = 100_000;
    let mut sim = Simulation::new(&elf("tests/err_spin.elf"), c).unwrap();
    let outcome = sim.run().unwrap();
    assert_eq!(outcome, nanopu_cluster::Outcome::TimeLimit);
    let text = nanopu_cluster::report::end_problems(&sim, outcome).join("\n");
    assert!(text.contains("(100000 cycles; raise it with max_cycles)"), "{text}");
    for core in 0..4 {
        assert!(text.contains(&format!("core {core}: pc 0x")), "{text}");
    }
}
