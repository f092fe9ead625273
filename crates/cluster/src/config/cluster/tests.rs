//! The cluster file's parsing and checks: defaults, errors that name their key, ranges.

use super::*;
use crate::config::ExitMode;
use nanopu_riscv::AbiChoice;
use nanopu_sim::Time;

const MIN: &str = "[topology]\nkind = \"star\"\nnodes = 4\n[[program]]\nnodes = \"all\"\nelf = \"x.elf\"\n";

#[test]
fn minimal_config_has_defaults() {
    let c = ClusterFile::parse(MIN).unwrap();
    assert_eq!((c.seed, c.transport.as_str(), c.link.rate_gbps), (1, "ndp", 200.0));
    assert_eq!(c.node_count().unwrap(), 4);
}

#[test]
fn unknown_keys_and_bad_values_name_the_key() {
    let e = ClusterFile::parse(&format!("{MIN}[link]\nrate_gbs = 100.0\n")).unwrap_err();
    assert!(e.contains("rate_gbs"), "{e}");
    let e = ClusterFile::parse(&MIN.replace("nodes = 4", "nodes = \"four\"")).unwrap_err();
    assert!(e.contains("nodes"), "{e}");
    let e = ClusterFile::parse(&MIN.replace("\"star\"", "\"ring\"")).unwrap_err();
    assert!(e.contains("topology.kind"), "{e}");
}

/// The error of `MIN` with `extra` appended; it must start with `key`.
fn refused(extra: &str, key: &str) -> String {
    let e = ClusterFile::parse(&format!("{MIN}{extra}")).err().unwrap_or_else(|| panic!("accepted {extra}"));
    assert!(e.starts_with(&format!("{key}: ")), "{extra}: {e}");
    e
}

#[test]
fn abi_and_exit_name_their_choices() {
    let e = ClusterFile::parse(&format!("{MIN}abi = \"rv\"\n")).unwrap_err();
    assert!(e.contains("program.abi: \"rv\" is not \"auto\", \"nanopu\" or \"plain\""), "{e}");
    let e = refused("[node]\nexit = \"first\"\n", "node.exit");
    assert!(e.contains("\"auto\", \"hart\" or \"node\""), "{e}");
    let f = ClusterFile::parse(&format!("{MIN}abi = \"nanopu\"\n[node]\nexit = \"node\"\n")).unwrap();
    assert_eq!((f.program[0].abi_choice(), f.node.exit_mode()), (Ok(AbiChoice::NanoPu), Ok(ExitMode::Node)));
}

#[test]
fn the_memory_system_is_named_and_checked() {
    let e = refused("[node]\nmemory = \"full\"\n", "node.memory");
    assert!(e.contains("\"simple\" or \"prototype\""), "{e}");
    let f = ClusterFile::parse(&format!("{MIN}[node]\nmemory = \"simple\"\n")).unwrap();
    assert_eq!(f.node.memory(), Ok(nanopu_riscv::MemorySystem::Simple));
    let f = ClusterFile::parse(MIN).unwrap();
    assert_eq!(f.node.memory(), Ok(nanopu_riscv::MemorySystem::Prototype), "the default");
}

#[test]
fn times_that_wrapped_to_zero_are_refused() {
    // 1e30 ns would wrap to 0 fs through `as u64` of the product: refused.
    let e = refused("[link]\npropagation_ns = 1e30\n", "link.propagation_ns");
    assert!(e.contains("1e30") && e.contains("limit"), "{e}");
    refused("[switch]\nlatency_ns = 1e30\n", "switch.latency_ns");
    refused(
        "[transport_params]\ntail_fraction = 1.0\ntail_delay_us = 1e30\n",
        "transport_params.tail_delay_us",
    );
    refused("[transport_params]\nrto_us = 1e30\n", "transport_params.rto_us");
    refused("[switch]\nmcast_timeout_us = 1e30\n", "switch.mcast_timeout_us");
    refused("[node]\nsched_timer_us = 1e30\n", "node.sched_timer_us");
    refused("[[faults]]\nlink = \"node:1\"\ndown_at_us = 1e30\n", "faults.down_at_us");
    refused("[node]\nmsg_cycles = 9223372036854775807\n", "node.msg_cycles");
    refused("[node]\nidle_cycles = 9223372036854775807\n", "node.idle_cycles");
}

