//! Programs written the way the nanoPU prototype's are (`sw/compat`: their own start code,
//! argv from the HTIF `getmainvars` call, cores 1.. parked in an endless loop, exit from
//! core 0 through `tohost`, no `__nanopu_abi` symbol) run unmodified: x30/x31 are the
//! network registers because the program uses the LNIC CSRs, the first exit ends the node,
//! and `exit(-1)` is reported as -1 (docs/abi.md).

use crate::common;

use common::nanopu;
use std::process::Output;

fn json(o: &Output) -> serde_json::Value {
    let err = String::from_utf8_lossy(&o.stderr);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

const ECHO: &str = "sw/build/compat/echo.elf";

/// A fresh directory of this test process for the configuration files a test writes.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nanopu-compat-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The absolute path of a program of sw/compat.
fn compat_elf(name: &str) -> String {
    format!("{}/../../sw/build/compat/{name}.elf", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_prototype_style_echo_server_answers_and_its_first_exit_ends_the_node() {
    let o = nanopu(&["run", ECHO, "--send", "1000:0:5,6", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    assert_eq!(j["host_received"][0]["words"], serde_json::json!(["0x6", "0x7"]), "netRX/netTX work");
    assert_eq!(j["cores"][0]["console"], "compat echo on 10.0.0.2\n", "argv from getmainvars");
    assert_eq!(j["cores"][0]["exit_code"], 0, "argv was program, MAC, IP");
    for c in 1..4 {
        assert!(j["cores"][c]["state"].as_str().unwrap().starts_with("stopped: core 0 exited first"), "{j}");
    }
    assert!(j["simulated_ns"].as_f64().unwrap() < 2000.0, "the run ends with core 0: {}", j["simulated_ns"]);
}

#[test]
fn with_each_hart_exiting_on_its_own_the_parked_cores_never_end() {
    let o = nanopu(&["run", ECHO, "--send", "1000:0:5,6", "--exit", "hart", "--max-cycles", "100000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("time limit"));
}

#[test]
fn as_a_plain_program_x30_and_x31_are_ordinary_registers() {
    let o = nanopu(&["run", ECHO, "--cores", "1", "--send", "1000:0:5,6", "--abi", "plain", "--json"]);
    let j = json(&o);
    assert_eq!(j["host_received"], serde_json::json!([]), "nothing was sent: {j}");
}

#[test]
fn exit_minus_one_is_reported_as_minus_one() {
    let o = nanopu(&["run", "sw/build/compat/exit_minus_one.elf", "--json"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(json(&o)["cores"][0]["exit_code"], -1);
}

#[test]
fn hart_0_exits_holding_a_lock_the_others_spin_on_and_the_run_ends() {
    let o = nanopu(&["run", "sw/build/compat/lock_exit.elf", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    assert_eq!(j["cores"][0]["console"], "hart 0 exits holding the lock\n");
    for c in 1..4 {
        assert_eq!(j["cores"][c]["console"], "", "hart {c} never got the lock");
        assert!(j["cores"][c]["state"].as_str().unwrap().starts_with("stopped: core 0 exited first"), "{j}");
    }
}

/// Two threads switched by the NIC's interrupt (`lnic-scheduler.h`), each announcing itself
/// to the host before serving: the load generator counts the announcements apart, every
/// request is answered, and short requests at priority 0 preempt the 4 us ones at priority
/// 1 (without preemption a tenth of the short ones would wait behind a long one).
#[test]
fn a_prototype_style_scheduler_serves_load_after_its_start_up_messages() {
    let (dir, elf) = (scratch("sched"), compat_elf("sched_server"));
    let toml = format!(
        "[server]\nelf = {elf:?}\ncores = 1\n[load]\nrates_mrps = [0.5]\nrequests = 2000\n\
         warmup = 100\ndrain_us = 200.0\nstart_us = 5.0\n\
         [[load.class]]\nname = \"short\"\nfraction = 0.9\nservice_ns = 200.0\ncontexts = [0]\n\
         [[load.class]]\nname = \"long\"\nfraction = 0.1\nservice_ns = 4000.0\ncontexts = [1]\n"
    );
    let cfg = dir.join("sched.toml");
    std::fs::write(&cfg, toml).unwrap();
    let o = nanopu(&["load", cfg.to_str().unwrap(), "--json", "--progress"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("2 start-up message(s)"), "{err}");
    let rows = json(&o)["rows"].clone();
    let row = |class: &str| rows.as_array().unwrap().iter().find(|r| r["class"] == class).unwrap().clone();
    let (short, long) = (row("short"), row("long"));
    assert_eq!(short["replied"], short["measured"]);
    assert_eq!(long["replied"], long["measured"]);
    assert!(short["p99_ns"].as_f64().unwrap() < 1000.0, "short requests preempt long ones: {short}");
    assert!(long["median_ns"].as_f64().unwrap() > 4000.0, "{long}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The host at 10.0.0.1 in a cluster run (on switch 0; the prototype's load generator and
/// sort coordinator): it sends to nodes under every leaf and gets their answers, over the
/// same transport as the nodes, with the same bytes out whatever the number of threads.
#[test]
fn the_host_at_10_0_0_1_talks_to_every_leaf_of_a_cluster() {
    let (dir, elf) = (scratch("host"), compat_elf("echo"));
    let toml = format!(
        "max_us = 20.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 2\nleaves = 3\nspines = 2\n\
         [node]\ncores = 1\n[[program]]\nnodes = \"all\"\nelf = {elf:?}\n"
    );
    let cfg = dir.join("cluster.toml");
    std::fs::write(&cfg, toml).unwrap();
    let sends = ["--send", "1000:0:5,6@5", "--send", "1000:0:7@0", "--send", "1200:0:8@3"];
    let run = |threads: &str| {
        let mut args = vec!["run", cfg.to_str().unwrap(), "--json", "--threads", threads];
        args.extend(sends);
        nanopu(&args)
    };
    let (one, three) = (run("1"), run("3"));
    assert_eq!(one.stdout, three.stdout, "same bytes out on 1 and 3 threads");
    let j = json(&one);
    let got: Vec<(String, serde_json::Value)> = j["host_received"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["src_ip"].to_string(), m["words"].clone()))
        .collect();
    let want = |ip: &str, w: serde_json::Value| (format!("{ip:?}"), w);
    assert!(got.contains(&want("10.0.0.7", serde_json::json!(["0x6", "0x7"]))), "{got:?}");
    assert!(got.contains(&want("10.0.0.2", serde_json::json!(["0x8"]))), "{got:?}");
    assert!(got.contains(&want("10.0.0.5", serde_json::json!(["0x9"]))), "{got:?}");
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(j["fabric"]["drops_no_route"], 0);
    let bad = nanopu(&["run", cfg.to_str().unwrap(), "--send", "1000:0:1@6"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("goes to 10.0.0.8, which is not a node here"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A function that calls itself without end (`recurse.c`, as the prototype's start-up does
/// when GCC turns its byte-loop `memset` into a call to itself): the stack grows down
/// through the program's data and text until the core executes what it stored there. The
/// error leads with the stack overflow, the stack's range and the call that recurses, and
/// blames no extension for the stored words it ran into.
#[test]
fn an_endless_recursion_is_reported_as_a_stack_overflow() {
    let o = nanopu(&["run", "sw/build/compat/recurse.elf", "--cores", "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("stack overflow: sp 0x"), "{err}");
    assert!(err.contains("bytes below the bottom of hart 0's stack [0x"), "{err}");
    assert!(err.contains("the call at pc 0x") && err.contains(" (in descend) recurses without end"), "{err}");
    assert!(err.contains("; the core then ran into: "), "{err}");
    assert!(!err.contains("extension"), "{err}");
}

/// The cycles `loopback.c` printed its message took to come back ("looped back after N
/// cycles").
fn looped_back_cycles(console: &str) -> u64 {
    let n = console.split("looped back after ").nth(1).and_then(|r| r.split(" cycles").next());
    n.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("loopback.c printed {console:?}"))
}

/// A message to the node's own IP (`loopback.c`) leaves by the network port, as the
/// prototype's NIC sends every message (l-nic/lnic `Egress.scala`), and comes back through
/// the switch: in a cluster it crosses the node's link twice (at 100 ns a link, at least
/// 2 x (100 ns + 3.2 ns of an 80-byte packet at 200 Gb/s) = 660 cycles at 3.2 GHz), and the
/// transport and fabric count it. On one node the test host's end of the link sends it
/// back, as the prototype's switch did; a sniffing host (the prototype's tester on a tap)
/// takes it off the wire instead.
#[test]
fn a_message_to_the_nodes_own_ip_goes_out_of_the_port_and_back() {
    let (dir, elf) = (scratch("loopback"), compat_elf("loopback"));
    let toml = format!("max_us = 20.0\n[link]\npropagation_ns = 100.0\n[topology]\nkind = \"star\"\nnodes = 2\n[node]\ncores = 1\n[[program]]\nnodes = \"all\"\nelf = {elf:?}\n");
    let cfg = dir.join("cluster.toml");
    std::fs::write(&cfg, toml).unwrap();
    let o = nanopu(&["run", cfg.to_str().unwrap(), "--json"]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    assert_eq!(j["transport"]["data_packets_sent"], 2, "one packet from each node: {j}");
    assert_eq!(j["fabric"]["packet_hops"], 8, "data and ACK, up to the switch and back: {j}");
    for console in j["consoles"].as_array().unwrap() {
        let cycles = looped_back_cycles(console.as_str().unwrap());
        assert!((660..700).contains(&cycles), "through the switch and back: {cycles} cycles");
    }
    let o = nanopu(&["run", "sw/build/compat/loopback.elf", "--json", "--max-cycles", "1000000"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    looped_back_cycles(j["cores"][0]["console"].as_str().unwrap());
    assert_eq!(j["host_received"], serde_json::json!([]), "the host sent it back: {j}");
    let o =
        nanopu(&["run", "sw/build/compat/loopback.elf", "--json", "--max-cycles", "100000", "--host-sniffs"]);
    let j = json(&o);
    let got = &j["host_received"][0];
    assert_eq!(
        (&got["src_ip"], &got["words"]),
        (&"10.0.0.2".into(), &serde_json::json!(["0x1111", "0x2222"])),
        "{j}"
    );
}

/// A C++ program in the prototype's style (`cxx.cc`, built with sw/cxx's headers and
/// runtime on picolibc): a static constructor run by `__libc_init_array`, a class template
/// configured by static constexpr members, new/delete through a virtual base, placement
/// new. The program checks each and exits with the number of the first that failed.
#[test]
fn a_cxx_program_runs_its_constructors_and_allocates_on_the_heap() {
    for cores in ["1", "4"] {
        let o = nanopu(&["run", "sw/build/compat/cxx.elf", "--json", "--cores", cores]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(json(&o)["cores"][0]["console"], "cxx: ok\n");
    }
}

/// A load of the nanoPU prototype's MICA format (`[load.kv] format = "prototype"`) on a
/// server of ours that speaks it (`sw/compat/mica_format.c`), run as `nanopu load` runs it
/// with `extra` keys in `[server]` and `[load]`: the rows by class, and what it printed
/// (each load's check, with `--progress`).
fn prototype_format_load(name: &str, server: &str, load: &str) -> (serde_json::Value, String) {
    let (dir, elf) = (scratch(name), compat_elf("mica_format"));
    let toml = format!(
        "[server]\nelf = {elf:?}\ncores = 1\n{server}\n[load]\nrates_mrps = [0.5]\nrequests = 400\n\
         drain_us = 100.0\nstart_us = 3000.0\n{load}\n[load.kv]\nformat = \"prototype\"\n\
         get_fraction = 0.5\nkeys = \"uniform\"\n"
    );
    let cfg = dir.join("mica.toml");
    std::fs::write(&cfg, toml).unwrap();
    let o = nanopu(&["load", cfg.to_str().unwrap(), "--json", "--progress"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
    (json(&o)["rows"].clone(), err)
}

fn median(rows: &serde_json::Value, class: &str) -> f64 {
    let row = rows.as_array().unwrap().iter().find(|r| r["class"] == class).unwrap();
    row["median_ns"].as_f64().unwrap()
}

/// Every reply of a prototype-format run is checked (GETs return the key's value words,
/// SETs acknowledge with 1), SETs and GETs alternate, and the server's start-up message
/// is told apart.
#[test]
fn a_server_speaking_the_prototypes_mica_format_has_every_reply_checked() {
    let (rows, err) = prototype_format_load("mica-format", "", "");
    assert!(err.contains("400 replies checked, 0 wrong, 0 lost"), "{err}");
    assert!(err.contains("1 start-up message(s)"), "{err}");
    for class in ["get", "set"] {
        let row = rows.as_array().unwrap().iter().find(|r| r["class"] == class).unwrap();
        assert_eq!((row["measured"].as_u64(), row["replied"].as_u64()), (Some(200), Some(200)), "{row}");
    }
}

/// `link_ns` puts the load generator behind a link of that delay (both ways: twice it on
/// each request's latency), and `reply_at = "first_byte"` stamps a reply when its first
/// byte comes, its serialization earlier: a GET reply of 528 bytes and one 64-byte header
/// at 200 Gb/s is 23.68 ns on the wire.
#[test]
fn link_ns_and_first_byte_stamps_move_the_latency_by_the_link_and_the_reply() {
    let base = median(&prototype_format_load("mica-base", "", "").0, "get");
    let far = median(&prototype_format_load("mica-link", "link_ns = 43.75", "").0, "get");
    let first = median(&prototype_format_load("mica-first", "", "reply_at = \"first_byte\"").0, "get");
    assert!((far - base - 87.5).abs() < 1.0, "{base} -> {far}");
    assert!((base - first - 23.68).abs() < 0.5, "{base} -> {first}");
}

/// Issue 38 item 3: the idle timeout switches out a thread that holds no message, however
/// busy (`sw/compat/rotation_lock.c`: context 0 computes holding a lock), and must switch
/// it back in, as the prototype's NIC keeps rotating, or the thread waiting for the lock
/// spins forever. It then stops once every thread waits on netRX with nothing pending, and
/// a thread the core can no longer switch back to is reported.
#[test]
fn a_thread_switched_out_holding_a_lock_is_switched_back_in() {
    let elf = compat_elf("rotation_lock");
    let o = nanopu(&["run", &elf, "--cores", "1", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let j = json(&o);
    assert_eq!(j["cores"][0]["console"], "rotation: got the lock\n", "{err}");
    // Context 0 held the lock for 12,000 cycles (3.75 us at 3.2 GHz): context 1 got it
    // within two idle timeouts (2 x 3,000 cycles) of its release.
    assert!(j["simulated_ns"].as_f64().unwrap() < 3750.0 + 2000.0, "{}", j["simulated_ns"]);

    let o = nanopu(&["run", &elf, "--cores", "1", "--json", "--", "wait"]);
    let j = json(&o);
    assert_eq!(j["outcome"], "quiescent", "every thread waits: the run ends there");
    assert_eq!(o.status.code(), Some(3), "a program that never exits, as before");
    assert!(j["simulated_ns"].as_f64().unwrap() < 10_000.0, "{}", j["simulated_ns"]);
    let problems = j["problems"].to_string();
    assert!(!problems.contains("switched out"), "{problems}");

    let o = nanopu(&["run", &elf, "--cores", "1", "--json", "--", "masked"]);
    let j = json(&o);
    assert_eq!((j["outcome"].as_str(), o.status.code()), (Some("quiescent"), Some(3)));
    let problems = j["problems"].to_string();
    assert!(problems.contains("core 0: context 0 was switched out with work left"), "{problems}");
}

/// A chain of ours speaking the nanoPU prototype's chain format (`sw/compat/chain_format.c`:
/// a proxy client on node 0, three replicas), driven by `nanopu chain` with `[chain] format
/// = "prototype"` as the prototype's load generator drives its chain: every write checked
/// (answered once, by the tail, for its key), and the proxy's own measurement a row of its
/// own, two hops shorter than the load generator's (each hop at least a link up and down,
/// 2 x 43.75 ns).
#[test]
fn a_chain_speaking_the_prototypes_format_has_every_write_checked() {
    let (dir, elf) = (scratch("chain-format"), compat_elf("chain_format"));
    let toml = format!(
        "[chain]\nelf = {elf:?}\nformat = \"prototype\"\n[load]\nrates_mrps = [1.0]\nrequests = 300\n\
         warmup = 0\ndrain_us = 100.0\nstart_us = 100.0\n[load.kv]\nget_fraction = 0.0\n\
         keys = \"uniform\"\nvalue_bytes = [64, 64]\n"
    );
    let cfg = dir.join("chain.toml");
    std::fs::write(&cfg, toml).unwrap();
    let o = nanopu(&["chain", cfg.to_str().unwrap(), "--json", "--progress"]);
    std::fs::remove_dir_all(&dir).unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("300 replies checked (0 final reads of every written key), 0 wrong, 0 lost"),
        "{err}"
    );
    let rows = json(&o)["rows"].clone();
    let row = |class: &str| rows.as_array().unwrap().iter().find(|r| r["class"] == class).unwrap().clone();
    assert_eq!((row("set")["measured"].as_u64(), row("set")["replied"].as_u64()), (Some(300), Some(300)));
    let (whole, at_proxy) = (median(&rows, "set"), median(&rows, "set at proxy"));
    assert!(at_proxy > 4.0 * 87.5 && whole - at_proxy > 2.0 * 87.5, "{whole} and {at_proxy} at the proxy");
}
