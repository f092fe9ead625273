//! How runs stop and what they write: an incomplete sort exits 2 saying why, SIGTERM stops
//! a run as Ctrl-C does (summary printed, marked incomplete), and output files are checked
//! before anything is simulated (README, docs/reliability.md).

use crate::common;

use common::{nanopu, stderr};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn an_incomplete_sort_exits_2_saying_why() {
    let o = nanopu(&["sort", "--cores", "64", "--max-us", "1", "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("the sort is incomplete: time limit") && e.contains("--max-us"), "{e}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["complete"], false);
}

#[test]
fn two_outputs_naming_one_file_are_refused_before_running() {
    let dir = std::env::temp_dir().join(format!("nanopu-outputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (x, same) = (dir.join("x.csv"), dir.join(".").join("x.csv"));
    let (x, same) = (x.to_str().unwrap(), same.to_str().unwrap());
    let cases: [&[&str]; 3] = [
        &["run", "experiments/incast/ndp-trim.toml", "--messages", x, "--pcap", same],
        &["sort", "--cores", "16", "--stages", x, "--trace", same],
        &["load", "experiments/core-selection/jbsq.toml", "--out", x, "--records", same],
    ];
    for args in cases {
        let o = nanopu(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("name the same file"), "{args:?}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unwritable_sort_output_is_refused_before_the_sort() {
    let o = nanopu(&["sort", "--cores", "1024", "--stages", "/nonexistent/x.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("nanopu: error: --stages: /nonexistent/x.csv"), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "nothing sorted");
}

/// `nanopu ARGS`, sent `signal` ("TERM", "INT") once it has run `after`; what it wrote.
fn signalled(args: &[&str], signal: &str, after: Duration) -> std::process::Output {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let child = Command::new(env!("CARGO_BIN_EXE_nanopu"))
        .args(args)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    std::thread::sleep(after);
    let pid = child.id().to_string();
    assert!(Command::new("kill").args([&format!("-{signal}"), &pid]).status().expect("kill runs").success());
    child.wait_with_output().expect("ends")
}

/// SIGTERM is what `timeout`, batch schedulers and Ray send: the run stops as on Ctrl-C,
/// with its summary, marked incomplete, exit status 2.
#[test]
fn sigterm_stops_a_sort_with_its_summary() {
    let args = ["sort", "--cores", "4096", "--keys-per-core", "64", "--json"];
    let o = signalled(&args, "TERM", Duration::from_millis(1500));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("the sort is incomplete: interrupted"), "{e}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the summary");
    assert_eq!(doc["complete"], false);
}

/// Ctrl-C stops a load sweep at once (issue 39: it went on to the next offered load and
/// exited 0 half a minute later): no later load is started, the files hold what was
/// measured, the requests never sent are left out, and it exits 2 as an incomplete run does.
#[test]
fn ctrl_c_ends_a_load_sweep_without_starting_the_next_load() {
    let dir = std::env::temp_dir().join(format!("nanopu-load-stop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, records) = (dir.join("o.csv"), dir.join("r.csv"));
    let (o_arg, r_arg) = (out.to_str().unwrap(), records.to_str().unwrap());
    let args = ["load", "experiments/core-selection/jbsq.toml", "--requests", "2000000", "--rates", "1,2"];
    let o = signalled(
        &[&args[..], &["--out", o_arg, "--records", r_arg]].concat(),
        "INT",
        Duration::from_secs(2),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("offered load 1 Mrps: incomplete: stopped early (interrupted)"), "{e}");
    let table = std::fs::read_to_string(&out).unwrap();
    let mut loads = table.lines().skip(1).filter(|l| !l.starts_with("# incomplete: "));
    assert!(loads.all(|l| l.starts_with("1,")), "a later load ran:\n{table}");
    assert!(table.lines().last().unwrap().starts_with("# incomplete: "), "not marked:\n{table}");
    let rows = std::fs::read_to_string(&records).unwrap().lines().count() - 1;
    assert!(rows < 2_000_000, "{rows} requests recorded, the unsent ones too");
    std::fs::remove_dir_all(&dir).ok();
}
