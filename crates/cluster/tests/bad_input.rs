//! Bad input gets a clear error, never a panic or a hang.

use crate::common;

use common::*;
use nanopu_cluster::SimError;
use nanopu_cluster::Simulation;

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

/// The message with every "pc 0x..." shown as "pc _": PCs depend on the compiler's layout.
fn without_pcs(e: &str) -> String {
    let mut parts = e.split("pc 0x");
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        out.push_str("pc _");
        out.push_str(part.trim_start_matches(|c: char| c.is_ascii_hexdigit()));
    }
    out
}

#[test]
fn trap_loop_at_an_unfetchable_mtvec_names_the_first_trap() {
    let e = without_pcs(&core_error("tests/err_trap_loop.elf"));
    let want = "core 0, pc _: environment call (ecall) from M-mode at pc _, instruction 0x00000073; \
                then the trap handler (mtvec 0x40000000) trapped at its entry repeatedly: \
                instruction access fault at 0x40000000 (outside memory) (trap loop)";
    assert!(e.ends_with(want), "{e}");
}

#[test]
fn handler_that_traps_names_the_first_trap_and_the_extension() {
    let e = without_pcs(&core_error("tests/err_handler_traps.elf"));
    let first = "core 0, pc _: load access fault at 0x40000000 (outside memory) at pc _, instruction 0x";
    let then = "; then the trap handler (mtvec 0x";
    let looped = ") trapped at pc _ repeatedly: illegal instruction 0x40b57533 (from the Zbb (bit \
                  manipulation: basic) extension, which nanopu does not model) (trap loop)";
    assert!(e.contains(first) && e.contains(then) && e.ends_with(looped), "{e}");
}

#[test]
fn unmodelled_extension_is_named() {
    let e = without_pcs(&core_error("tests/err_unmodelled.elf"));
    let want = "core 0, pc _: illegal instruction 0x20b52533 (from the Zba (bit manipulation: \
                address generation) extension, which nanopu does not model) (no trap handler: mtvec = 0)";
    assert!(e.ends_with(want), "{e}");
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
    let text = nanopu_cluster::report::judge::judge(&sim, outcome).problems.join("\n");
    assert!(text.contains("(100000 cycles; raise it with max_cycles)"), "{text}");
    for core in 0..4 {
        assert!(text.contains(&format!("core {core}: pc 0x")), "{text}");
    }
}

