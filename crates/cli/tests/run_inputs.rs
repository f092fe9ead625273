//! `nanopu run` never ignores an input or loses a result silently: flags that do not apply
//! are errors, bad numbers are refused before the run, what is in flight when the last core
//! exits is still delivered, and a run cut off by its time limit still reports and writes
//! everything, marked incomplete (docs/reliability.md).

use std::process::{Command, Output};

fn nanopu(args: &[&str]) -> Output {
    nanopu_env(args, &[])
}

fn nanopu_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut c = Command::new(env!("CARGO_BIN_EXE_nanopu"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.args(args).current_dir(root).output().expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

/// Runs `args`, which must be refused: exit status 2 and an error that contains `want`;
/// returns what it said.
fn refused(args: &[&str], want: &str) -> String {
    let o = nanopu(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    stderr(&o)
}

#[test]
fn a_reply_sent_just_before_the_last_exit_still_reaches_the_host() {
    let o = nanopu(&["run", "sw/build/apps/echo_once.elf", "--cores", "1", "--send", "1000:0:5,6", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["outcome"], "exited");
    let got = v["host_received"].as_array().unwrap();
    assert_eq!(got.len(), 1, "{v}");
    assert_eq!(got[0]["words"], serde_json::json!(["0x5", "0x6"]));
    assert!(v["simulated_ns"].as_f64().unwrap() >= got[0]["time_ns"].as_f64().unwrap());
}

#[test]
fn send_chooses_the_host_source_context_and_the_echo_answers_it() {
    let o = nanopu(&[
        "run",
        "sw/build/apps/echo_once.elf",
        "--cores",
        "1",
        "--send",
        "1000:0/0x77:5,6",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = &json(&o)["host_received"][0];
    assert_eq!((got["dst_context"].as_u64(), got["words"][1].as_str()), (Some(0x77), Some("0x6")), "{got}");
    refused(
        &["run", "sw/build/apps/echo_once.elf", "--send", "1000:0/70000:5"],
        "SRC_CONTEXT is not 0..=65535",
    );
}

/// The reply's last word, from `--send` from context SRC through the echo.
fn echoed_last_word(src: &str, extra: &[&str]) -> u64 {
    let spec = format!("1000:0/{src}:5,6");
    let mut args = vec!["run", "sw/build/apps/echo_once.elf", "--cores", "1", "--send", &spec, "--json"];
    args.extend(extra);
    let o = nanopu(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let w = json(&o)["host_received"][0]["words"][1].as_str().unwrap().to_string();
    u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn latency_stamps_for_context_0x1234_as_the_prototype_wrote_them() {
    let w = echoed_last_word("0x1234", &[]);
    let (now, latency) = (w >> 32, w & 0xffff_ffff);
    // Sent at 1 us = 3,200 cycles; it arrives a few hundred cycles later.
    let arrived = now - latency;
    assert!((3200..4000).contains(&arrived), "arrival stamp {arrived}");
    assert!((1..2000).contains(&latency), "latency {latency} cycles");
    assert_eq!(echoed_last_word("0x1234", &["--latency-stamps", "off"]), 6);
    assert_eq!(echoed_last_word("0x1233", &[]), 6);
}

#[test]
fn a_cluster_ends_when_its_last_core_does() {
    let one = json(&nanopu(&["run", "sw/build/apps/sort1024.elf", "--cores", "1", "--json"]));
    let two = json(&nanopu(&["run", "sw/build/apps/sort1024.elf", "--nodes", "2", "--cores", "1", "--json"]));
    let (t1, t2) = (one["simulated_ns"].as_f64().unwrap(), two["simulated_ns"].as_f64().unwrap());
    assert!((t1 - t2).abs() < 1.0, "one node {t1} ns, two nodes {t2} ns");
    let m = json(&nanopu(&["run", "sw/build/tests/rv64m.elf", "--nodes", "2", "--json"]));
    assert!(m["simulated_ns"].as_f64().unwrap() > 1000.0, "{m}");
}

#[test]
fn the_time_limit_reports_everything_marked_incomplete() {
    let o =
        nanopu(&["run", "sw/build/tests/err_spin.elf", "--cores", "2", "--max-cycles", "20000", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json(&o);
    assert_eq!((v["outcome"].as_str(), v["complete"].as_bool()), (Some("time limit"), Some(false)));
    let problems = v["problems"].to_string();
    assert!(
        problems.contains("20000 cycles; raise it with --max-cycles") && problems.contains("core 1: pc 0x"),
        "{problems}"
    );
    assert_eq!(v["cores"].as_array().unwrap().len(), 2);
}

#[test]
fn a_cluster_cut_off_by_max_us_still_writes_its_files() {
    let dir = std::env::temp_dir().join(format!("nanopu-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("m.csv");
    let args =
        ["run", "sw/build/tests/err_spin.elf", "--nodes", "2", "--cores", "1", "--max-cycles", "20000"];
    let o = nanopu(&[&args[..], &["--messages", csv.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("outcome: time limit"));
    assert!(std::fs::read_to_string(&csv).unwrap().starts_with("src,src_context,dst"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn flags_that_do_not_apply_are_errors() {
    refused(&["run", "sw/build/tests/rv64m.elf", "--nodes", "2", "--send", "1:0:1@2"], "not a node here");
    refused(&["run", "sw/build/tests/rv64m.elf", "--nodes", "2", "--mac-ns", "5"], "--mac-ns");
    refused(
        &["run", "sw/build/tests/rv64m.elf", "--pcap", "x.pcap"],
        "--pcap does not apply to a single node",
    );
    refused(&["run", "sw/build/tests/rv64m.elf", "--messages", "x.csv"], "--messages");
    refused(&["run", "experiments/incast/ndp-trim.toml", "--max-cycles", "5"], "max_us");
    refused(&["run", "experiments/incast/ndp-trim.toml", "--cores", "2"], "[node] cores");
    refused(&["run", "sw/build/tests/rv64m.elf", "--send", "1:0:1@1"], "a single node is node 0");
    refused(&["run", "sw/build/tests/rv64m.elf", "--nodes", "2", "--core-selection", "bogus"], "bogus");
    refused(&["run", "sw/build/tests/rv64m.elf", "--nodes", "2", "--jbsq-n", "0"], "jbsq-n");
}

#[test]
fn flags_given_with_nodes_reach_the_nodes() {
    let o = nanopu(&["run", "sw/build/tests/nic_multicore.elf", "--nodes", "2", "--cores", "2", "--json"]);
    assert_eq!(json(&o)["cores"], 4, "{}", stderr(&o));
}

#[test]
fn bad_numbers_are_refused_before_the_run() {
    let rv = "sw/build/tests/rv64m.elf";
    refused(&["run", rv, "--mac-ns=-5"], "--mac-ns");
    refused(&["run", rv, "--mac-ns", "1e30"], "--mac-ns");
    refused(&["run", rv, "--send", "nan:0:1"], "AT_NS");
    refused(&["run", rv, "--max-cycles", "18446744073709551615"], "--max-cycles");
    refused(&["run", "experiments/incast/ndp-trim.toml", "--threads", "0"], "host threads");
    let o = nanopu_env(&["run", rv], &[("NANOPU_THREADS", "abc")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("NANOPU_THREADS"), "{}", stderr(&o));
}

#[test]
fn a_send_longer_than_a_message_may_be_is_refused() {
    let words = vec!["1"; 8192].join(",");
    let e = refused(
        &["run", "sw/build/apps/loopback.elf", "--send", &format!("0:0:{words}")],
        "max_msg_bytes = 2048",
    );
    assert!(e.contains("--send 0:0:1,1,") && e.contains("... (16387 characters)") && e.len() < 300, "{e}");
}

#[test]
fn requests_nobody_takes_fail_the_run() {
    let o = nanopu(&["run", "sw/build/apps/loopback.elf", "--send", "1000:7:1"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("context 7 were never taken"), "{}", stderr(&o));
}

#[test]
fn an_unwritable_output_fails_before_the_run() {
    let o = nanopu(&[
        "run",
        "experiments/incast/ndp-trim.toml",
        "--messages",
        "/nonexistent/dir/m.csv",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/dir/m.csv") && o.stdout.is_empty(), "{}", stderr(&o));
}

#[test]
fn a_server_that_never_exits_runs_until_the_time_asked_for() {
    let o = nanopu(&["run", "sw/build/tests/err_spin.elf", "--cores", "1", "--until-us", "5", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!((j["outcome"].as_str(), j["complete"].as_bool()), (Some("deadline"), Some(true)));
    assert_eq!(j["simulated_ns"], 5000.0, "the core does not run past the end");
    refused(&["run", "experiments/incast/ndp-trim.toml", "--until-us", "5"], "--until-us");
}

/// Times over one hour are refused naming the flag (`config::check::time_ns`), however
/// they were given.
#[test]
fn times_over_an_hour_are_refused_naming_the_flag() {
    let stream = "sw/build/apps/stream.elf";
    refused(
        &["run", stream, "--mac-ns", "4e12"],
        "--mac-ns: 4000000000000 ns is more than the limit of one hour",
    );
    let e = refused(&["run", stream, "--send", "4e12:0:1"], "--send 4e12:0:1: AT_NS: ");
    assert!(e.contains("limit of one hour"), "{e}");
    refused(&["run", "sw/build/tests/err_spin.elf", "--until-us", "4e9"], "--until-us: ");
}

/// One cycle limit, the docs' two hours (2.304e13 cycles at 3.2 GHz), named as given.
#[test]
fn the_cycle_limit_is_one_check_naming_the_flag() {
    let rv = "sw/build/tests/rv64m.elf";
    let want = "--max-cycles: 18446744073709551615 is not within 1..=23040000000000 (two hours of cycles)";
    refused(&["run", rv, "--max-cycles", "18446744073709551615"], want);
    refused(&["run", rv, "--max-cycles", "30000000000000"], "--max-cycles: 30000000000000 is not within");
    refused(&["run", rv, "--nodes", "2", "--max-cycles", "30000000000000"], "--max-cycles: ");
}

/// `--nodes N` takes the single node's range: between one hour's cycles and two hours'
/// (1.152e13..=2.304e13), once refused naming `max_us`, a key the user never wrote.
#[test]
fn a_cluster_takes_the_cycle_limit_a_single_node_takes() {
    for cycles in ["11520000000001", "23040000000000"] {
        let args = ["run", "sw/build/apps/alltoall.elf", "--nodes", "2", "--max-cycles", cycles, "--", "2"];
        let o = nanopu(&args);
        assert_eq!(o.status.code(), Some(0), "{cycles}: {}", stderr(&o));
    }
    let over = ["run", "sw/build/apps/alltoall.elf", "--nodes", "2", "--max-cycles", "23040000000001"];
    let e = refused(&over, "--max-cycles: 23040000000001 is not within");
    assert!(!e.contains("max_us"), "{e}");
}

/// NIC flags that the node's NIC does not read are errors, not ignored.
#[test]
fn nic_flags_that_do_not_apply_are_errors() {
    let rv = "sw/build/tests/rv64m.elf";
    let rss = ["--jbsq-n", "7", "--core-selection", "rss"];
    let want = "--jbsq-n: JBSQ's bound does not apply when --core-selection is rss";
    refused(&[&["run", rv][..], &rss].concat(), want);
    refused(&[&["run", rv, "--nodes", "2"][..], &rss].concat(), want);
    let ice = "sw/build/apps/ice_loopback.elf";
    refused(&["run", ice, "--nic", "icenic", "--jbsq-n", "5"], "--jbsq-n: the nanoPU NIC's core selection");
    refused(
        &["run", ice, "--nic", "icenic", "--msg-cycles", "5"],
        "--msg-cycles: an option of the nanoPU NIC's",
    );
}

/// A reversed node range names itself, not the empty list it would make.
#[test]
fn a_reversed_partition_range_is_named() {
    let e = refused(
        &["run", "experiments/incast/ndp-trim.toml", "--partition", "3-0@1-20"],
        "--partition 3-0@1-20: \"3-0\" is a reversed range",
    );
    assert!(!e.contains("faults.nodes"), "{e}");
}

/// No RISC-V PC is odd: an ELF entry point with bit 0 set is refused at load, naming e_entry.
#[test]
fn an_odd_entry_point_is_refused() {
    let mut elf =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../sw/build/tests/rv64m.elf")).unwrap();
    let entry = u64::from_le_bytes(elf[24..32].try_into().unwrap()) + 1;
    elf[24..32].copy_from_slice(&entry.to_le_bytes());
    let path = std::env::temp_dir().join(format!("nanopu-odd-entry-{}.elf", std::process::id()));
    std::fs::write(&path, &elf).unwrap();
    let e = refused(&["run", path.to_str().unwrap()], &format!("e_entry {entry:#x} is odd"));
    std::fs::remove_file(&path).unwrap();
    assert!(!e.contains("panicked"), "{e}");
}
