//! `--crash` and `--partition` on `nanopu run` (docs/faults.md): refused where they cannot
//! apply or name no node, and otherwise applied as `[[faults]]` entries and reported.

use crate::common;

use common::{nanopu, stderr};
use std::process::Output;

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

#[test]
fn fault_flags_are_refused_where_they_cannot_apply() {
    for (args, want) in [
        (vec!["run", "sw/build/apps/idle.elf", "--crash", "0@1"], "--crash does not apply to a single node"),
        (vec!["run", "sw/build/apps/idle.elf", "--partition", "0@1-2"], "--partition does not apply"),
        (vec!["run", "experiments/incast/ndp-trim.toml", "--crash", "81@1"], "--crash 81@1: faults.node: 81"),
        (vec!["run", "experiments/incast/ndp-trim.toml", "--partition", "0@5-1"], "faults.to_us"),
        (vec!["run", "experiments/incast/ndp-trim.toml", "--partition", "0@1"], "NODES@FROM-TO"),
    ] {
        let o = nanopu(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// The incast's 80 senders are cut off from its receiver for 50 us: every message still
/// arrives, once, after the cut heals.
#[test]
fn a_partition_from_the_command_line_delays_the_incast_until_it_heals() {
    let o = nanopu(&["run", "experiments/incast/ndp-trim.toml", "--partition", "1-80@0-50", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = json(&o);
    assert_eq!((s["messages_sent"].as_u64(), s["messages_received"].as_u64()), (Some(80), Some(80)));
    assert!(s["last_arrival_ns"].as_f64().unwrap() > 50_000.0, "{s}");
    let f = &s["faults"][0];
    assert_eq!(f["fault"], "nodes 1-80 cut off from 0.000 us to 50.000 us", "{s}");
    assert!(f["dropped"].as_u64().unwrap() >= 80 && s["fabric"]["drops_fault"] == f["dropped"], "{s}");
}

#[test]
fn a_crashed_node_is_reported_as_crashed() {
    let o = nanopu(&["run", "experiments/incast/ndp-trim.toml", "--crash", "7@0", "--json"]);
    let s = json(&o);
    assert_eq!(s["faults"][0]["fault"], "node 7 crashed at 0.000 us", "{s}");
    assert_eq!(s["cores_crashed"], 4, "{s}");
    assert_eq!(s["messages_sent"], 79, "node 7 never sent its message: {s}");
    let failures = s["failures"].as_array().unwrap();
    assert!(
        failures.iter().all(|f| f.as_str().unwrap().starts_with("node 0 core 0")),
        "only the receiver waits: {s}"
    );
}
