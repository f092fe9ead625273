//! `nanopu raft CONFIG.toml` as a user meets it: a run's figures and checks, its CSVs, and
//! bad values refused naming the key.

use crate::common;

use common::{nanopu, stderr};

#[test]
fn a_run_prints_its_figures_and_passes_its_checks() {
    let dir = std::env::temp_dir().join(format!("nanopu-raft-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, tl) = (dir.join("r.csv"), dir.join("t.csv"));
    let args = ["raft", "experiments/raft/load.toml", "--requests", "300", "--replicas", "5", "--json"];
    let o =
        nanopu(&[&args[..], &["--out", out.to_str().unwrap(), "--timeline", tl.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["replicas"].as_u64(), v["answered"].as_u64()), (Some(5), Some(300)), "{v}");
    assert_eq!(v["problems"], serde_json::json!([]));
    assert!(v["write"]["median_ns"].as_f64().unwrap() > 100.0, "{v}");
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("replicas,seed,") && csv.lines().count() == 2, "{csv}");
    assert_eq!(std::fs::read_to_string(&tl).unwrap().lines().count(), 2, "one election");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    let o = nanopu(&["raft", "experiments/raft/load.toml", "--replicas", "9"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("raft.replicas: 9 is outside 3..=7"), "{}", stderr(&o));
    let dir = std::env::temp_dir().join(format!("nanopu-raft-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (text, want) in [
        ("[raft]\nreplica = 3\n", "unknown field `replica`"),
        ("[raft]\nheartbeat_us = 30.0\n", "raft.heartbeat_us"),
        ("[[faults]]\nkind = \"crash\"\nnode = \"follower\"\nat_us = 5.0\n", "faults[0].node"),
        ("[[faults]]\nkind = \"partition\"\nnode = 1\nfrom_us = 5.0\n", "faults[0].to_us: missing"),
    ] {
        let p = dir.join("bad.toml");
        std::fs::write(&p, text).unwrap();
        let o = nanopu(&["raft", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{text}: want {want} in {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
