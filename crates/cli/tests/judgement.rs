//! One judgement of a run (docs/reliability.md): what makes `nanopu` exit non-zero is what
//! it prints on stderr, what `--json` lists as `problems` (with `complete` false) and what
//! marks the run's files; for one node, a cluster, a sort and a load sweep alike.

use crate::common;

use common::{nanopu, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A directory of this test's own, emptied when it ends.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("nanopu-judgement-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// A program of `sw/build/apps`, by its absolute path (for configuration files).
fn app(name: &str) -> String {
    format!("{}/../../sw/build/apps/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The `--json` summary of a run, checked to agree with its exit status and stderr: the
/// same problems, one `nanopu: ` line each, `complete` exactly when there are none.
fn judged_alike(o: &Output) -> Value {
    let doc: Value = serde_json::from_slice(&o.stdout).expect("a JSON summary");
    let problems: Vec<String> =
        doc["problems"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect();
    let said: Vec<String> =
        stderr(o).lines().filter_map(|l| l.strip_prefix("nanopu: ")).map(String::from).collect();
    assert_eq!(said, problems, "stderr and --json list the same problems");
    assert_eq!(doc["complete"], problems.is_empty(), "{doc}");
    assert_eq!(o.status.code(), doc["exit_status"].as_i64().map(|c| c as i32), "{}", stderr(o));
    doc
}

fn lists(doc: &Value, text: &str) -> bool {
    doc["problems"].as_array().unwrap().iter().any(|p| p.as_str().unwrap().contains(text))
}

/// Reliability2 item 9: a cluster gone quiescent with messages held for a context nobody
/// registered exits 3 naming it, as a single node does (it exited 1, complete, silent).
#[test]
fn a_cluster_holding_messages_nobody_takes_exits_3_naming_them() {
    let d = Dir::new("held");
    let (all, idle) = (app("alltoall.elf"), app("idle.elf"));
    let toml = format!(
        "max_us = 500.0\n[topology]\nkind = \"star\"\nnodes = 4\n\
         [[program]]\nnodes = \"0-1\"\nelf = \"{all}\"\nargs = [\"4\"]\n\
         [[program]]\nnodes = \"3\"\nelf = \"{all}\"\nargs = [\"4\"]\n\
         [[program]]\nnodes = \"2\"\nelf = \"{idle}\"\n"
    );
    std::fs::write(d.file("c.toml"), toml).unwrap();
    let o = nanopu(&["run", &d.file("c.toml"), "--json"]);
    let doc = judged_alike(&o);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        lists(&doc, "node 2: 3 message(s) for context 0 were never taken: no core registered context 0"),
        "{doc}"
    );
    assert!(lists(&doc, "the program did not exit; nothing is left to simulate"), "{doc}");
}

/// Reliability2 item 10: a single node whose program exits leaving 1,000 messages for a
/// context no core registered exits 3 naming the context (it exited 0).
#[test]
fn messages_for_an_unregistered_context_fail_a_single_node_run() {
    let o = nanopu(&[
        "run",
        "sw/build/apps/sendto.elf",
        "--cores",
        "1",
        "--json",
        "--",
        "0",
        "0",
        "0",
        "0",
        "777",
        "1000",
    ]);
    let doc = judged_alike(&o);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        lists(&doc, "1000 message(s) for context 777 were never taken: no core registered context 777"),
        "{doc}"
    );
}

/// Reliability2 item 30: a message `--send` gave to a context no core registered fails the
/// run in `--json` as on stderr (it said complete, no problem, and exited 3).
#[test]
fn a_sent_message_nobody_takes_is_a_problem_in_json_too() {
    let o = nanopu(&["run", "sw/build/apps/stream.elf", "--send", "1000:9:1", "--until-us", "10", "--json"]);
    let doc = judged_alike(&o);
    assert_eq!(o.status.code(), Some(3));
    assert!(lists(&doc, "1 message(s) for context 9 were never taken"), "{doc}");
}

/// Reliability2 item 11: a single node's messages to an address that is neither the node's
/// nor the test host's are dropped and reported, as a cluster's fabric drops them (the host
/// listed them as received).
#[test]
fn a_single_nodes_messages_to_unknown_addresses_are_dropped_and_reported() {
    for (ip, shown) in [
        (["10", "0", "0", "99"], "10.0.0.99"),
        (["192", "168", "1", "1"], "192.168.1.1"),
        (["255"; 4], "255.255.255.255"),
    ] {
        let mut args = vec!["run", "sw/build/apps/sendto.elf", "--cores", "1", "--json", "--"];
        args.extend(ip);
        args.extend(["0", "10"]);
        let o = nanopu(&args);
        let doc = judged_alike(&o);
        assert_eq!(o.status.code(), Some(2), "{shown}");
        assert_eq!(doc["host_received"], serde_json::json!([]), "{shown}: the host takes none");
        let want = format!("10 messages were dropped for want of a route: their destination ({shown}");
        assert!(lists(&doc, &want), "{doc}");
    }
}

/// With `--host-sniffs` the test host takes what the node sends whatever its address, as
/// the prototype's tester sniffs the node's port (its INT and postcard programs send to
/// 10.1.1.0 and 0.0.0.0): nothing is dropped, the run is complete.
#[test]
fn a_sniffing_test_host_takes_every_message_of_a_single_node() {
    let args = [
        "run",
        "sw/build/apps/sendto.elf",
        "--cores",
        "1",
        "--json",
        "--host-sniffs",
        "--",
        "10",
        "1",
        "1",
        "0",
        "0",
        "10",
    ];
    let o = nanopu(&args);
    let doc = judged_alike(&o);
    assert_eq!(o.status.code(), Some(0), "{doc}");
    assert_eq!(doc["host_received"].as_array().map(Vec::len), Some(10), "{doc}");
    let o = nanopu(&["run", "x.toml", "--host-sniffs"]);
    assert!(stderr(&o).contains("--host-sniffs"), "refused on a cluster, naming it: {}", stderr(&o));
}

/// Reliability2 item 15: at 90% loss every message of a 16-node all-to-all is delivered,
/// though some acknowledgements never reach their senders: no message is reported lost
/// ("212 being sent ... never delivered").
#[test]
fn delivered_messages_whose_acknowledgements_were_lost_are_delivered() {
    let d = Dir::new("loss");
    let toml = format!(
        "seed = 7\nmax_us = 20000.0\ntransport = \"ndp\"\n[topology]\nkind = \"star\"\nnodes = 16\n\
         [link]\ndrop_prob = 0.9\n[[program]]\nnodes = \"all\"\nelf = \"{}\"\nargs = [\"16\", \"1024\"]\n",
        app("alltoall.elf")
    );
    std::fs::write(d.file("c.toml"), toml).unwrap();
    let o = nanopu(&["run", &d.file("c.toml"), "--json"]);
    let doc = judged_alike(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(doc["messages_delivered"], 240);
}

/// The last line of a file.
fn last_line(path: &str) -> String {
    std::fs::read_to_string(path).unwrap().lines().last().unwrap_or("").to_string()
}

fn trace_meta(path: &str) -> Value {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("valid JSON");
    doc["otherData"].clone()
}

/// Reliability2 item 14: an incomplete run's files say so: a CSV's last line, a trace's
/// `otherData`, a capture's sidecar; a complete run's carry no mark (and a stale sidecar
/// goes).
#[test]
fn an_incomplete_cluster_runs_files_are_marked() {
    let d = Dir::new("files");
    let (m, t, p) = (d.file("m.csv"), d.file("t.json"), d.file("p.pcap"));
    let side = format!("{p}.incomplete");
    let run = |limit: &str| {
        let args = ["run", "sw/build/apps/alltoall.elf", "--nodes", "4", "--max-cycles", limit];
        let files = ["--messages", &m, "--trace", &t, "--pcap", &p, "--json", "--", "4"];
        nanopu(&[&args[..], &files[..]].concat())
    };
    let doc = judged_alike(&run("2000"));
    assert_eq!(doc["complete"], false);
    let first = doc["problems"][0].as_str().unwrap().strip_prefix("incomplete: ").unwrap().to_string();
    assert!(std::fs::read_to_string(&m).unwrap().contains(&format!("\n# incomplete: {first}\n")));
    assert!(last_line(&m).starts_with("# incomplete: not exited: node 3"), "{}", last_line(&m));
    assert_eq!(trace_meta(&t)["problems"], doc["problems"]);
    assert_eq!(trace_meta(&t)["complete"], false);
    assert!(std::fs::read_to_string(&side).unwrap().starts_with(&first), "the sidecar lists the problems");
    let doc = judged_alike(&run("100000000"));
    assert_eq!(doc["complete"], true);
    assert!(!last_line(&m).starts_with('#'), "{}", last_line(&m));
    assert_eq!(trace_meta(&t)["complete"], true);
    assert!(!Path::new(&side).exists(), "a complete run removes a stale sidecar");
}

/// Reliability2 item 14: a sort's stage table and trace are marked like a run's.
#[test]
fn an_incomplete_sorts_files_are_marked() {
    let d = Dir::new("sort");
    let (s, t) = (d.file("s.csv"), d.file("t.json"));
    let o = nanopu(&["sort", "--cores", "64", "--max-us", "1", "--stages", &s, "--trace", &t, "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(last_line(&s).starts_with("# incomplete: "), "{}", last_line(&s));
    assert!(std::fs::read_to_string(&s).unwrap().contains("# incomplete: stopped at the time limit"));
    assert_eq!(trace_meta(&t)["complete"], false);
}

/// A load file for `service.elf` whose requests go to `contexts`.
fn load_file(d: &Dir, contexts: &str) -> String {
    let text = format!(
        "[server]\nelf = \"{}\"\nargs = [\"jbsq\"]\ncores = 2\n[load]\nrates_mrps = [1.0, 2.0]\n\
         requests = 200\ndrain_us = 100.0\n[[load.class]]\nname = \"a\"\nfraction = 1.0\n\
         service_ns = 500.0\ncontexts = {contexts}\n",
        app("service.elf")
    );
    std::fs::write(d.file("load.toml"), text).unwrap();
    d.file("load.toml")
}

/// Reliability2 items 13 and 33: `nanopu load --json` prints one object, the sweep's and
/// each point's `complete` and `problems` in it; a sweep that fails writes its files marked.
#[test]
fn a_load_sweep_prints_one_object_and_marks_a_failed_sweeps_files() {
    let d = Dir::new("load");
    let o = nanopu(&["load", &load_file(&d, "[0]"), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(
        (doc["complete"].clone(), doc["problems"].clone()),
        (Value::Bool(true), serde_json::json!([]))
    );
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert!(points.iter().all(|p| p["complete"] == true && p["problems"] == serde_json::json!([])));
    assert_eq!(doc["rows"][0]["class"], "all");
    let (out, records) = (d.file("o.csv"), d.file("r.csv"));
    let o = nanopu(&["load", &load_file(&d, "[7]"), "--json", "--out", &out, "--records", &records]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(doc["complete"], false);
    let why = doc["problems"][0].as_str().unwrap();
    assert!(why.contains("offered load 1 Mrps") && why.contains("context 7 were never taken"), "{why}");
    assert_eq!(doc["points"].as_array().unwrap().len(), 1, "the sweep stopped at the failing point");
    assert_eq!(doc["points"][0]["complete"], false);
    assert!(stderr(&o).contains(why), "{}", stderr(&o));
    for f in [&out, &records] {
        assert_eq!(last_line(f), format!("# incomplete: {why}"), "{f}");
    }
}