#[test]
fn negative_and_nan_values_are_refused_not_clamped() {
    for (extra, key) in [
        ("[[faults]]\nlink = \"node:1\"\ndown_at_us = -5.0\n", "faults.down_at_us"),
        ("[[faults]]\nlink = \"node:1\"\ndrop_prob = nan\n", "faults.drop_prob"),
        ("[link]\npropagation_ns = -1.0\n", "link.propagation_ns"),
        ("[link]\nrate_gbps = -200.0\n", "link.rate_gbps"),
        ("[link]\nrate_gbps = nan\n", "link.rate_gbps"),
        ("[link]\ndrop_prob = 1.0\n", "link.drop_prob"),
        ("[switch]\nlatency_ns = -263.0\n", "switch.latency_ns"),
        ("[switch]\nmcast_timeout_us = 0.0\n", "switch.mcast_timeout_us"),
        ("[transport_params]\nrto_us = -1.0\n", "transport_params.rto_us"),
        ("[transport_params]\ntail_delay_us = -1.0\n", "transport_params.tail_delay_us"),
        ("[transport_params]\ntail_fraction = 1.5\n", "transport_params.tail_fraction"),
        ("[node]\nsched_timer_us = nan\n", "node.sched_timer_us"),
    ] {
        refused(extra, key);
    }
}

#[test]
fn rates_outside_their_range_are_refused() {
    refused("[link]\nrate_gbps = inf\n", "link.rate_gbps");
    refused("[link]\nrate_gbps = 1e300\n", "link.rate_gbps");
    let e = refused("[link]\nrate_gbps = 1e-6\n", "link.rate_gbps");
    assert!(e.contains("0.001..=100000"), "{e}");
    assert!(ClusterFile::parse(&format!("{MIN}[link]\nrate_gbps = 0.001\n")).is_ok());
}

#[test]
fn max_us_is_named_and_bounded() {
    for v in ["0.0", "-1.0", "nan", "inf", "1e12", "1e-12"] {
        let e = ClusterFile::parse(&format!("max_us = {v}\n{MIN}")).unwrap_err();
        assert!(e.starts_with("max_us: ") && !e.contains("max_cycles"), "{v}: {e}");
    }
    assert!(ClusterFile::parse(&format!("max_us = 3.6e9\n{MIN}")).is_ok());
}

#[test]
fn node_max_cycles_points_to_max_us() {
    let e = refused("[node]\nmax_cycles = 0\n", "node.max_cycles");
    assert!(e.contains("max_us"), "{e}");
}

#[test]
fn retransmission_timeouts_have_a_floor() {
    // 1e-9 us resent every packet at every femtosecond-scale tick until memory ran out.
    let e = refused("[transport_params]\nrto_us = 1e-9\n", "transport_params.rto_us");
    assert!(e.contains("0.2678 us"), "{e}");
    let c = ClusterFile::parse(MIN).unwrap();
    // Star: 2 x (43.52 + 2.88 + 2 x 43.75) ns; leaf-spine 4 links and 2 x 3 switchings.
    assert_eq!(c.round_trip_floor(2), Time::from_ps(267_800));
    assert!(ClusterFile::parse(&format!("{MIN}[transport_params]\nrto_us = 0.2678\n")).is_ok());
    let far = "[link]\npropagation_ns = 3.6e12\n[switch]\nlatency_ns = 3.6e12\n[transport_params]\nrto_us = 3.6e9\n";
    refused(far, "transport_params.rto_us"); // an hour-long hop: the floor passes u64
    refused("[switch]\nmcast_timeout_us = 0.1\n", "switch.mcast_timeout_us");
    refused("[node]\nsched_timer_us = 0.01\n", "node.sched_timer_us");
}

