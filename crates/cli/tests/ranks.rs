//! One simulation across MPI ranks (docs/parallel.md, "Across MPI ranks"): `nanopu sort`
//! under `mpirun` gives what the threaded run gives, byte for byte, but the host's own
//! figures (wall time, threads). Needs Open MPI's `mpirun` (the setup script installs it);
//! built only with the `mpi` feature, which `make test` turns on.
#![cfg(feature = "mpi")]

use serde_json::Value;
use std::process::{Command, Output};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// 256 cores on 64 nodes, 16 to a leaf: 4 leaves, so 4 partitions.
const SORT: [&str; 10] =
    ["sort", "--json", "--cores", "256", "--buckets", "4", "--nodes-per-leaf", "16", "--keys-per-core", "16"];

/// `nanopu ARGS` on `ranks` MPI ranks of one thread each (more ranks than host cores:
/// oversubscribed, and a waiting rank yields its core; as root in CI's container).
fn on_ranks(ranks: usize, args: &[&str]) -> Output {
    let np = ranks.to_string();
    let yields = ["--mca", "mpi_yield_when_idle", "1"];
    let mpi = ["--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-np", &np];
    let o = Command::new("mpirun")
        .args(mpi)
        .args(yields)
        .arg(env!("CARGO_BIN_EXE_nanopu"))
        .args(args)
        .args(["--threads", "1"])
        .current_dir(ROOT)
        .output();
    o.expect("mpirun runs (Open MPI: scripts/setup-toolchain installs it)")
}

/// `nanopu ARGS` in one process on `threads` threads.
fn threaded(threads: usize, args: &[&str]) -> Output {
    let t = threads.to_string();
    let mut c = Command::new(env!("CARGO_BIN_EXE_nanopu"));
    c.args(args).args(["--threads", &t]).current_dir(ROOT).output().expect("nanopu runs")
}

/// The summary of a run that passed, without what depends on the host (`json`).
fn summary(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    json(o)
}

/// The summary without what depends on the host: its wall time and threads per process.
fn json(o: &Output) -> Value {
    let err = String::from_utf8_lossy(&o.stderr);
    let mut v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let m = v.as_object_mut().expect("an object");
    assert!(m.remove("wall_seconds").is_some() && m.remove("threads").is_some(), "{v}");
    v
}

/// The summary and the stages CSV (`--stages`) of the sort on `ranks` ranks are the
/// threaded run's; the threaded run's summary.
fn same_on_ranks(ranks: usize, extra: &[&str]) -> Value {
    same_run_on_ranks(ranks, &SORT, extra)
}

/// `same_on_ranks` for the sort `sort` (4 partitions).
fn same_run_on_ranks(ranks: usize, sort: &[&str], extra: &[&str]) -> Value {
    let csv = |who: &str| temp_file(&format!("{ranks}-{who}.csv"));
    let (a, b) = (csv("threads"), csv("ranks"));
    let (pa, pb) = (a.display().to_string(), b.display().to_string());
    let base: Vec<&str> = sort.iter().chain(extra).copied().collect();
    let args_a: Vec<&str> = base.iter().copied().chain(["--stages", pa.as_str()]).collect();
    let args_b: Vec<&str> = base.iter().copied().chain(["--stages", pb.as_str()]).collect();
    let (one, many) = (summary(&threaded(2, &args_a)), summary(&on_ranks(ranks, &args_b)));
    assert_eq!(one["valid"], true, "{one}");
    assert_eq!(one["partitions"], 4, "{one}");
    assert_eq!(serde_json::to_string_pretty(&one).unwrap(), serde_json::to_string_pretty(&many).unwrap());
    let (x, y) = (std::fs::read(&a).expect("threaded stages"), std::fs::read(&b).expect("ranks' stages"));
    assert!(x.len() > 1000 && x == y, "the stages CSVs differ");
    let _ = (std::fs::remove_file(a), std::fs::remove_file(b));
    one
}

/// A file of its own in the temporary directory (the tests run at once, in one process).
fn temp_file(name: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("nanopu-ranks-{}-{n}-{name}", std::process::id()))
}

