//! One-sided RDMA timed end to end by a client on another node (experiments/rdma
//! end-to-end*.toml, docs/apps/rdma.md "End to end from a client node").

use crate::common;

use common::{nanopu, stderr};

/// The client's (node 1's) latencies in cycles, by operation, from its `&&CSV&&` lines.
fn client_cycles(config: &str) -> Vec<(String, Vec<u64>)> {
    let o = nanopu(&["run", config, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", stderr(&o)));
    let console: String = v["consoles"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .filter(|c| c.starts_with("node 1 "))
        .collect();
    assert!(console.contains("wrong replies: 0") && console.contains("Client complete!"), "{console}");
    let lines = console.lines().filter_map(|l| l.split_once("&&CSV&&,").map(|(_, rest)| rest));
    lines
        .map(|l| {
            let mut f = l.split(',');
            let op = f.next().unwrap().to_string();
            (op, f.map(|c| c.parse().unwrap()).collect())
        })
        .collect()
}

fn median(xs: &[u64]) -> u64 {
    let mut s = xs.to_vec();
    s.sort_unstable();
    s[s.len() / 2]
}

/// Every operation is answered correctly 200 times and takes at least its four link
/// crossings; lengthening each link by 107.19 ns (483 against 140 cycles) moves each
/// operation's median by four times that, 343 cycles per crossing, give or take the few
/// cycles of the client's polling loop.
#[test]
fn each_operation_takes_its_four_link_crossings_and_what_the_server_adds() {
    let long = client_cycles("experiments/rdma/end-to-end.toml");
    let short = client_cycles("experiments/rdma/end-to-end-43.toml");
    let ops: Vec<&str> = long.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(ops, ["READ", "WRITE", "CAS", "FA", "INDIRECT_READ"]);
    for ((op, l), (_, s)) in long.iter().zip(&short) {
        assert_eq!((l.len(), s.len()), (200, 200), "{op}");
        assert!(l.iter().all(|&c| c > 4 * 483) && s.iter().all(|&c| c > 4 * 140), "{op}: {l:?}");
        let moved = median(l) as i64 - median(s) as i64;
        assert!((moved - 4 * 343).abs() <= 8, "{op}: the median moved by {moved} cycles");
    }
}
