//! The small-scale figures nanopu reports beside the papers' (docs/validation.md) must not
//! drift unnoticed: each is measured here and compared with `tests/figures.snapshot.json`.
//! All are simulated, so they are exact on every machine. A model change that moves one is
//! deliberate: rerun with `NANOPU_UPDATE_FIGURES=1` to rewrite the snapshot, regenerate
//! docs/validation.md (`scripts/validation`) and say in the commit what moved and why.
//! This is not a check against the papers' numbers.

use serde_json::{json, Map, Value};
use std::process::Command;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/figures.snapshot.json");

fn nanopu(args: &[&str]) -> Value {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let o = Command::new(env!("CARGO_BIN_EXE_nanopu")).args(args).current_dir(root).output().expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "nanopu {args:?}: {err}");
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("nanopu {args:?}: {e}: {err}"))
}

/// A sort run's simulated total time, ns.
fn sort_ns(args: &[&str]) -> Value {
    let mut all = vec!["sort", "--json"];
    all.extend(args);
    nanopu(&all)["figures"]["total_ns"].clone()
}

/// The row of `rows` whose `key` is `value`.
fn row(rows: &Value, key: &str, value: Value) -> Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == value)
        .unwrap_or_else(|| panic!("no {key} {value}"))
        .clone()
}

/// NanoSort on 256 cores at the tail experiment's setup (experiments/nanosort-tail, seed 1):
/// its figures, with `extra` arguments.
fn sort256(extra: &[&str]) -> Value {
    let mut all =
        vec!["sort", "--json", "--cores", "256", "--keys-per-core", "32", "--buckets", "8", "--fan-in", "8"];
    all.extend(["--median-trees", "independent", "--max-msg-bytes", "2048", "--seed", "1"]);
    all.extend(extra);
    nanopu(&all)["figures"].clone()
}

/// Figures of the rows docs/validation.md reads from experiments: the chain at the nanoPU
/// paper's setup, unloaded (2,000 requests here against the experiment's 20,000); NanoSort's
/// messages and its slow tail on 256 cores; the nanoPU points of the artifact's NIC comparison.
/// The 4,096-core multicast rows take two minutes and are left to scripts/validation.
fn experiment_figures(lat: &Value) -> Value {
    let chain =
        nanopu(&["chain", "experiments/chain/paper.toml", "--rates", "0.05", "--requests", "2000", "--json"]);
    let write = row(&chain["rows"], "class", json!("set"));
    let nic = nanopu(&["bench", "nic-throughput", "--nic", "nanopu", "--json"]);
    let size = |rows: &Value, bytes: u64| row(rows, "payload_bytes", json!(bytes));
    let base = sort256(&[]);
    json!({
        "chain paper.toml 0.05 Mrps x 2000: write median (ns)": write["median_ns"],
        "chain paper.toml 0.05 Mrps x 2000: write p99 (ns)": write["p99_ns"],
        "sort nanosort 256 x 32, 8 buckets: messages": base["msgs_sent"],
        "sort nanosort 256 x 32, 8 buckets (ns)": base["total_ns"],
        "sort nanosort 256 x 32, 8 buckets, 4 us on 1% (ns)":
            sort256(&["--tail-fraction", "0.01", "--tail-delay-us", "4"])["total_ns"],
        "bench loopback-latency: 64 B, latency module (ns)": size(&lat["sizes"], 64)["nic_median_ns"],
        "bench loopback-latency: 256 B, latency module (ns)": size(&lat["sizes"], 256)["nic_median_ns"],
        "bench nic-throughput: loopback 64 B (Mrps)": size(&nic["loopback"], 64)["mpps"],
        "bench nic-throughput: stream 64 B (Mrps)": size(&nic["stream"], 64)["mpps"],
    })
}

/// Every figure, by name.
fn measure() -> Map<String, Value> {
    let rx = nanopu(&["bench", "rx", "--json"]);
    let lat = nanopu(&["bench", "loopback-latency", "--json", "--requests", "50"]);
    let tput = nanopu(&["bench", "loopback-throughput", "--json", "--requests", "2000"]);
    let ctx = nanopu(&["bench", "context-switch", "--json"]);
    let size16 = row(&lat["sizes"], "payload_bytes", json!(16));
    let mut figures = json!({
        "bench rx: 1 message (ns)": rx["rows"][0]["ns"],
        "bench rx: 64 messages (ns)": rx["rows"][1]["ns"],
        "bench loopback-latency: 16 B, latency module (ns)": size16["nic_median_ns"],
        "bench loopback-latency: 16 B, wire to wire (ns)": size16["wire_median_ns"],
        "bench loopback-throughput (Mrps)": tput["million_requests_per_second"],
        "bench loopback-throughput: long run (Mrps)": tput["long_run_mrps"],
        "bench context-switch: warm median (cycles)": ctx["warm_median_cycles"],
        "bench context-switch: cold (cycles)": ctx["cold_cycles"],
        "sort nanosort 256 cores (ns)": sort_ns(&["--cores", "256"]),
        "sort millisort 256 cores (ns)": sort_ns(&["--algorithm", "millisort", "--cores", "256"]),
        "sort mergemin 64 x 128, incast 8 (ns)":
            sort_ns(&["--algorithm", "mergemin", "--cores", "64", "--keys-per-core", "128", "--incast", "8"]),
        "sort local 1 core x 1024 (ns)":
            sort_ns(&["--algorithm", "local", "--cores", "1", "--keys-per-core", "1024", "--start", "cold"]),
    });
    let more = experiment_figures(&lat);
    figures.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    figures.as_object().unwrap().clone()
}

#[test]
fn small_scale_figures_match_the_snapshot() {
    let now = measure();
    if std::env::var_os("NANOPU_UPDATE_FIGURES").is_some() {
        let text = serde_json::to_string_pretty(&Value::Object(now)).unwrap();
        std::fs::write(SNAPSHOT, text + "\n").unwrap();
        return;
    }
    let before: Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(SNAPSHOT).expect("the snapshot exists")).unwrap();
    let moved: Vec<String> = now
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}: {} -> {v}", before.get(k).map_or("(new)".into(), |b| b.to_string())))
        .collect();
    let gone: Vec<&String> = before.keys().filter(|k| !now.contains_key(*k)).collect();
    assert!(
        moved.is_empty() && gone.is_empty(),
        "figures moved (deliberate? rerun with NANOPU_UPDATE_FIGURES=1, regenerate docs/validation.md and say why in the commit):\n  {}\n  gone: {gone:?}",
        moved.join("\n  ")
    );
}
