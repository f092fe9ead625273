//! `nanopu chain CONFIG.toml`: a small chain under load with a crashed tail prints a row per
//! request type and the reconfiguration, and writes its files; a bad key is refused by name.

use crate::common;

use common::nanopu;

/// A fresh directory of this test process for the files a test writes.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nanopu-chain-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn config(dir: &std::path::Path, extra: &str) -> String {
    let elf = format!("{}/../../sw/build/apps/chain.elf", env!("CARGO_MANIFEST_DIR"));
    let text = format!(
        "[chain]\nelf = {elf:?}\n[load]\nrates_mrps = [1.0]\nrequests = 1000\nstart_us = 400.0\n\
         drain_us = 100.0\n[load.kv]\nitems_per_core = 200\nget_fraction = 0.5\nvalue_bytes = [8, 64]\n{extra}"
    );
    let path = dir.join("chain.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_crashed_tail_is_reported_and_every_reply_checked() {
    let dir = scratch("tail");
    let cfg = config(&dir, "[[faults]]\nkind = \"crash\"\nnode = 3\nat_us = 800.0\n");
    let (out, reconfigs) = (dir.join("out.csv"), dir.join("reconfigs.csv"));
    let o = nanopu(&[
        "chain",
        &cfg,
        "--progress",
        "--out",
        out.to_str().unwrap(),
        "--reconfigs",
        reconfigs.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("0 wrong, 0 lost"), "{stderr}");
    assert!(
        stdout.contains("replica 3 crashed at 800.000 us") && stdout.contains("head 1, tail 2"),
        "{stdout}"
    );
    let table = std::fs::read_to_string(out).unwrap();
    assert!(table.lines().any(|l| l.starts_with("1,get,0.5000,")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("1,set,0.5000,")), "{table}");
    assert_eq!(std::fs::read_to_string(reconfigs).unwrap().lines().count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A crash the load ends before is reported, not skipped: the figures are written (they
/// stand, for a chain without that failure), the crash is named on stderr, exit status 2
/// (as `nanopu run` reports an incomplete run).
#[test]
fn a_crash_the_run_never_reaches_is_reported() {
    let dir = scratch("unreached");
    let cfg = config(&dir, "[[faults]]\nkind = \"crash\"\nnode = 2\nat_us = 900000.0\n");
    let out = dir.join("out.csv");
    let o = nanopu(&["chain", &cfg, "--out", out.to_str().unwrap(), "--progress"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("0 wrong, 0 lost"), "{stderr}");
    let named = "the crash of node 2 at 900000.000 us was never reached: the run ended at";
    assert!(stderr.contains(named), "{stderr}");
    assert!(std::fs::read_to_string(out).unwrap().lines().any(|l| l.starts_with("1,set,")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_key_is_refused_by_name_before_anything_runs() {
    let dir = scratch("bad");
    let cfg = config(&dir, "");
    let text = std::fs::read_to_string(&cfg).unwrap().replace("[load]\n", "ping_uss = 5\n[load]\n");
    std::fs::write(&cfg, text).unwrap();
    let o = nanopu(&["chain", &cfg]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("ping_uss"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cfg = config(&dir, "[[faults]]\nkind = \"crash\"\nnode = 0\nat_us = 800.0\n");
    let o = nanopu(&["chain", &cfg]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("faults.node: node 0 is the master"));
    let o = nanopu(&["chain", &config(&dir, ""), "--rates", "0"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--rates"));
    std::fs::remove_dir_all(&dir).unwrap();
}
