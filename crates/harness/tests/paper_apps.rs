//! The nanoPU paper's applications (docs/apps/paper-apps.md) on simulated nanoPU nodes, each
//! checked against the same computation on the host.

use crate::common;

use common::*;
use nanopu_cluster::config::NicKind;
use nanopu_harness::apps::elf_name;
use nanopu_harness::apps::nn::{run_edges, run_edges_ice, run_net, NetSpec};
use nanopu_nic::icenic::IceParams;

/// The build of `name` for nodes with this NIC (appnet.h, two implementations).
fn app_elf(name: &str, nic: NicKind) -> Vec<u8> {
    elf(&format!("apps/{}", elf_name(name, nic)))
}

const NICS: [NicKind; 2] = [NicKind::Nanopu, NicKind::IceNic];

#[test]
fn one_neuron_accumulates_every_edge_bit_for_bit() {
    for (nic, edges) in NICS.iter().flat_map(|&n| [1, 8, 32].map(|e| (n, e))) {
        let run = run_edges(&app_elf("nn_edges", nic), nic, 7, edges, 3).unwrap();
        assert_eq!(run.results, run.expected, "{nic:?}, {edges} edges");
        assert_eq!(run.latency_ns.len(), 3);
        assert!(run.latency_ns.iter().all(|&l| l > 0.0), "{:?}", run.latency_ns);
    }
    let nano = |seed| run_edges(&app_elf("nn_edges", NicKind::Nanopu), NicKind::Nanopu, seed, 8, 1).unwrap();
    let (a, b) = (nano(7), nano(8));
    assert_ne!(a.results, b.results, "the seed changes the weights and inputs");
}

/// The path of `name`'s build for nodes with this NIC.
fn app_path(name: &str, nic: NicKind) -> std::path::PathBuf {
    sw_build().join("apps").join(elf_name(name, nic))
}

/// Cores per node: IceNIC nodes drive their NIC from one core.
fn cores(nic: NicKind) -> usize {
    if nic == NicKind::IceNic {
        1
    } else {
        4
    }
}

#[test]
fn a_four_layer_network_on_36_cores_matches_the_host_bit_for_bit() {
    for nic in NICS {
        let spec = NetSpec { seed: 3, inferences: 4, layers: vec![8, 12, 12, 4], cores: cores(nic) };
        let run = run_net(&spec, &app_path("nn_net", nic), nic).unwrap();
        for k in 0..4 {
            assert_eq!(run.outputs[k as usize], spec.reference(k), "{nic:?}, inference {k}");
        }
        assert!(run.outputs.iter().flatten().any(|&y| y != 0), "not all zero: {:?}", run.outputs);
        assert!(run.latency_ns.iter().all(|&l| l > 500.0 && l < 20_000.0), "{nic:?}: {:?}", run.latency_ns);
    }
}

use nanopu_harness::apps::nbody::{run_forces, TreeNode};
use nanopu_harness::apps::othello::{run_search, run_search_from, Board, SearchSpec, PASS};
use nanopu_sim::Time;

#[test]
fn othello_rules_hold_on_known_positions() {
    let b = Board::start();
    assert_eq!(b.moves(), (1 << 19) | (1 << 26) | (1 << 37) | (1 << 44), "d3, c4, f5, e6");
    let after = b.play(19);
    assert_eq!((after.p.count_ones(), after.o.count_ones()), (1, 4), "d3 flips d4");
    assert_eq!(b.tree_size(3), 1 + 4 + 12 + 56, "perft 1..3: 4, 12, 56");
}

#[test]
fn distributed_othello_finds_the_sequential_searchs_move_and_value() {
    // On IceNIC depth 4 overflows receive buffers (the next test): depth 3 there.
    let nano = [(1, 4), (2, 4), (5, 3)].map(|(s, d)| (NicKind::Nanopu, s, d));
    for (nic, seed, depth) in nano.into_iter().chain([(NicKind::IceNic, 1, 3), (NicKind::IceNic, 2, 3)]) {
        let board = Board::opening(seed, 10);
        let spec =
            SearchSpec { nodes: 16 / cores(nic) as u32, cores: cores(nic), board, depth, local_depth: 1 };
        let run = run_search(&spec, &app_path("othello", nic), nic).unwrap();
        let (value, best) = board.search(depth);
        assert_eq!((run.value, run.best), (value, best), "{nic:?}, seed {seed} depth {depth}");
        assert_ne!(best, PASS);
        assert!(run.messages as u64 >= 2 * (board.tree_size(depth - 1) - 1), "{} messages", run.messages);
    }
}