/// The sort time of a run's summary, ns.
fn total_ns(v: &Value) -> f64 {
    v["figures"]["total_ns"].as_f64().expect("a sort time")
}

#[test]
fn a_sort_on_two_ranks_is_the_threaded_sort_byte_for_byte() {
    same_on_ranks(2, &[]);
}

#[test]
fn a_lossy_sort_on_three_uneven_ranks_is_the_threaded_sort_byte_for_byte() {
    // 4 partitions on 3 ranks (2, 1, 1); 1% of packets dropped on every link: NDP trims and
    // resends across leaves, so retransmissions cross ranks too.
    same_on_ranks(3, &["--drop-prob", "0.01"]);
}

/// MergeMin's merge tree with an incast of 8 on the 4 leaves of `SORT`.
const INCAST: [&str; 12] = [
    "sort",
    "--json",
    "--algorithm",
    "mergemin",
    "--incast",
    "8",
    "--cores",
    "256",
    "--nodes-per-leaf",
    "16",
    "--keys-per-core",
    "16",
];

#[test]
fn a_lossy_incast_on_two_ranks_is_the_threaded_one_byte_for_byte() {
    // 2% of packets lost on every link: the run waits for NDP's resends, so it takes far
    // longer than without loss (which is what shows the loss happened).
    let lossy = same_run_on_ranks(2, &INCAST, &["--drop-prob", "0.02"]);
    let clean = summary(&threaded(2, &INCAST));
    assert!(total_ns(&lossy) > 2.0 * total_ns(&clean), "{} vs {}", total_ns(&lossy), total_ns(&clean));
}

#[test]
fn a_sort_with_a_leaf_cut_off_on_two_ranks_is_the_threaded_sort_byte_for_byte() {
    // Leaf 0 (nodes 0-15, rank 0's) cut off from every other node from 3 to 12 us
    // (docs/faults.md): the packets crossing the cut are lost and resent after it heals.
    let cut = same_on_ranks(2, &["--partition", "0-15@3-12"]);
    let clean = summary(&threaded(2, &SORT));
    assert!(total_ns(&cut) > total_ns(&clean) + 9000.0, "{} vs {}", total_ns(&cut), total_ns(&clean));
}

#[test]
fn a_sort_with_a_crash_ends_alike_on_two_ranks() {
    // Node 40 (rank 1's) crashes at 10 us: the sort cannot finish and stops at its time
    // limit; as for any incomplete run the problems are listed per rank (docs/parallel.md,
    // "Outputs"), so only the first, how the run stopped, is compared.
    let args: Vec<&str> = SORT.iter().chain(&["--max-us", "200", "--crash", "40@10"]).copied().collect();
    same_incomplete(&args);
}

/// The run `args` stops incomplete (exit status 2) alike threaded and on 2 ranks: the same
/// summary but the problems after the first, the incompleteness reported once.
fn same_incomplete(args: &[&str]) {
    let (one, many) = (threaded(2, args), on_ranks(2, args));
    assert_eq!((one.status.code(), many.status.code()), (Some(2), Some(2)));
    let err = String::from_utf8_lossy(&many.stderr);
    assert_eq!(err.matches("the sort is incomplete").count(), 1, "{err}");
    let (mut a, mut b) = (json(&one), json(&many));
    assert_eq!(a["problems"][0], b["problems"][0]);
    assert!(a["problems"][0].as_str().unwrap().starts_with("incomplete: stopped at the time limit"), "{a}");
    a.as_object_mut().unwrap().remove("problems");
    b.as_object_mut().unwrap().remove("problems");
    assert_eq!(a["complete"], false);
    assert_eq!(serde_json::to_string_pretty(&a).unwrap(), serde_json::to_string_pretty(&b).unwrap());
}

#[test]
fn a_sort_cut_short_by_its_time_limit_ends_alike_on_two_ranks() {
    // Stopped at the same window: what the sorters left, the figures and the counts are the
    // same.
    let args: Vec<&str> = SORT.iter().chain(&["--max-us", "20"]).copied().collect();
    same_incomplete(&args);
}

