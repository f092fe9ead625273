//! The `nanopu` command as a user meets it: exit statuses, JSON, error messages.

use crate::common;

use common::{nanopu, stderr};
use std::process::{Command, Output};

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
    assert!(
        stderr(&o).contains("invalid value 'nope'")
            && stderr(&o).contains("possible values: loopback-latency")
    );
}

/// An IceNIC node echoes the test host's frame (docs/models/icenic.md); frames and nanoPU
/// messages each go only to the NIC that takes them.
#[test]
fn an_icenic_node_echoes_a_frame_from_the_command_line() {
    let app = "sw/build/apps/ice_loopback.elf";
    let o = nanopu(&["run", app, "--nic", "icenic", "--cores", "1", "--send-frame", "2000:64", "--", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("icenic: 1 frames sent, 1 received, 0 dropped"), "{out}");
    assert!(out.contains("a frame of 64 bytes: 02000a000001"), "the reply goes to the host's MAC: {out}");
    let o = nanopu(&["run", app, "--send-frame", "2000:64"]);
    assert!(stderr(&o).contains("frames go to an IceNIC node"), "{}", stderr(&o));
    let o = nanopu(&["run", app, "--nic", "icenic", "--send", "2000:0:1"]);
    assert!(stderr(&o).contains("takes raw frames"), "{}", stderr(&o));
}

/// `--send-frame AT_NS:0xHEX` sends the frame its bytes spell: the same UDP frame as
/// `2000:64` gets the same reply; an odd number of digits is refused by name.
#[test]
fn an_icenic_node_echoes_a_frame_given_as_hex() {
    use nanopu_cluster::net::frame::{udp_frame, Ends};
    let (host, node) = (nanopu_cluster::node::boot::node_mac(0) - 1, nanopu_cluster::node::boot::node_mac(0));
    let src = Ends { mac: host, ip: nanopu_sim::packet::HOST_IP, port: 7000 };
    let dst = Ends { mac: node, ip: nanopu_cluster::node::boot::node_ip(0), port: 9000 };
    let payload: Vec<u8> = (0..22).collect();
    let hex: String = udp_frame(src, dst, &payload).iter().map(|b| format!("{b:02x}")).collect();
    let app = "sw/build/apps/ice_loopback.elf";
    let run = |frame: &str| {
        nanopu(&["run", app, "--nic", "icenic", "--cores", "1", "--send-frame", frame, "--", "1"])
    };
    let (by_size, by_bytes) = (run("2000:64"), run(&format!("2000:0x{hex}")));
    assert!(by_bytes.status.success(), "{}", stderr(&by_bytes));
    assert_eq!(String::from_utf8_lossy(&by_size.stdout), String::from_utf8_lossy(&by_bytes.stdout));
    assert!(stderr(&run("2000:0xabc")).contains("--send-frame 2000:0xabc"), "an odd number of digits");
}

/// `--nic icenic --nodes N`: a cluster of IceNIC nodes whose frames cross the switch
/// (docs/models/icenic.md "Clusters"); a cluster file sets each program's NIC itself.
#[test]
fn icenic_nodes_form_a_cluster_from_the_command_line() {
    let app = "sw/build/apps/ice_pingpong.elf";
    let o = nanopu(&["run", app, "--nic", "icenic", "--nodes", "2", "--cores", "1", "--", "5", "64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("icenic: 2 nodes, 10 frames sent, 10 received"), "{out}");
    assert!(out.contains("5 rounds of 64-byte frames, round trip"), "{out}");
    let o = nanopu(&["run", "experiments/alltoall/leafspine-homa.toml", "--nic", "icenic"]);
    assert!(stderr(&o).contains("[[program]] nic sets it"), "{}", stderr(&o));
}

/// The PCIe-attached variant (docs/models/icenic.md): runs with --nic icenic, refused on
/// the nanoPU NIC and with a negative latency.
#[test]
fn pcie_ns_is_for_icenic_nodes_only() {
    let app = "sw/build/apps/ice_loopback.elf";
    let o = nanopu(&[
        "run",
        app,
        "--nic",
        "icenic",
        "--pcie-ns",
        "250",
        "--cores",
        "1",
        "--send-frame",
        "2000:64",
        "--",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("icenic: 1 frames sent, 1 received"));
    let o = nanopu(&["run", app, "--pcie-ns", "250"]);
    assert!(
        !o.status.success() && stderr(&o).contains("only an IceNIC node has a PCIe-attached variant"),
        "{}",
        stderr(&o)
    );
    let o = nanopu(&["run", app, "--nic", "icenic", "--pcie-ns=-1"]);
    assert!(!o.status.success() && stderr(&o).contains("pcie_ns"), "{}", stderr(&o));
}

/// In a cluster every frame of a round trip crosses PCIe on both nodes: at least a DMA
/// read (a round trip) and a DMA write (one way) per hop, so 2 x 3 x pcie_ns more; and the
/// key is refused on nanoPU nodes (--nodes builds the cluster file's `pcie_ns` key).
#[test]
fn pcie_ns_in_a_cluster() {
    let round_trip = |pcie: &str| {
        let a = ["run", "sw/build/apps/ice_pingpong.elf", "--nic", "icenic", "--nodes", "2", "--cores", "1"];
        let o = nanopu(&[&a[..], &["--pcie-ns", pcie, "--", "1", "64"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let at = out.find("round trip ").expect("node 0 reports its round trip") + "round trip ".len();
        out[at..].split(' ').next().unwrap().parse::<u64>().unwrap()
    };
    let (chip, pcie) = (round_trip("0"), round_trip("250"));
    assert!(pcie >= chip + 2 * 3 * 800, "{chip} cycles on chip, {pcie} behind PCIe (250 ns = 800 cycles)");
    let o = nanopu(&["run", "sw/build/apps/pingpong.elf", "--nodes", "2", "--pcie-ns", "250", "--", "8"]);
    assert!(!o.status.success() && stderr(&o).contains("add --nic icenic"), "{}", stderr(&o));
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

// ---- nanopu sort and nanopu load: refused inputs, failed servers, closed pipes ------------

/// A configuration file in a directory of its own, removed when dropped.
struct TempConfig(std::path::PathBuf);

impl TempConfig {
    fn to_str(&self) -> Option<&str> {
        self.0.to_str()
    }
}

impl Drop for TempConfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().expect("in its directory"));
    }
}

/// A `nanopu load` configuration in a fresh directory: `service.elf` with these arguments,
/// one class to these contexts, 200 requests at 1 Mrps.
fn load_config(name: &str, args: &str, contexts: &str) -> TempConfig {
    let dir = std::env::temp_dir().join(format!("nanopu-load-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let elf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sw/build/apps/service.elf");
    let text = format!(
        "[server]\nelf = \"{elf}\"\nargs = {args}\ncores = 2\n[load]\nrates_mrps = [1.0]\n\
         requests = 200\ndrain_us = 100.0\n[[load.class]]\nname = \"a\"\nfraction = 1.0\n\
         service_ns = 500.0\ncontexts = {contexts}\n"
    );
    let path = dir.join("load.toml");
    std::fs::write(&path, text).unwrap();
    TempConfig(path)
}

/// Exit status 2 and an error containing every one of `want`.
fn fails_saying(o: &Output, want: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(want.iter().all(|w| e.contains(w)), "want {want:?} in: {e}");
}

#[test]
fn sort_seed_ranges_past_the_largest_seed_and_zero_seeds_are_errors() {
    let base = ["sort", "--algorithm", "local", "--cores", "1", "--keys-per-core", "16"];
    let o = nanopu(&[&base[..], &["--seed", "18446744073709551615", "--seeds", "2"]].concat());
    fails_saying(&o, &["--seeds", "largest seed"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("PASS"));
    fails_saying(&nanopu(&[&base[..], &["--seeds", "0"]].concat()), &["--seeds"]);
    let o = nanopu(&[&base[..], &["--seed", "18446744073709551614", "--seeds", "2"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 seeds from 18446744073709551614"));
}

#[test]
fn sort_numbers_out_of_range_name_the_flag() {
    let base = ["sort", "--algorithm", "local", "--cores", "1"];
    for (flag, want) in [
        ("--max-wall-s=-1", "--max-wall-s"),
        ("--max-wall-s=nan", "--max-wall-s"),
        ("--max-us=0", "--max-us"),
        ("--max-us=inf", "--max-us"),
        ("--switch-latency-ns=-5", "--switch-latency-ns"),
        ("--drop-prob=1", "--drop-prob"),
        ("--drop-prob=nan", "--drop-prob"),
        ("--tail-fraction=2", "--tail-fraction"),
        ("--tail-delay-us=1e300", "--tail-delay-us"),
        ("--keys-per-core=1000000", "--keys-per-core"),
        ("--keys-per-core=0", "--keys-per-core"),
        ("--cores-per-node=0", "--cores-per-node"),
        ("--max-msg-bytes=4", "--max-msg-bytes"),
        ("--threads=0", "--threads"),
    ] {
        fails_saying(&nanopu(&[&base[..], &[flag]].concat()), &[want]);
    }
    fails_saying(&nanopu(&["sort", "--cores", "4000000000"]), &["--cores"]);
    fails_saying(&nanopu(&["sort", "--buckets", "5"]), &["--buckets"]);
    fails_saying(&nanopu(&["sort", "--fan-in", "1"]), &["--fan-in"]);
    fails_saying(&nanopu(&["sort", "--cores", "48"]), &["--cores", "power of two"]);
    fails_saying(
        &nanopu(&["sort", "--median-trees", "one"]),
        &["--median-trees", "possible values: independent, combined"],
    );
    fails_saying(
        &nanopu(&["sort", "--pivot-select", "naive"]),
        &["--pivot-select", "possible values: paper, per-b"],
    );
    fails_saying(&nanopu(&["sort", "--algorithm", "millisort", "--reduction", "0"]), &["--reduction"]);
}

#[test]
fn load_rates_and_times_that_cannot_be_simulated_name_the_flag() {
    let cfg = load_config("rates", "[\"jbsq\"]", "[0]");
    let c = cfg.to_str().unwrap();
    fails_saying(&nanopu(&["load", c, "--rates", "1e-9"]), &["rates", "0.000000001"]);
    for rate in ["0", "-1", "nan", "inf"] {
        fails_saying(&nanopu(&["load", c, &format!("--rates={rate}")]), &["--rates"]);
    }
    fails_saying(&nanopu(&["load", c, "--drain-us=-1"]), &["--drain-us", "not a time"]);
    fails_saying(&nanopu(&["load", c, "--drain-us=nan"]), &["--drain-us", "not a time"]);
    fails_saying(&nanopu(&["load", c, "--requests", "0"]), &["--requests"]);
}

#[test]
fn load_fails_when_a_point_gets_no_reply_and_says_why() {
    let c = load_config("usage", "[]", "[0]");
    let o = nanopu(&["load", c.to_str().unwrap()]);
    fails_saying(&o, &["offered load 1 Mrps", "exited with code 2", "usage: service.elf"]);
    let c = load_config("unregistered", "[\"jbsq\"]", "[7]");
    fails_saying(&nanopu(&["load", c.to_str().unwrap()]), &["offered load 1 Mrps", "context 7"]);
    let c = load_config("drain", "[\"jbsq\"]", "[0]");
    let o = nanopu(&["load", c.to_str().unwrap(), "--requests", "1", "--drain-us", "0"]);
    fails_saying(&o, &["offered load 1 Mrps", "none of the 1 requests", "deadline"]);
}

/// A key-value load of `mica.elf` on 2 cores: 300 requests at 1 Mrps, every reply checked.
fn kv_config(name: &str) -> TempConfig {
    let dir = std::env::temp_dir().join(format!("nanopu-load-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let elf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sw/build/apps/mica.elf");
    let text = format!(
        "[server]\nelf = \"{elf}\"\ncores = 2\n[load]\nrates_mrps = [1.0]\nrequests = 300\n\
         drain_us = 100.0\nstart_us = 500.0\n[load.kv]\nitems_per_core = 200\nget_fraction = 0.5\n\
         value_bytes = [8, 64]\nsteering = \"static\"\n"
    );
    let path = dir.join("load.toml");
    std::fs::write(&path, text).unwrap();
    TempConfig(path)
}

#[test]
fn a_key_value_load_reports_gets_and_sets_and_fails_on_lost_requests() {
    let c = kv_config("kv");
    let cost = c.0.with_file_name("cost.csv");
    let o = nanopu(&["load", c.to_str().unwrap(), "--progress", "--cost", cost.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\tget\t") && out.contains("\tset\t"), "{out}");
    assert!(stderr(&o).contains("300 replies checked, 0 wrong, 0 lost"), "{}", stderr(&o));
    let cost = std::fs::read_to_string(cost).unwrap();
    assert!(cost.lines().nth(1).is_some_and(|l| l.starts_with("1,300,")), "{cost}");
    let o = nanopu(&["load", c.to_str().unwrap(), "--drain-us", "0"]);
    fails_saying(&o, &["offered load 1 Mrps", "0 wrong replies and 1 lost requests"]);
}

/// Run with stdout a pipe whose reader is gone (`| head` after it exited).
fn with_stdout_closed(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::process::Stdio;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    // The read end is closed before the child starts, so its first write fails whatever
    // the timing (closing it after the spawn raced with a child that wrote first).
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut c = Command::new(env!("CARGO_BIN_EXE_nanopu"));
    c.args(args).current_dir(root).stdout(writer).stderr(Stdio::piped());
    let o = c.spawn().expect("runs").wait_with_output().expect("waits");
    (o.status, String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A closed stdout ends the command quietly, by SIGPIPE (status 141 in a shell), not
/// with a panic on EPIPE.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let cfg = load_config("pipe", "[\"jbsq\"]", "[0]");
    let runs: [&[&str]; 3] = [
        &["load", cfg.to_str().unwrap(), "--json"],
        &["sort", "--algorithm", "local", "--cores", "1", "--json"],
        &["run", "sw/build/tests/rv64m.elf", "--cores", "1", "--json"],
    ];
    for args in runs {
        let (status, err) = with_stdout_closed(args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(status.signal(), Some(libc::SIGPIPE), "{args:?}: {status:?} {err}");
    }
}

/// Every choice is listed in `--help`, and a run of several seeds prints one JSON document.
#[test]
fn help_lists_the_choices_and_seeds_print_one_json_document() {
    let help = String::from_utf8_lossy(&nanopu(&["sort", "--help"]).stdout).into_owned();
    for choices in
        ["nanosort, millisort, mergemin, local", "uniform, skewed, dup-prefix", "warm, cold", "ndp, homa"]
    {
        assert!(help.contains(&format!("[possible values: {choices}]")), "{choices}: {help}");
    }
    // Every benchmark with what it measures in the long help; all names in the short one.
    let help = String::from_utf8_lossy(&nanopu(&["bench", "--help"]).stdout).into_owned();
    for name in [
        "loopback-latency",
        "rx",
        "network",
        "context-switch",
        "nic-throughput",
        "erpc-request-rate",
        "host-sort",
    ] {
        assert!(help.contains(&format!("- {name}: ")), "{name}: {help}");
    }
    let help = String::from_utf8_lossy(&nanopu(&["bench", "-h"]).stdout).into_owned();
    assert!(
        help.contains("loopback-latency, loopback-throughput, rx, iss, network, context-switch, "),
        "{help}"
    );
    let o = nanopu(&["sort", "--cores", "16", "--seeds", "2", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(2));
    assert_eq!((doc["runs"][0]["seed"].clone(), doc["runs"][1]["seed"].clone()), (1.into(), 2.into()));
    assert_eq!(doc["summary"]["seeds"], 2);
}

/// `nanopu sort --pcap` captures a sort's packets without changing the run.
#[test]
fn a_sort_run_writes_its_capture_and_is_the_same_run() {
    let pcap = std::env::temp_dir().join(format!("nanopu-sort-{}.pcap", std::process::id()));
    let with = nanopu(&["sort", "--cores", "16", "--json", "--pcap", pcap.to_str().unwrap()]);
    assert!(with.status.success(), "{}", stderr(&with));
    let without = nanopu(&["sort", "--cores", "16", "--json"]);
    let total =
        |o: &Output| serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["figures"].clone();
    assert_eq!(total(&with), total(&without));
    let frames = nanopu_net::pcap::read_pcap(&std::fs::read(&pcap).unwrap()).unwrap();
    std::fs::remove_file(&pcap).unwrap();
    assert!(frames.len() > 100, "node 0's packets of a 16-core sort: {}", frames.len());
}

/// `rdma.elf` answers a malformed request with status 3 and serves nothing
/// (docs/apps/rdma.md): a request too short to hold op, tag and address, an unknown op, an
/// unaligned address; a well-formed READ beside them is served.
#[test]
fn rdma_answers_malformed_requests_with_status_3() {
    let sends = ["8000000:0:9", "8001000:0:0x10009,77,8", "8002000:0:0x10001,78,5", "8003000:0:0x10001,79,8"];
    let replies = server_replies("rdma", "9000", &sends, &["1"]);
    assert_eq!(replies[0], w(&["0x300", "0x0"]), "too short: status 3, no op, no tag");
    assert_eq!(replies[1], w(&["0x309", "0x4d"]), "unknown op 9: status 3, its tag");
    assert_eq!(replies[2], w(&["0x301", "0x4e"]), "unaligned address: status 3");
    assert_eq!(&replies[3][..2], &w(&["0x10001", "0x4f"]), "a READ of one word, served");
    assert_eq!(replies.len(), 4);
}

/// `setalg.elf` answers a malformed query with status 3 alone (docs/apps/setalg.md): too
/// short to hold its tag, another op, five words, a word beyond the vocabulary; a well-formed
/// query beside them is answered (words 0 and 1 of the default corpus, seed 1: 999
/// documents, the first 32 sent).
#[test]
fn setalg_answers_malformed_queries_with_status_3() {
    let sends = [
        "5000000:0:0x10001",
        "5001000:0:0x10009,77,5",
        "5002000:0:0x50001,78,1,2,3,4,5",
        "5003000:0:0x10001,79,4096",
        "5004000:0:0x20001,80,0,1",
    ];
    let replies = server_replies("setalg", "6000", &sends, &["1", "2048", "4096", "16"]);
    assert_eq!(replies[0], w(&["0x301", "0x0"]), "too short: status 3, no tag");
    assert_eq!(replies[1], w(&["0x301", "0x4d"]), "op 9: status 3, its tag");
    assert_eq!(replies[2], w(&["0x301", "0x4e"]), "five words: status 3");
    assert_eq!(replies[3], w(&["0x301", "0x4f"]), "word 4096 of 4096: status 3");
    assert_eq!(&replies[4][..3], &w(&["0x200001", "0x50", "0x3e7"]), "999 documents, 32 ids sent");
    assert_eq!((replies[4].len(), replies.len()), (35, 5));
}

#[test]
fn schema_prints_each_kind_and_the_reference_page() {
    let o = nanopu(&["schema", "load"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON document");
    assert_eq!(s["title"], "nanopu load configuration");
    assert!(s["properties"]["server"].is_object());
    let page = nanopu(&["schema", "--markdown"]);
    assert!(String::from_utf8_lossy(&page.stdout).contains("### `[load.kv]`"));
    let bad = nanopu(&["schema", "sort"]);
    assert!(
        !bad.status.success() && stderr(&bad).contains("[possible values: cluster, load, raft, chain]"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn load_csv_quotes_a_class_name_that_needs_it() {
    let cfg = load_config("quoting", "[\"jbsq\"]", "[0]");
    let text = std::fs::read_to_string(&cfg.0).unwrap().replace("name = \"a\"", "name = 'a, \"b\"'");
    std::fs::write(&cfg.0, text).unwrap();
    let records = cfg.0.with_file_name("records.csv");
    let o = nanopu(&["load", cfg.to_str().unwrap(), "--records", records.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(&records).unwrap();
    let first = csv.lines().nth(1).expect("a request");
    assert!(first.starts_with("1,0,\"a, \"\"b\"\"\",0,"), "{first}");
    assert_eq!(csv.lines().count(), 201, "a header and the 200 requests, one line each");
}

/// What a server program (`sw/build/apps/NAME.elf`, one core, these arguments) sent the test
/// host for these `--send`s within `until_us`: each reply's words as hex, its 8-byte start-up
/// message left out.
fn server_replies(name: &str, until_us: &str, sends: &[&str], program_args: &[&str]) -> Vec<Vec<String>> {
    let elf = format!("sw/build/apps/{name}.elf");
    let mut args = vec!["run", &elf, "--cores", "1", "--until-us", until_us, "--json"];
    sends.iter().for_each(|s| args.extend(["--send", s]));
    args.push("--");
    args.extend(program_args);
    let o = nanopu(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let words = |m: &serde_json::Value| {
        m["words"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
    };
    j["host_received"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["len"].as_u64() != Some(8))
        .map(words)
        .collect()
}

/// Hex words as owned strings, to compare with `server_replies`.
fn w(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_cluster_run_writes_a_perfetto_trace_with_its_messages() {
    let dir = std::env::temp_dir().join(format!("nanopu-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("incast.json");
    let p = path.to_str().unwrap();
    let o = nanopu(&["run", "experiments/incast/ndp-trim.toml", "--trace", p, "--trace-messages", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let events = t["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    let names =
        |n: &str| events.iter().filter(|e| e["name"] == "process_name" && e["args"]["name"] == n).count();
    assert_eq!((names("node 0 (10.0.0.2)"), names("network")), (1, 1));
    assert_eq!((count("s"), count("f")), (80, 80), "one flow per delivery of the 80-to-1 incast");
    assert!(count("C") > 0, "the messages-in-flight counter");
    let _ = std::fs::remove_dir_all(&dir);
    let single = nanopu(&["run", "sw/build/apps/loopback.elf", "--trace", p]);
    assert!(!single.status.success() && stderr(&single).contains("--trace does not apply to a single node"));
}

/// `nanopu app ... --nic icenic` runs the program's IceNIC build and checks it as on the
/// nanoPU (docs/apps/paper-apps.md "On IceNIC"); applications that need a cluster refuse it.
#[test]
fn an_app_runs_on_either_nic_and_says_which() {
    let run = |nic: &str| {
        let o = nanopu(&["app", "dotprod", "--words", "8", "--requests", "5", "--nic", nic, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let (nano, ice) = (run("nanopu"), run("icenic"));
    assert_eq!((&nano["nic"], &ice["nic"], &ice["ok"]), (&"nanopu".into(), &"icenic".into(), &true.into()));
    let median = |v: &serde_json::Value| v["latency_ns"]["median"].as_f64().unwrap();
    assert!(median(&ice) > median(&nano), "DMA and registers cost more: {ice} against {nano}");
    let o = nanopu(&["app", "othello", "--nic", "icenic", "--cores", "4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("one core each"), "{}", stderr(&o));
    let o = nanopu(&["app", "nbody-root", "--nic", "icenic"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nanoPU only"), "{}", stderr(&o));
}

/// The eRPC-like benches (docs/apps/erpc.md) run, every echo checked, and the PCIe variant
/// is slower than on chip.
#[test]
fn erpc_benches_run_on_chip_and_behind_pcie() {
    let o = nanopu(&["bench", "erpc-loopback-latency", "--requests", "20", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let median = |pcie: f64, bytes: u64| {
        let r = rows.iter().find(|r| r["pcie_ns"] == pcie && r["msg_bytes"] == bytes).unwrap();
        r["wire_median_ns"].as_f64().unwrap()
    };
    assert!(median(250.0, 64) > median(0.0, 64) + 750.0, "PCIe adds at least three crossings");
    let o = nanopu(&["bench", "nic-throughput", "--nic", "erpc", "--requests", "100", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["loopback"].as_array().unwrap().iter().all(|r| r["mpps"].as_f64().unwrap() > 0.5));
    assert!(v["rx"].is_null() && v["stream"].is_null(), "not measured for the stack");
}

/// `--memory prototype` turns on the prototype's write-backs, the L2's one path and DDR3
/// refresh (docs/models/node.md): the one-core sort, which sweeps 1 MiB of dirty lines,
/// takes longer with them, the same instructions, and `simple` is the default.
#[test]
fn the_prototype_memory_system_is_the_default_and_slows_a_program_that_writes_back() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "sw/build/apps/sort1024.elf", "--cores", "1", "--json"];
        args.extend_from_slice(extra);
        let o = nanopu(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["simulated_ns"].as_f64().unwrap(), v["cores"][0]["instructions"].as_u64().unwrap())
    };
    let (default, simple, prototype) =
        (run(&[]), run(&["--memory", "simple"]), run(&["--memory", "prototype"]));
    assert_eq!(default, prototype);
    assert_eq!(prototype.1, simple.1, "the same program, the same instructions");
    assert!(prototype.0 > simple.0 * 1.05, "{prototype:?} against {simple:?}");
}

#[test]
fn a_cluster_core_that_exits_from_its_trap_handler_is_reported_with_the_fault() {
    let o = nanopu(&["run", "sw/build/tests/err_handler_exits.elf", "--nodes", "2", "--cores", "1"]);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let want = "node 1 core 0: exited with code 7 from its trap handler, entered by load access fault at \
                0x40000000 (outside memory) at pc 0x";
    assert!(out.contains(want), "{out}");
    // The core printed nothing, so its line ends with the fault, not with an empty ": ".
    let line = out.lines().find(|l| l.contains(want)).unwrap();
    assert!(line.trim_start().starts_with("node 1 core 0") && !line.trim_end().ends_with(':'), "{line:?}");
}

/// A partitioned run counts the sorters by stage within its windows, on the threads that
/// run them (`Plan::probe`), and the progress line still shows them: 1,024 nodes on 16
/// leaves, 16 partitions on 2 threads, a few seconds of host time.
#[test]
fn a_partitioned_sorts_progress_line_shows_the_cores_by_stage() {
    let args =
        ["sort", "--cores", "4096", "--cores-per-node", "4", "--keys-per-core", "16", "--buckets", "16"];
    let o = nanopu(&[&args[..], &["--threads", "2", "--progress"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let staged = err.lines().filter(|l| l.contains("cores by stage: ")).count();
    assert!(staged >= 1 && staged >= err.lines().filter(|l| l.contains(" cores done")).count(), "{err}");
}