/// Without a transport, a worker busy with its boards lets the MAP frames sent to it pile up
/// in its IceNIC until the receive buffer drops some: reported as such, not as a wrong value.
/// Five plies overflow the artifact SoC's 1,800-flit buffers (four do not since 2026-12-02).
#[test]
fn a_deeper_othello_search_on_icenic_reports_the_frames_it_dropped() {
    let spec = SearchSpec { nodes: 16, cores: 1, board: Board::opening(1, 10), depth: 5, local_depth: 1 };
    let err = run_search(&spec, &app_path("othello", NicKind::IceNic), NicKind::IceNic).unwrap_err();
    assert!(err.contains("dropped") && err.contains("receive buffer full"), "{err}");
}

/// The search's latency is the search's, not the workers' start-up: on IceNIC appnet_init
/// writes 64 send headers and posts 64 receive buffers, which on worker 0 lasted past the
/// host's 2 us (11.4 us for a depth-2 search started at 2 us before 2026-12-03, 9.4 us started
/// at 20 us). The host now waits for every ring (`HostNet::ready_at`), so a start at 20 us
/// moves the latency by no more than where a few arrivals fall in the workers' poll loops
/// (8-15 ns an iteration; starts at 5, 10 and 20 us differed by up to 7 ns) and where DRAM
/// refreshes fall (each rank every 7,801 cycles, from reset, for tRFC = 160 cycles, 50 ns:
/// docs/models/node.md; 61 ns between the starts at 2 and 20 us on the nanoPU).
#[test]
fn othello_times_the_search_not_the_workers_start_up() {
    let spec = SearchSpec { nodes: 16, cores: 1, board: Board::opening(1, 10), depth: 2, local_depth: 1 };
    for nic in NICS {
        let elf = app_path("othello", nic);
        let (now, late) = (
            run_search(&spec, &elf, nic).unwrap(),
            run_search_from(&spec, &elf, nic, Time::from_us(20)).unwrap(),
        );
        assert!(
            (now.latency_ns - late.latency_ns).abs() < 100.0,
            "{nic:?}: {} ns against {} ns",
            now.latency_ns,
            late.latency_ns
        );
    }
}

#[test]
fn a_tree_node_computes_each_force_bit_for_bit() {
    let node = TreeNode { x: 500.0, y: 500.0, m: 5.0e6, s: 100.0 };
    for nic in NICS {
        let run = run_forces(&app_elf("nbody", nic), nic, node, 9, 40).unwrap();
        let bits = |f: &Option<(f64, f64)>| f.map(|(x, y)| (x.to_bits(), y.to_bits()));
        let got: Vec<_> = run.answers.iter().map(bits).collect();
        let want: Vec<_> = run.expected.iter().map(bits).collect();
        assert_eq!(got, want, "{nic:?}");
        let opened = want.iter().filter(|f| f.is_none()).count();
        assert!(opened > 0 && opened < 40, "some bodies are too close to the node: {opened}");
        assert_eq!(run.latency_ns.len(), 40);
    }
}

#[test]
fn the_tree_root_answers_every_body_of_an_incast() {
    use nanopu_harness::apps::nbody::run_root;
    let r = run_root(&sw_build().join("apps/nbody_root.elf"), 8, 50, 4, 3).unwrap();
    assert_eq!(r.requests, 400);
    assert!(r.root_busy_ns > 0.0 && r.total_ns > r.root_busy_ns, "{r:?}");
    let slowest = r.request_ns.iter().cloned().fold(0.0, f64::max);
    let fastest = r.request_ns.iter().cloned().fold(f64::MAX, f64::min);
    assert!(slowest > 2.0 * fastest, "the incast queues: {fastest} to {slowest} ns");
}

#[test]
fn the_programs_refuse_what_their_protocol_forbids() {
    use nanopu_cluster::node::boot::node_ip;
    use nanopu_cluster::TestHost;
    use nanopu_harness::apps::{one_node, run_checked};
    use nanopu_sim::Time;
    let refused = |app: &str, msgs: &[&[u64]]| {
        let mut sim = one_node(&elf(app), 1).unwrap();
        for (i, w) in msgs.iter().enumerate() {
            sim.host.send_at(Time::from_us(1 + i as u64), TestHost::message(0, node_ip(0), 0, w));
        }
        run_checked(&mut sim).unwrap_err()
    };
    let code2 = "exited with code 2";
    let twice = refused("apps/nn_edges.elf", &[&[0, 2], &[2, 1, 5], &[2, 1, 5]]);
    assert!(twice.contains(code2), "a second input on one edge: {twice}");
    let early = refused("apps/nbody.elf", &[&[1, 0, 0, 0, 0]]);
    assert!(early.contains(code2), "a request before any CONFIG: {early}");
    let odd = refused("apps/othello.elf", &[&[7, 0, 0, 0, 0, 0]]);
    assert!(odd.contains(code2), "an unknown message: {odd}");
}

