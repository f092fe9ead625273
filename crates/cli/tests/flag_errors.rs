//! A flag out of its range, or one the command does not read, is an error naming the flag
//! (README.md: "flags that do not apply are errors, never ignored"), never a panic, a
//! silent default or a run that fails for a reason the user cannot see.

use crate::common;

use common::{nanopu, stderr};

/// Exit status 2 (refused before running) and every `want` in the message.
fn refused_saying(args: &[&str], want: &[&str]) {
    let o = nanopu(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert!(!e.contains("panicked"), "{args:?}: {e}");
    assert!(want.iter().all(|w| e.contains(w)), "{args:?}: want {want:?} in: {e}");
}

#[test]
fn app_flags_out_of_range_name_the_flag() {
    for (args, want) in [
        (&["app", "nn", "--cores", "0"][..], &["--cores", "0"][..]),
        (&["app", "nn", "--layers", "8"], &["--layers", "2..=8"]),
        (&["app", "nn", "--layers", "8,0,4"], &["--layers", "0"]),
        (&["app", "nn", "--layers", "8,300,4"], &["--layers", "1..=256"]),
        (&["app", "nn", "--inferences", "0"], &["--inferences"]),
        (&["app", "nn-edges", "--edges", "0"], &["--edges", "1..=256"]),
        (&["app", "nn-edges", "--rounds", "0"], &["--rounds"]),
        (&["app", "othello", "--depth", "4", "--local-depth", "4"], &["--local-depth", "--depth 4"]),
        (&["app", "othello", "--cores", "17"], &["--cores", "1..=16"]),
        (&["app", "othello", "--nodes", "0"], &["--nodes"]),
        (&["app", "dotprod", "--words", "100000"], &["--words", "1..=256"]),
        (&["app", "dotprod", "--requests", "0"], &["--requests"]),
        (&["app", "nbody", "--bodies", "0"], &["--bodies"]),
        (&["app", "nbody-root", "--senders", "0"], &["--senders"]),
        (&["app", "nbody-root", "--per-sender", "0"], &["--per-sender"]),
    ] {
        refused_saying(args, want);
    }
}

/// An IceNIC node has one core, so `--nic icenic` alone runs (README.md's
/// `nanopu.app("nn", nic="icenic")` refused the nanoPU's default of 4 cores); more is
/// refused naming `--cores`.
#[test]
fn on_icenic_the_cores_default_to_one() {
    for args in
        [&["app", "nn", "--nic", "icenic"][..], &["app", "othello", "--nic", "icenic", "--depth", "3"]]
    {
        let o = nanopu(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = nanopu(&["app", "othello", "--nic", "icenic", "--depth", "3", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["workers"], 4, "4 nodes of one core: {doc}");
    let o = nanopu(&["app", "othello", "--depth", "3", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["workers"], 16, "the nanoPU's 4 nodes of 4 cores: {doc}");
    refused_saying(&["app", "nn", "--nic", "icenic", "--cores", "4"], &["--cores", "one core each"]);
}

#[test]
fn the_edges_of_app_ranges_run() {
    for args in [
        &["app", "nn-edges", "--edges", "256", "--rounds", "1"][..],
        &["app", "nn", "--layers", "2,1", "--inferences", "1"],
        &["app", "dotprod", "--words", "256", "--requests", "2"],
        &["app", "othello", "--depth", "2", "--local-depth", "1", "--cores", "16", "--nodes", "1"],
    ] {
        let o = nanopu(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn bench_flags_a_benchmark_does_not_read_are_errors() {
    for (args, want) in [
        (&["bench", "loopback-latency", "--nic", "icenic"][..], &["--nic", "loopback-latency", "--app"][..]),
        (&["bench", "rx", "--nic", "icenic"], &["--nic", "rx"]),
        (&["bench", "iss", "--app", "stream"], &["--app", "iss", "--engine"]),
        (&["bench", "network", "--engine", "fast"], &["--engine", "network"]),
        (&["bench", "iss", "--engine", "spike"], &["spike", "interp", "fast", "jit"]),
        (&["bench", "erpc-request-rate", "--nic", "icenic"], &["--nic", "erpc-request-rate", "--requests"]),
        (&["bench", "context-switch", "--requests", "5"], &["--requests", "context-switch"]),
        (&["bench", "nic-throughput", "--app", "stream"], &["--app", "nic-throughput", "--nic"]),
        (&["bench", "loopback-latency", "--network-only"], &["--network-only"]),
        (&["bench", "rx", "--threads", "2"], &["--threads", "rx"]),
        (&["bench", "rx", "--nodes", "512"], &["--nodes", "rx"]),
        (&["bench", "host-sort", "--threads", "2"], &["--threads", "host-sort"]),
        (&["sort", "--memory", "full"], &["full", "simple", "prototype"]),
        (&["run", "experiments/incast/ndp-drop.toml", "--memory", "simple"], &["--memory", "[node] memory"]),
        (&["run", "experiments/incast/ndp-drop.toml", "--engine", "fast"], &["--engine", "[node] engine"]),
        (&["bench", "network", "--nodes", "100"], &["100", "multiple of 16"]),
        (&["bench", "network", "--nodes", "2048"], &["2048", "32 to 1,024"]),
        (&["bench", "network", "--nodes", "256", "--shuffle", "16"], &["--shuffle", "--network-only"]),
        (&["bench", "rx", "--shuffle", "16"], &["--shuffle", "rx"]),
        (&["bench", "loopback-latency", "--requests", "0"], &["--requests", "0"]),
    ] {
        refused_saying(args, want);
    }
    let o = nanopu(&["bench", "loopback-latency", "--app", "stream", "--requests", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn sort_flags_of_another_algorithm_are_errors() {
    for (args, want) in [
        (
            &["sort", "--algorithm", "millisort", "--buckets", "4"][..],
            &["--buckets", "nanosort", "millisort"][..],
        ),
        (&["sort", "--algorithm", "local", "--cores", "1", "--fan-in", "4"], &["--fan-in", "local"]),
        (&["sort", "--algorithm", "mergemin", "--median-trees", "combined"], &["--median-trees", "mergemin"]),
        (&["sort", "--reduction", "2"], &["--reduction", "millisort", "nanosort"]),
        (&["sort", "--algorithm", "millisort", "--incast", "2"], &["--incast", "mergemin"]),
        (&["sort", "--algorithm", "millisort", "--pivot-select", "per-b"], &["--pivot-select", "nanosort"]),
    ] {
        refused_saying(args, want);
    }
    for args in [
        &["sort", "--algorithm", "millisort", "--cores", "16", "--reduction", "2"][..],
        &["sort", "--algorithm", "mergemin", "--cores", "16", "--incast", "2"],
        &["sort", "--cores", "16", "--buckets", "4", "--fan-in", "4", "--median-trees", "combined"],
        &["sort", "--cores", "16", "--buckets", "4", "--pivot-select", "per-b"],
    ] {
        let o = nanopu(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn negative_numbers_reach_the_check_that_names_the_flag() {
    let elf = "sw/build/tests/rv64m.elf";
    for (args, want) in [
        (&["run", elf, "--cores", "-1"][..], &["--cores", "-1"][..]),
        (&["run", elf, "--mac-ns", "-1"], &["--mac-ns", "not a time"]),
        (&["run", elf, "--until-us", "-3"], &["--until-us", "not a time"]),
        (&["run", elf, "--send", "-5:0:1"], &["--send -5:0:1"]),
        (
            &["run", "sw/build/apps/ice_loopback.elf", "--nic", "icenic", "--send-frame", "-5:64"],
            &["--send-frame"],
        ),
        (&["sort", "--drop-prob", "-0.1"], &["--drop-prob", "-0.1"]),
        (
            &["run", "sw/build/apps/ice_loopback.elf", "--nic", "icenic", "--ice-queue-depth", "0"],
            &["--ice-queue-depth 0", "1 to 255"],
        ),
        (
            &["run", "sw/build/apps/ice_loopback.elf", "--nic", "icenic", "--ice-buffer-flits", "100"],
            &["--ice-buffer-flits 100", "190"],
        ),
        (&["run", elf, "--ice-queue-depth", "64"], &["--ice-queue-depth", "--nic icenic"]),
        (
            &["run", "sw/build/apps/ice_loopback.elf", "--nic", "icenic", "--ice-rate-limit", "0/1/8"],
            &["--ice-rate-limit 0/1/8", "INC/PERIOD/SIZE"],
        ),
        (&["run", elf, "--ice-rate-limit", "1/1/8"], &["--ice-rate-limit", "--nic icenic"]),
        (&["sort", "--switch-latency-ns", "-5"], &["--switch-latency-ns", "not a time"]),
    ] {
        refused_saying(args, want);
    }
}

#[test]
fn a_capture_point_outside_the_topology_is_named_as_written() {
    let args = ["run", "experiments/incast/ndp-trim.toml", "--pcap-at", "node:999", "--pcap", "/dev/null"];
    refused_saying(&args, &["--pcap-at", "node:999 does not exist", "nodes: 81"]);
}

/// The NIC's settings are checked by the one check of `config::nic` whether they come as
/// flags of one node, of `--nodes N` or as a file's keys, naming the flag: the largest cycle
/// count and a timer period shorter than a context switch were accepted on one node, and with
/// `--nodes` the error named a line of a TOML file the user never wrote.
#[test]
fn nic_flags_are_checked_once_naming_the_flag() {
    let stream = "sw/build/apps/stream.elf";
    let huge = "18446744073709551615";
    for (args, want) in [
        (&["run", stream, "--cores", "1", "--msg-cycles", huge][..], &["--msg-cycles", "one hour"][..]),
        (&["run", stream, "--idle-cycles", huge], &["--idle-cycles", "one hour"]),
        (
            &["run", "sw/build/apps/alltoall.elf", "--nodes", "2", "--msg-cycles", huge, "--", "2"],
            &["--msg-cycles"],
        ),
        (&["run", stream, "--sched-timer-us", "1e-9"], &["--sched-timer-us", "context switch"]),
        (&["run", stream, "--sched-timer-us", "4e9"], &["--sched-timer-us", "one hour"]),
        (&["run", stream, "--max-msg-bytes", "8192"], &["--max-msg-bytes", "--tx-queue-bytes"]),
        (&["run", stream, "--jbsq-n", "0"], &["--jbsq-n", "1..="]),
    ] {
        refused_saying(args, want);
        assert!(!stderr(&nanopu(args)).contains("TOML"), "{args:?}");
    }
}

/// `--threads 0` is refused by every command that takes it, by the one check
/// (`run::positive_threads`).
#[test]
fn bench_network_refuses_zero_threads() {
    refused_saying(
        &["bench", "network", "--threads", "0"],
        &["--threads", "'0' is not a number of host threads"],
    );
}

/// Sort flags that the run built would not read are errors: spines of a star, a tail delay
/// on no messages.
#[test]
fn sort_flags_the_topology_or_tail_does_not_read_are_errors() {
    refused_saying(
        &["sort", "--cores", "64", "--spines", "5"],
        &["--spines does not apply: 16 nodes fit one switch (--nodes-per-leaf 64)"],
    );
    refused_saying(
        &["sort", "--tail-delay-us", "5"],
        &["--tail-delay-us: delays no message while --tail-fraction (the share of messages delayed) is 0"],
    );
}