/// A valid four-node all-to-all of `bytes`-byte messages, plus `extra` TOML.
fn alltoall(bytes: u32, extra: &str) -> nanopu_cluster::config::cluster::ClusterFile {
    let text = format!(
        "max_us = 1000.0\n[topology]\nkind = \"star\"\nnodes = 4\n[[program]]\nnodes = \"all\"\n\
         elf = \"apps/alltoall.elf\"\nargs = [\"4\", \"{bytes}\"]\n{extra}"
    );
    nanopu_cluster::config::cluster::ClusterFile::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn cluster_error(f: &nanopu_cluster::config::cluster::ClusterFile) -> String {
    match Simulation::cluster(f, &sw_build()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted {f:?}"),
    }
}

#[test]
fn cluster_values_out_of_range_are_refused_before_anything_is_built() {
    use nanopu_cluster::config::cluster::{ClusterFile, FaultFile};
    // Fields set after parsing, as the sort harness does, are checked too: a billion nodes,
    // 1e30 ns of propagation, an infinite max_us, an rto of 1e-9 us, a negative down time
    // and max_cycles in a cluster file are each refused by name.
    let down = |at| vec![FaultFile::link("node:1", Some(at), None)];
    type Edit = Box<dyn Fn(&mut ClusterFile)>;
    let edits: [(&str, Edit); 7] = [
        ("topology.nodes: 1000000000", Box::new(|f| f.topology.nodes = Some(1_000_000_000))),
        ("link.propagation_ns: 1e30", Box::new(|f| f.link.propagation_ns = 1e30)),
        ("max_us: inf", Box::new(|f| f.max_us = f64::INFINITY)),
        ("max_us: must be positive", Box::new(|f| f.max_us = 0.0)),
        ("transport_params.rto_us: 1e-9", Box::new(|f| f.transport_params.rto_us = Some(1e-9))),
        ("faults.down_at_us: -5", Box::new(move |f| f.faults = down(-5.0))),
        ("node.max_cycles", Box::new(|f| f.node.max_cycles = Some(1_000))),
    ];
    for (start, edit) in edits {
        let mut f = alltoall(8, "");
        edit(&mut f);
        let e = cluster_error(&f);
        assert!(e.starts_with(start), "{start}: {e}");
    }
}

#[test]
fn a_cluster_larger_than_memory_is_refused_with_an_estimate() {
    if !std::path::Path::new("/proc/meminfo").exists() {
        return; // the available memory is unknown here: nothing to compare with
    }
    // 2^20 nodes of 64 cores: about 416 GB before the first instruction.
    let mut f = alltoall(8, "[node]\ncores = 64\n");
    f.topology.nodes = Some(1 << 20);
    let e = cluster_error(&f);
    assert!(e.starts_with("topology: ") && e.contains("an estimate") && e.contains("GB"), "{e}");
}

#[test]
fn a_message_larger_than_the_tx_queue_is_refused_or_gets_a_queue_that_holds_it() {
    // max_msg_bytes = 8192 would leave every 8 KiB message waiting forever for room in the
    // 8 KiB TX queue (header and payload take 1,025 words of its 1,024): refused.
    let text = "max_us = 1000.0\n[topology]\nkind = \"star\"\nnodes = 4\n[node]\nmax_msg_bytes = 8192\n\
                [[program]]\nnodes = \"all\"\nelf = \"apps/alltoall.elf\"\nargs = [\"4\", \"8192\"]\n";
    let e = nanopu_cluster::config::cluster::ClusterFile::parse(text).unwrap_err();
    assert!(e.starts_with("node.max_msg_bytes: ") && e.contains("node.tx_queue_bytes"), "{e}");
    let f = alltoall(8192, "[node]\nmax_msg_bytes = 8192\ntx_queue_bytes = 8208\n");
    let mut sim = Simulation::cluster(&f, &sw_build()).unwrap();
    assert!(matches!(sim.run(), Ok(nanopu_cluster::Outcome::AllExited)));
}

#[test]
fn a_test_host_message_longer_than_the_maximum_is_refused_before_the_run() {
    let mut sim = Simulation::new(&elf("apps/loopback.elf"), cfg(1)).unwrap();
    let ip = nanopu_cluster::node::boot::node_ip(0);
    sim.host.send_at(nanopu_sim::Time::from_ns(100), nanopu_cluster::TestHost::message(0, ip, 0, &[7; 512]));
    let e = sim.run().unwrap_err().to_string();
    assert!(
        e.contains("test host's message at 100.000 ns is 4096 bytes") && e.contains("max_msg_bytes (2048)"),
        "{e}"
    );
}

/// Runs `prog` on `cores` cores of one node with a wall-clock guard: a simulator that stops
/// advancing simulated time ends as `wall-clock limit` instead of hanging the test.
fn run_guarded(prog: &str, cores: usize, args: &[&str]) -> (nanopu_cluster::Outcome, Simulation) {
    let mut c = cfg(cores);
    c.max_cycles = 100_000;
    c.args = args.iter().map(|s| s.to_string()).collect();
    let mut sim = Simulation::new(&elf(prog), c).unwrap();
    sim.set_wall_limit(std::time::Duration::from_secs(20));
    (sim.run().unwrap(), sim)
}

#[test]
fn spinning_on_lmsgsrdy_without_a_context_ends_quiescent() {
    // A parked core with no context must not be dispatched again at the same cycle forever.
    for cores in [1, 4] {
        let (outcome, _) = run_guarded("tests/err_spin_no_context.elf", cores, &[]);
        assert_eq!(outcome, nanopu_cluster::Outcome::Quiescent, "{cores} cores");
    }
}

#[test]
fn spinning_after_a_send_without_a_context_ends_quiescent() {
    // After the message leaves, simulated time must still advance to quiescence.
    // To the host it arrives; to 0.0.0.0, neither the node nor the host, the host drops it
    // (a cluster's fabric would, for want of a route).
    for (args, arrived) in [(&[][..], 1), (&["0"][..], 0)] {
        let (outcome, sim) = run_guarded("tests/err_spin_after_send.elf", 1, args);
        assert_eq!(outcome, nanopu_cluster::Outcome::Quiescent, "{args:?}");
        assert_eq!(sim.host.received.len(), arrived, "{args:?}: the message reached the host");
        assert_eq!(sim.host.not_for_host.messages, 1 - arrived as u64, "{args:?}");
    }
}

#[test]
fn an_exit_from_the_trap_handler_names_the_fault_that_entered_it() {
    let (_, s) = run(&elf("tests/err_handler_exits.elf"), cfg(1)).expect("the program exits");
    assert_eq!(s.cores[0].exit_code, Some(7));
    let state = without_pcs(&s.cores[0].state);
    let want = "exited from its trap handler, entered by load access fault at 0x40000000 (outside \
                memory) at pc _, instruction 0x";
    assert!(state.starts_with(want), "{state}");
}
