//! The benchmarks of experiments/nic-compare as a user runs them: `nic-throughput` on both
//! NICs and the latency benchmarks' `--app stream`, each checking every reply itself.

use crate::common;

use common::{nanopu, stderr};
use serde_json::Value;

fn bench(args: &[&str]) -> Value {
    let o = nanopu(&[&["bench"], args, &["--json"]].concat());
    assert!(o.status.success(), "bench {args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn mpps(v: &Value) -> f64 {
    v["mpps"].as_f64().unwrap()
}

#[test]
fn nic_throughput_measures_both_nics_and_the_register_path_leads() {
    let nano = bench(&["nic-throughput", "--nic", "nanopu", "--requests", "200"]);
    let ice = bench(&["nic-throughput", "--nic", "icenic", "--requests", "200"]);
    for (v, wire) in [(&nano, 128), (&ice, 106)] {
        for way in ["rx", "tx"] {
            assert_eq!(v[way]["wire_bytes"], wire, "{v}");
            // At most the line: 200 Gb/s over the packet's bytes on the wire.
            let line = 200e9 / (wire as f64 * 8.0) / 1e6;
            assert!(mpps(&v[way]) > 1.0 && mpps(&v[way]) <= line * 1.001, "{way}: {v}");
        }
        assert_eq!(v["loopback"].as_array().unwrap().len(), 6);
        assert_eq!(v["stream"].as_array().unwrap().len(), 6);
    }
    // Flooded at line rate, IceNIC drops what its receive buffer cannot hold.
    assert!(ice["rx"]["dropped"].as_u64().unwrap() > 0, "{ice}");
    for (n, i) in nano["loopback"].as_array().unwrap().iter().zip(ice["loopback"].as_array().unwrap()) {
        assert_eq!(n["payload_bytes"], i["payload_bytes"]);
        assert!(mpps(n) > mpps(i), "nanoPU against IceNIC: {n} {i}");
    }
}

#[test]
fn stream_latency_is_measured_on_both_nics_for_8_bytes_to_1_kib() {
    for name in ["loopback-latency", "icenic-loopback-latency"] {
        let v = bench(&[name, "--app", "stream", "--requests", "20"]);
        assert_eq!(v["app"], "stream");
        let sizes: Vec<u64> =
            v["sizes"].as_array().unwrap().iter().map(|r| r["payload_bytes"].as_u64().unwrap()).collect();
        assert_eq!(sizes, [8, 16, 64, 256, 512, 1024]);
        // The NIC's own latency is below the wire's, which adds 26 ns of MAC each way.
        for r in v["sizes"].as_array().unwrap() {
            let (nic, wire) = (r["nic_median_ns"].as_f64().unwrap(), r["wire_median_ns"].as_f64().unwrap());
            assert!(nic > 5.0 && wire > nic + 50.0, "{r}");
        }
    }
}