#[test]
fn same_seed_same_latencies() {
    let spec = NetSpec { seed: 5, inferences: 3, layers: vec![4, 8, 2], cores: 4 };
    let elf = sw_build().join("apps/nn_net.elf");
    let run = || run_net(&spec, &elf, NicKind::Nanopu).unwrap();
    let (a, b) = (run(), run());
    assert_eq!((a.outputs, a.latency_ns), (b.outputs, b.latency_ns));
}

#[test]
fn dot_products_on_both_nics_and_both_ways_match_the_host() {
    use nanopu_harness::apps::dotprod::run_dot;
    for (nic, app) in NICS.iter().flat_map(|&n| ["dotprod_reg", "dotprod_mem"].map(|a| (n, a))) {
        for words in [1, 40, 180] {
            let run = run_dot(&app_elf(app, nic), nic, words, 5, 3).unwrap();
            assert_eq!(run.answers, run.expected, "{app} on {nic:?}, {words} words");
            assert_eq!(run.latency_ns.len(), 5);
        }
    }
}

#[test]
fn icenic_costs_more_per_message_and_reports_a_burst_it_drops() {
    let lat = |nic| {
        let run = run_edges(&app_elf("nn_edges", nic), nic, 1, 16, 3).unwrap();
        run.latency_ns[2]
    };
    let (nano, ice) = (lat(NicKind::Nanopu), lat(NicKind::IceNic));
    assert!(ice > 1.5 * nano, "16 messages through DMA and registers: {ice} ns, against {nano} ns");
    // 256 frames back to back (nn.h's most inputs): the artifact SoC's 64 posted buffers and
    // 1,800 flits hold them while the core takes one at a time.
    let ice_elf = app_elf("nn_edges", NicKind::IceNic);
    let run = run_edges(&ice_elf, NicKind::IceNic, 1, 256, 1).unwrap();
    assert_eq!(run.results, run.expected);
    // With icenet NICConfig's 379-flit buffer they are more than it holds beside the posted
    // buffers: dropped, and reported as such.
    let small = IceParams { rx_buffer_flits: 379, ..IceParams::default() };
    let err = run_edges_ice(&ice_elf, NicKind::IceNic, small, 1, 256, 1).unwrap_err();
    assert!(err.contains("dropped") && err.contains("receive buffer full"), "{err}");
}

/// appnet on IceNIC (sw/include/appnet_ice.h) takes only frames to its context: a DATA frame
/// to another UDP port is skipped (were it taken, the neuron would count a second input on
/// edge 0 and exit with 2), and the host reads the frames it gets back as messages.
#[test]
fn an_icenic_program_skips_frames_to_another_context() {
    use nanopu_cluster::node::boot::node_ip;
    use nanopu_cluster::TestHost;
    use nanopu_harness::apps::hostnet::{frame_of, message_of, HostNet, WORDS};
    use nanopu_harness::apps::one_node_with;
    use nanopu_sim::Time;
    let m = |ctx: u16, w: &[u64]| TestHost::message(0, node_ip(0), ctx, w);
    let f = frame_of(&m(7, &[2, 0, 5]));
    assert_eq!(
        (f.len(), &f[WORDS..WORDS + 8]),
        (WORDS + 24, &2u64.to_le_bytes()[..]),
        "words after the padding"
    );
    assert_eq!(message_of(&f).unwrap(), m(7, &[2, 0, 5]), "a frame reads back as its message");
    let net = HostNet(NicKind::IceNic);
    let mut sim = one_node_with(&app_elf("nn_edges", NicKind::IceNic), 1, NicKind::IceNic).unwrap();
    let script = [
        (1000, m(0, &[0, 1])),
        (1500, m(0, &[1, 0, 512])),
        (2000, m(7, &[2, 0, 5])),
        (3000, m(0, &[2, 0, 3])),
    ];
    script.into_iter().for_each(|(ns, msg)| net.send_at(&mut sim, Time::from_ns(ns), msg));
    net.stop_after(&mut sim, 1);
    net.run(&mut sim).unwrap();
    let got = net.received(&sim).unwrap();
    assert_eq!(
        got.iter().map(|r| r.msg.words.to_vec()).collect::<Vec<_>>(),
        vec![vec![3, 6, 1]],
        "2.0 x 3 >> 8"
    );
    assert_eq!((got[0].msg.src_ip, got[0].msg.src_context), (node_ip(0), 0));
}