#[test]
fn more_ranks_than_partitions_are_refused_once_naming_both() {
    let o = on_ranks(5, &SORT);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert_eq!(err.matches("5 MPI ranks, but the cluster has only 4 partition(s)").count(), 1, "{err}");
}

#[test]
fn a_trace_with_message_flows_on_two_ranks_is_the_threaded_trace_byte_for_byte() {
    // A message's send is logged on its sender's rank, its delivery on its receiver's:
    // rank 0 joins them (`Simulation::gathered_message_records`).
    let (a, b) = (temp_file("threads.json"), temp_file("ranks.json"));
    let (pa, pb) = (a.display().to_string(), b.display().to_string());
    let args = |file: &str| -> Vec<String> {
        let t = ["--trace", file, "--trace-messages"];
        SORT.iter().chain(&t).map(|s| s.to_string()).collect()
    };
    let (x, y) = (args(&pa), args(&pb));
    let (x, y): (Vec<&str>, Vec<&str>) =
        (x.iter().map(String::as_str).collect(), y.iter().map(String::as_str).collect());
    let (one, many) = (summary(&threaded(2, &x)), summary(&on_ranks(2, &y)));
    assert_eq!(one, many);
    let (ta, tb) = (std::fs::read(&a).expect("threaded trace"), std::fs::read(&b).expect("ranks' trace"));
    let flows = String::from_utf8_lossy(&ta).matches("\"ph\":\"f\"").count();
    assert!(
        flows > 100 && ta == tb,
        "the traces differ ({flows} flows): {} and {} bytes",
        ta.len(),
        tb.len()
    );
    let _ = (std::fs::remove_file(a), std::fs::remove_file(b));
}

#[test]
fn a_capture_across_two_ranks_is_the_threaded_capture_byte_for_byte() {
    // Spine 6's port 0 (4 leaves, then 16 spines; the spine is partition (6 - 4) % 4 = 2,
    // rank 1's) leads to leaf 0 (rank 0's): what the spine sends there is captured on rank
    // 1, what leaf 0 sends it on rank 0, and rank 0 merges them by time.
    let (a, b) = (temp_file("threads.pcapng"), temp_file("ranks.pcapng"));
    let (pa, pb) = (a.display().to_string(), b.display().to_string());
    let args = |p: &'static str, file: &str| -> Vec<String> {
        let at = ["--pcap", file, "--pcap-at", p];
        SORT.iter().chain(&at).map(|s| s.to_string()).collect()
    };
    let (x, y) = (args("switch:6:0", &pa), args("switch:6:0", &pb));
    let (x, y): (Vec<&str>, Vec<&str>) =
        (x.iter().map(String::as_str).collect(), y.iter().map(String::as_str).collect());
    let (one, many) = (summary(&threaded(2, &x)), summary(&on_ranks(2, &y)));
    assert_eq!(one, many);
    let (pa, pb) = (std::fs::read(&a).expect("threaded capture"), std::fs::read(&b).expect("ranks' capture"));
    assert!(pa.len() > 10_000 && pa == pb, "the captures differ: {} and {} bytes", pa.len(), pb.len());
    let _ = (std::fs::remove_file(a), std::fs::remove_file(b));
}

#[test]
fn several_seeds_on_two_ranks_are_the_threaded_seeds() {
    // Rank 0 validates each seed and tells the others whether to go on.
    let args: Vec<&str> = SORT.iter().chain(&["--seeds", "2"]).copied().collect();
    let strip = |o: &Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut v: Value = serde_json::from_slice(&o.stdout).expect("json");
        for r in v["runs"].as_array_mut().expect("runs") {
            let m = r.as_object_mut().expect("a run");
            assert!(m.remove("wall_seconds").is_some() && m.remove("threads").is_some());
        }
        v
    };
    let (one, many) = (strip(&threaded(2, &args)), strip(&on_ranks(2, &args)));
    assert_eq!(one["summary"]["seeds"], 2, "{one}");
    assert_eq!(serde_json::to_string_pretty(&one).unwrap(), serde_json::to_string_pretty(&many).unwrap());
}