#[test]
fn messages_larger_than_the_tx_queue_are_refused() {
    let e = refused("[node]\nmax_msg_bytes = 16384\n", "node.max_msg_bytes");
    assert!(e.contains("node.tx_queue_bytes") && e.contains("at least 16400"), "{e}");
    refused("[node]\nmax_msg_bytes = 8184\n", "node.max_msg_bytes");
    assert!(ClusterFile::parse(&format!("{MIN}[node]\nmax_msg_bytes = 8176\n")).is_ok());
    let big = format!("{MIN}[node]\nmax_msg_bytes = 38912\ntx_queue_bytes = 38928\n");
    assert!(ClusterFile::parse(&big).is_ok());
}

#[test]
fn topology_sizes_are_refused_before_anything_is_built() {
    let ls = |d: u64, l: u64, s: u64| {
        let t =
            format!("[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = {d}\nleaves = {l}\nspines = {s}\n");
        ClusterFile::parse(&MIN.replace("[topology]\nkind = \"star\"\nnodes = 4\n", &t))
    };
    assert!(ls(65_537, 65_537, 1).unwrap_err().starts_with("topology.nodes_per_leaf x topology.leaves: "));
    assert!(ls(65_536, 65_536, 1).unwrap_err().contains("4294967296"));
    assert!(ls(4, 4, 4_294_967_295).unwrap_err().starts_with("topology.nodes_per_leaf + topology.spines: "));
    assert!(ls(4, 4, 100_000).unwrap_err().starts_with("topology: "));
    assert!(ls(4, 4, 4).is_ok());
    let e = ClusterFile::parse(&MIN.replace("nodes = 4", "nodes = 1000000000")).unwrap_err();
    assert!(e.starts_with("topology.nodes: 1000000000") && e.contains("1048576"), "{e}");
}

#[test]
fn program_ranges_do_not_overflow() {
    let e = ClusterFile::parse(&MIN.replace("nodes = \"all\"", "nodes = \"0-4294967295\"")).unwrap_err();
    assert!(e.starts_with("program.nodes: "), "{e}");
    assert!(parse_nodes("4294967295", 8).is_err());
}

#[test]
fn faults_name_links_that_do_not_exist() {
    refused("[[faults]]\nlink = \"node:99\"\ndrop_prob = 0.1\n", "faults.link");
    refused("[[faults]]\nlink = \"leaf:0:up:0\"\ndrop_prob = 0.1\n", "faults.link");
}

#[test]
fn node_ranges() {
    assert_eq!(parse_nodes("all", 8).unwrap(), 0..8);
    assert_eq!(parse_nodes("1-7", 8).unwrap(), 1..8);
    assert_eq!(parse_nodes("3", 8).unwrap(), 3..4);
    assert!(parse_nodes("5-9", 8).unwrap_err().contains("program.nodes"));
}

#[test]
fn keys_of_the_other_topology_are_refused() {
    for key in ["leaves = 2", "nodes_per_leaf = 4", "spines = 2"] {
        let e = ClusterFile::parse(&MIN.replace("nodes = 4", &format!("nodes = 4\n{key}"))).unwrap_err();
        let name = key.split(' ').next().unwrap();
        assert!(e.starts_with(&format!("topology.{name}: does not apply to kind \"star\"")), "{e}");
    }
    let ls = "kind = \"leaf-spine\"\nnodes = 8\nnodes_per_leaf = 4\nleaves = 2\nspines = 2";
    let e = ClusterFile::parse(&MIN.replace("kind = \"star\"\nnodes = 4", ls)).unwrap_err();
    assert!(e.starts_with("topology.nodes: does not apply to kind \"leaf-spine\""), "{e}");
}

