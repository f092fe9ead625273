//! The `nanopu` command as a user meets it: exit statuses, JSON, error messages.

use std::process::{Command, Output};

fn nanopu(args: &[&str]) -> Output {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    Command::new(env!("CARGO_BIN_EXE_nanopu")).args(args).current_dir(root).output().expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn passing_program_exits_zero_with_json_summary() {
    let o = nanopu(&["run", "sw/build/tests/rv64m.elf", "--cores", "1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"], "exited");
    assert_eq!(v["cores"][0]["exit_code"], 0);
    assert!(v["cores"][0]["instructions"].as_u64().unwrap() > 1000);
    assert!(v["cores"][0]["console"].as_str().unwrap().contains("PASS"));
}

#[test]
fn missing_program_is_named() {
    let o = nanopu(&["run", "no/such/program.elf"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no/such/program.elf"), "{}", stderr(&o));
}

#[test]
fn illegal_instruction_exits_two_with_core_and_pc() {
    let o = nanopu(&["run", "sw/build/tests/err_illegal_fp.elf", "--cores", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("illegal instruction") && e.contains("core 0") && e.contains("pc 0x"), "{e}");
}

#[test]
fn server_without_traffic_reports_where_cores_wait() {
    let o = nanopu(&["run", "sw/build/apps/loopback.elf"]);
    assert_eq!(o.status.code(), Some(3));
    let e = stderr(&o);
    assert!(e.contains("did not exit") && e.contains("core 3") && e.contains("netRX"), "{e}");
}

#[test]
fn program_arguments_follow_mac_and_ip() {
    let o = nanopu(&["run", "sw/build/apps/rxcount.elf", "--json", "--", "0"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
}

#[test]
fn unknown_benchmark_is_an_error() {
    let o = nanopu(&["bench", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown benchmark 'nope'"));
}

#[test]
fn test_host_sends_from_the_command_line() {
    let o = nanopu(&[
        "run",
        "sw/build/apps/stream.elf",
        "--json",
        "--send",
        "2000:0:1,0x10",
        "--send",
        "3000:0:41",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let got = v["host_received"].as_array().unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["words"], serde_json::json!(["0x2", "0x11"]));
    assert_eq!(got[1]["words"], serde_json::json!(["0x2a"]));
    assert!(got[0]["time_ns"].as_f64().unwrap() > 2000.0);
}

#[test]
fn malformed_send_names_the_field() {
    let o = nanopu(&["run", "sw/build/apps/stream.elf", "--send", "2000:x:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("CONTEXT"), "{}", stderr(&o));
}

#[test]
fn cluster_run_writes_summary_pcap_messages_and_port_stats() {
    let dir = std::env::temp_dir().join(format!("nanopu-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (pcap, msgs, ports) = (dir.join("n0.pcap"), dir.join("m.csv"), dir.join("p.csv"));
    let o = nanopu(&[
        "run",
        "experiments/incast/ndp-trim.toml",
        "--json",
        "--pcap",
        pcap.to_str().unwrap(),
        "--messages",
        msgs.to_str().unwrap(),
        "--port-stats",
        ports.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["messages_delivered"], 80);
    assert_eq!(v["fabric"]["trims"], 5);
    let frames = nanopu_net::pcap::read_pcap(&std::fs::read(&pcap).unwrap()).unwrap();
    assert!(frames.len() >= 80, "node 0 received 80 data packets and sent ACKs");
    assert_eq!(std::fs::read_to_string(&msgs).unwrap().lines().count(), 81);
    assert!(std::fs::read_to_string(&ports).unwrap().contains("node 0"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cluster_config_errors_name_the_key() {
    let dir = std::env::temp_dir().join(format!("nanopu-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("bad.toml");
    std::fs::write(&cfg, "[topology]\nkind = \"star\"\nnodes = 2\n[link]\nrate = 5\n[[program]]\nnodes = \"all\"\nelf = \"x.elf\"\n").unwrap();
    let o = nanopu(&["run", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("rate"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn several_nodes_from_one_elf() {
    let o = nanopu(&[
        "run",
        "sw/build/apps/alltoall.elf",
        "--nodes",
        "8",
        "--cores",
        "2",
        "--json",
        "--",
        "8",
        "512",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["nodes"].as_u64(), v["messages_delivered"].as_u64()), (Some(8), Some(56)));
}

/// The profile-guided build's training (`scripts/pgo-train`) runs on this binary: a command
/// or file it names that changed would otherwise show only as `make build` falling back to
/// the plain build.
#[test]
fn pgo_training_runs() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let o = Command::new(format!("{root}/scripts/pgo-train"))
        .arg(env!("CARGO_BIN_EXE_nanopu"))
        .current_dir(root)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
}