/// A cluster file: all-to-all among 32 nodes on 4 leaves of 8 (4 partitions), 1% loss on
/// every link, leaf 0 cut off from the others from 1 to 4 us and leaf 2's uplink to spine 1
/// losing 20%; `programs` are its `[[program]]` entries, `extra` more keys at the end.
fn cluster_file(name: &str, programs: &[(&str, &str)], extra: &str) -> std::path::PathBuf {
    let apps = format!("{ROOT}/sw/build");
    let mut toml = String::from(
        "seed = 3\nmax_us = 500.0\ntransport = \"ndp\"\n\
         [topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 8\nleaves = 4\nspines = 2\n\
         [link]\ndrop_prob = 0.01\n[switch]\nlatency_ns = 263.0\n[node]\ncores = 4\n\
         [[faults]]\nkind = \"partition\"\nnodes = [0, 1, 2, 3, 4, 5, 6, 7]\nfrom_us = 1.0\nto_us = 4.0\n\
         [[faults]]\nlink = \"leaf:2:up:1\"\ndrop_prob = 0.2\n",
    );
    for (nodes, elf) in programs {
        toml +=
            &format!("[[program]]\nnodes = \"{nodes}\"\nelf = \"{apps}/{elf}\"\nargs = [\"32\", \"1024\"]\n");
    }
    let path = temp_file(name);
    std::fs::write(&path, toml + extra).expect("a temporary file");
    path
}

const ALLTOALL: [(&str, &str); 1] = [("all", "apps/alltoall.elf")];

#[test]
fn a_cluster_run_with_faults_on_two_ranks_is_the_threaded_run_byte_for_byte() {
    // Summary, message and port CSVs, trace, and a capture at spine 0 (switch 4, rank 0's)
    // toward leaf 2 (rank 1's): every file's content crosses ranks.
    let cfg = cluster_file("alltoall.toml", &ALLTOALL, "");
    let files = ["pcap", "messages", "port-stats", "trace"];
    let run = |who: &str, with: &dyn Fn(&[&str]) -> Output| {
        let paths: Vec<String> =
            files.iter().map(|f| temp_file(&format!("{who}-{f}")).display().to_string()).collect();
        let mut args: Vec<String> =
            ["run", cfg.to_str().unwrap(), "--json", "--pcap-at", "switch:4:2"].map(String::from).to_vec();
        files.iter().zip(&paths).for_each(|(f, p)| args.extend([format!("--{f}"), p.clone()]));
        let o = with(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let read: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).expect("an output file")).collect();
        paths.iter().for_each(|p| drop(std::fs::remove_file(p)));
        (o.stdout, read)
    };
    let (one, files_one) = run("threads", &|a| threaded(2, a));
    let (many, files_many) = run("ranks", &|a| on_ranks(2, a));
    let v: Value = serde_json::from_slice(&one).expect("a summary");
    assert_eq!((v["complete"].clone(), v["nodes"].clone()), (Value::Bool(true), Value::from(32)), "{v}");
    assert!(
        v["faults"][0]["dropped"].as_u64() > Some(0) && v["transport"]["retransmissions"].as_u64() > Some(0)
    );
    assert_eq!(String::from_utf8_lossy(&one), String::from_utf8_lossy(&many));
    for (f, (a, b)) in files.iter().zip(files_one.iter().zip(&files_many)) {
        assert!(a.len() > 1000 && a == b, "--{f}: {} and {} bytes", a.len(), b.len());
    }
    let _ = std::fs::remove_file(cfg);
}