#[test]
fn overlapping_program_ranges_are_refused_naming_both() {
    let two =
        "[[program]]\nnodes = \"0-2\"\nelf = \"a.elf\"\n[[program]]\nnodes = \"2-3\"\nelf = \"b.elf\"\n";
    let e =
        ClusterFile::parse(&MIN.replace("[[program]]\nnodes = \"all\"\nelf = \"x.elf\"\n", two)).unwrap_err();
    assert_eq!(e, "program.nodes: \"0-2\" and \"2-3\" overlap; each node runs exactly one program");
    let apart = two.replace("\"2-3\"", "\"3\"");
    assert!(
        ClusterFile::parse(&MIN.replace("[[program]]\nnodes = \"all\"\nelf = \"x.elf\"\n", &apart)).is_ok()
    );
}

#[test]
fn a_reversed_node_range_is_named() {
    let e = ClusterFile::parse(&MIN.replace("nodes = \"all\"", "nodes = \"3-0\"")).unwrap_err();
    assert!(e.starts_with("program.nodes: \"3-0\" is a reversed range"), "{e}");
}

#[test]
fn inapplicable_nic_and_tail_settings_are_refused() {
    let e = refused("[node]\ncore_selection = \"rss\"\njbsq_n = 7\n", "node.jbsq_n");
    assert!(e.contains("does not apply when node.core_selection is rss"), "{e}");
    let e = ClusterFile::parse(&format!("{MIN}nic = \"icenic\"\n[node]\njbsq_n = 5\n")).unwrap_err();
    assert!(e.starts_with("node.jbsq_n: the nanoPU NIC's core selection"), "{e}");
    assert!(e.contains("(program.nodes \"all\" has nic = \"icenic\")"), "{e}");
    for nic in ["zeronic", "rdma"] {
        let e = ClusterFile::parse(&format!("{MIN}nic = \"{nic}\"\n[node]\njbsq_n = 5\n")).unwrap_err();
        assert!(e.contains(&format!("(program.nodes \"all\" has nic = \"{nic}\")")), "{e}");
    }
    let e = refused("[transport_params]\ntail_delay_us = 5.0\n", "transport_params.tail_delay_us");
    assert!(e.contains("transport_params.tail_fraction"), "{e}");
}

#[test]
fn rdma_keys_are_checked_and_only_for_rdma_nodes() {
    let e = refused("rdma_ack_timeout_exp = 6\n", "program.rdma_*");
    assert!(e.contains("add nic = \"rdma\""), "{e}");
    let rdma = |keys: &str| format!("nic = \"rdma\"\n{keys}");
    let e = refused(&rdma("rdma_ack_timeout_exp = 32\n"), "program.rdma_ack_timeout_exp");
    assert!(e.contains("0..=31"), "{e}");
    refused(&rdma("rdma_retry_cnt = 8\n"), "program.rdma_retry_cnt");
    let f = ClusterFile::parse(&format!("{MIN}{}", rdma("rdma_ack_timeout_exp = 14\nrdma_retry_cnt = 3\n")))
        .unwrap();
    let p = f.program[0].rdma_params(&Default::default()).unwrap();
    assert_eq!((p.ack_timeout_exp, p.retry_cnt), (14, 3));
}

#[test]
fn ice_size_keys_are_checked_and_only_for_icenic_nodes() {
    let e = refused("ice_queue_depth = 10\n", "program.ice_*");
    assert!(e.contains("add nic = \"icenic\""), "{e}");
    let ice = |keys: &str| format!("nic = \"icenic\"\n{keys}");
    let e = refused(&ice("ice_queue_depth = 0\n"), "program.ice_queue_depth 0");
    assert!(e.contains("1 to 255"), "{e}");
    refused(&ice("ice_buffer_flits = 189\n"), "program.ice_buffer_flits 189");
    // icenet NICConfig's own sizes, reachable from a cluster file.
    let f = ClusterFile::parse(&format!("{MIN}{}", ice("ice_queue_depth = 10\nice_buffer_flits = 379\n")))
        .unwrap();
    let p = f.program[0].ice_params(&Default::default()).unwrap();
    assert_eq!((p.queue_depth, p.rx_buffer_flits), (10, 379));
}
