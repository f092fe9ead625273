//! One output convention for every subcommand (README, "Outputs"): `--json` prints one JSON
//! document and only with it; without it, text; lines about the run's progress on stderr
//! only with `--progress`; and never a carriage return where stderr is not a terminal (here
//! a pipe, as in a log file or CI).

use crate::common;

use common::{nanopu, stderr};

/// The document `o` printed, which must be one JSON value.
fn one_document(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not one JSON document ({e})"))
}

#[test]
fn bench_and_app_print_json_only_with_json() {
    for args in [&["bench", "rx"][..], &["app", "nn-edges", "--rounds", "2"]] {
        let text = nanopu(args);
        assert!(text.status.success(), "{args:?}: {}", stderr(&text));
        let out = String::from_utf8_lossy(&text.stdout);
        assert!(!out.trim_start().starts_with('{'), "{args:?} printed JSON without --json:\n{out}");
        let doc = one_document(&nanopu(&[args, &["--json"]].concat()));
        assert!(doc.is_object(), "{args:?}");
    }
}

#[test]
fn chain_takes_json_and_a_seed() {
    let elf = format!("{}/../../sw/build/apps/chain.elf", env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("nanopu-conventions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("chain.toml");
    let text = format!(
        "[chain]\nelf = {elf:?}\n[load]\nrates_mrps = [1.0]\nrequests = 300\nstart_us = 400.0\n\
         drain_us = 100.0\n[load.kv]\nitems_per_core = 200\nget_fraction = 0.5\nvalue_bytes = [8, 64]\n"
    );
    std::fs::write(&cfg, text).unwrap();
    let doc = one_document(&nanopu(&["chain", cfg.to_str().unwrap(), "--json", "--seed", "7"]));
    assert_eq!(doc["seed"], 7);
    let rows = doc["rows"].as_array().expect("rows");
    assert!(rows.iter().any(|r| r["class"] == "get" && r["measured"].as_u64().is_some()), "{doc}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn load_tells_each_point_only_with_progress() {
    let args = ["load", "experiments/core-selection/jbsq.toml", "--requests", "2000", "--rates", "1"];
    let quiet = nanopu(&args);
    assert!(quiet.status.success() && quiet.stderr.is_empty(), "without --progress: {}", stderr(&quiet));
    let told = nanopu(&[&args[..], &["--progress"]].concat());
    assert!(stderr(&told).contains("Mrps offered"), "{}", stderr(&told));
}

/// Where the host time went (docs/profile.md "The main job"), at the end and only with
/// `--progress`: a leaf-spine sort of 4 leaves runs in windows on 2 threads.
#[test]
fn sort_says_where_the_host_time_went_only_with_progress() {
    let args =
        ["sort", "--cores", "256", "--cores-per-node", "4", "--nodes-per-leaf", "16", "--threads", "2"];
    let quiet = nanopu(&args);
    assert!(quiet.status.success() && quiet.stderr.is_empty(), "without --progress: {}", stderr(&quiet));
    let told = stderr(&nanopu(&[&args[..], &["--progress"]].concat()));
    let line = told.lines().find(|l| l.starts_with("host time: build ")).unwrap_or_else(|| panic!("{told}"));
    for part in [
        ", inputs ",
        ", run ",
        "(2 threads busy ",
        "between windows",
        "split and join",
        ", results ",
        ", report ",
    ] {
        assert!(line.contains(part), "{part:?} missing: {line}");
    }
}

#[test]
fn raft_says_how_long_it_ran_only_with_progress() {
    let args = ["raft", "experiments/raft/load.toml", "--requests", "100"];
    let quiet = nanopu(&args);
    assert!(quiet.status.success() && quiet.stderr.is_empty(), "without --progress: {}", stderr(&quiet));
    let told = nanopu(&[&args[..], &["--progress"]].concat());
    assert!(stderr(&told).contains("raft: simulated"), "{}", stderr(&told));
}

#[test]
fn progress_off_a_terminal_is_plain_lines() {
    let args =
        ["run", "sw/build/tests/err_spin.elf", "--cores", "1", "--max-cycles", "300000000", "--progress"];
    let o = nanopu(&args);
    let e = stderr(&o);
    assert!(e.contains("simulated") && e.contains("cores done"), "no progress line shown:\n{e}");
    assert!(!e.contains('\r'), "a carriage return in a file:\n{e:?}");
}