#[test]
fn a_cluster_run_with_a_crash_ends_alike_on_two_ranks() {
    // Node 20 (rank 1's) crashes at 30 us: the others wait for its messages until the time
    // limit. The crash is reported in rank 1's words; the problems are per rank
    // (docs/parallel.md, "Outputs"), so only how the run stopped is compared.
    let cfg =
        cluster_file("crash.toml", &ALLTOALL, "[[faults]]\nkind = \"crash\"\nnode = 20\nat_us = 30.0\n");
    let args = ["run", cfg.to_str().unwrap(), "--json"];
    let (one, many) = (threaded(2, &args), on_ranks(2, &args));
    assert_eq!((one.status.code(), many.status.code()), (Some(2), Some(2)));
    let parse = |o: &Output| serde_json::from_slice::<Value>(&o.stdout).expect("a summary");
    let (mut a, mut b) = (parse(&one), parse(&many));
    assert_eq!(a["faults"][2]["fault"], "node 20 crashed at 30.000 us", "{a}");
    assert_eq!(a["problems"][0], b["problems"][0]);
    assert!(a["problems"][0].as_str().unwrap().starts_with("incomplete: stopped at the time limit"), "{a}");
    a.as_object_mut().unwrap().remove("problems");
    b.as_object_mut().unwrap().remove("problems");
    assert_eq!(serde_json::to_string_pretty(&a).unwrap(), serde_json::to_string_pretty(&b).unwrap());
    let _ = std::fs::remove_file(cfg);
}

#[test]
fn a_program_error_on_rank_1_is_reported_once_naming_the_rank_and_the_node() {
    let programs =
        [("0-19", "apps/alltoall.elf"), ("21-31", "apps/alltoall.elf"), ("20", "tests/err_bad_access.elf")];
    let cfg = cluster_file("error.toml", &programs, "");
    let o = on_ranks(2, &["run", cfg.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("nanopu: error: rank 1: node 20, core 1, pc 0x").count(), 1, "{err}");
    assert_eq!(err.matches("load access fault").count(), 1, "{err}");
    let _ = std::fs::remove_file(cfg);
}

#[test]
fn a_dctcp_incast_with_ecn_marking_on_two_ranks_is_the_threaded_run_byte_for_byte() {
    // Two DCTCP incasts across two leaves (two partitions, one a rank): nodes 4 and 5 into
    // node 0, nodes 1 and 2 into node 3, through switches that mark CE past 8,000 bytes,
    // so that each rank's leaf marks and the totals are gathered across ranks.
    let apps = format!("{ROOT}/sw/build/apps");
    let prog = |nodes: &str, args: &str| {
        format!("[[program]]\nnodes = \"{nodes}\"\nelf = \"{apps}/tcp_flows_dctcp.elf\"\nnic = \"icenic\"\nargs = [{args}]\n")
    };
    let toml = String::from(
        "max_us = 100000.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 3\nleaves = 2\nspines = 1\n\
         [link]\nrate_gbps = 10\n[switch]\necn_k_bytes = 8000\n[node]\ncores = 1\n",
    ) + &prog("0", "\"recv\", \"5001\", \"2\", \"200000\", \"nocheck\"")
        + &prog("3", "\"recv\", \"5001\", \"2\", \"200000\", \"nocheck\"")
        + &prog("1-2", "\"send:167772165\", \"5001\", \"1\", \"200000\", \"nocheck\"")
        + &prog("4-5", "\"send:167772162\", \"5001\", \"1\", \"200000\", \"nocheck\"");
    let cfg = temp_file("dctcp.toml");
    std::fs::write(&cfg, toml).expect("a temporary file");
    let args = ["run", cfg.to_str().unwrap(), "--json"];
    let (one, many) = (threaded(2, &args), on_ranks(2, &args));
    assert!(one.status.success(), "{}", String::from_utf8_lossy(&one.stderr));
    let v: Value = serde_json::from_slice(&one.stdout).expect("a summary");
    assert_eq!(v["complete"], Value::Bool(true), "{v}");
    assert!(v["fabric"]["ecn_marks"].as_u64() > Some(0), "{}", v["fabric"]);
    assert_eq!(String::from_utf8_lossy(&one.stdout), String::from_utf8_lossy(&many.stdout));
    let _ = std::fs::remove_file(cfg);
}
