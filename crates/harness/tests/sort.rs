//! The granular-computing programs under the sort harness: every run passes the validator,
//! including with packet drops and skewed or duplicate-heavy keys; PivotSelect beats the
//! naive rule; runs are reproducible.

use crate::common;

use common::{cfg, elf, sw_build};
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_harness::sort::{Algorithm, Distribution, SortRun, SortSpec, Start};

fn spec(algorithm: Algorithm, cores: u32, keys: u32, args: &[u32]) -> SortSpec {
    common::sort_spec(algorithm, cores, keys, args)
}

fn run(s: &SortSpec) -> SortRun {
    let r = s.run(&sw_build().join("apps"), false).unwrap_or_else(|e| panic!("{s:?}: {e}"));
    assert!(r.verdict.ok(), "{:?} {:?}: {:?}", s.algorithm, s.args, r.verdict.problems);
    assert_eq!(r.outcome, Outcome::AllExited);
    r
}

#[test]
fn nanosort_passes_for_every_bucket_count_and_with_multicast_off() {
    run(&spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]));
    run(&spec(Algorithm::NanoSort, 64, 16, &[8, 4, 1]));
    run(&spec(Algorithm::NanoSort, 256, 4, &[16, 16, 1]));
    run(&spec(Algorithm::NanoSort, 64, 16, &[4, 4, 0]));
    let mut four = spec(Algorithm::NanoSort, 256, 8, &[4, 4, 1]);
    four.cores_per_node = 4;
    run(&four);
    let mut leaves = spec(Algorithm::NanoSort, 64, 8, &[4, 4, 1]);
    (leaves.nodes_per_leaf, leaves.spines) = (16, 4); // 4 leaves, oversubscribed 4:1
    run(&leaves);
}

/// The sort time starts at the first stage, after every core's set-up (allocating and
/// warming its buffers); end to end counts from time 0, when every record is loaded and
/// every core starts, as GraySort times (docs/sort-harness.md, "Figures").
#[test]
fn end_to_end_time_includes_the_set_up_before_the_first_stage() {
    let f = run(&spec(Algorithm::NanoSort, 16, 16, &[4, 4, 1])).figures;
    assert!(f.timer_start_ns > 1000.0, "set-up of {} ns", f.timer_start_ns);
    assert!((f.end_to_end_ns - (f.timer_start_ns + f.total_ns)).abs() < 1e-6, "{f:?}");
}

/// The median trees' fan-in is a knob of its own (docs/nanosort.md): with 16 buckets on 64
/// sorters, fan-in 2 makes trees 6 deep where fan-in 16 makes them 2 deep, each tree level a
/// hop and a merge more, so level 1 (where the trees span all 64) takes longer on the mean
/// core. (The number of tree messages is m - 1 per tree whatever the fan-in.)
#[test]
fn fan_in_changes_the_trees_with_the_buckets_fixed() {
    let level1 = |fan_in: u32| {
        let mut s = spec(Algorithm::NanoSort, 64, 16, &[16, fan_in, 1]);
        (s.cores_per_node, s.switch_latency_ns) = (4, 263.0);
        let f = run(&s).figures;
        let l = f.stages.iter().find(|st| st.stage == "level 1").cloned().unwrap();
        l.compute_mean_ns + l.idle_mean_ns
    };
    let (deep, shallow) = (level1(2), level1(16));
    assert!(deep > shallow + 1000.0, "level 1: {deep} ns with fan-in 2, {shallow} ns with fan-in 16");
}

/// The last level may split by fewer buckets (docs/nanosort.md): 256 = 8 * 8 * 4 (the tail
/// experiment's size), 64 = 16 * 4 (the default run), 32 = 4 * 4 * 2 (two buckets, where
/// PivotSelect has its own ranks). Each runs exactly that many levels and passes.
#[test]
fn nanosort_last_level_with_fewer_buckets() {
    for (cores, b, levels) in [(256, 8, 3), (64, 16, 2), (32, 4, 3)] {
        let mut s = spec(Algorithm::NanoSort, cores, 32, &[b, b, 1]);
        s.cores_per_node = 4;
        let r = run(&s);
        let names: Vec<&str> = r.figures.stages.iter().map(|st| st.stage.as_str()).collect();
        assert!(names.contains(&format!("level {levels}").as_str()), "{cores}/{b}: {names:?}");
        assert!(!names.contains(&format!("level {}", levels + 1).as_str()), "{cores}/{b}: {names:?}");
    }
}

/// The paper's b-1 independent median trees (TREES 1, the default) against one combined
/// tree (TREES 0) on 1,024 cores, 16 buckets, the paper's 4 cores per node and 263 ns:
/// one value per message means more, smaller messages, but no core merges every column,
/// so level 1's slowest core computes less, the others wait less, and the sort is faster.
/// Both sort duplicate-heavy keys too (ties at the pivots are spread in the exchange).
#[test]
fn independent_median_trees_spread_the_work_of_the_combined_tree() {
    let paper = |trees: u32| {
        let mut s = spec(Algorithm::NanoSort, 1024, 16, &[16, 16, 1, trees]);
        (s.cores_per_node, s.switch_latency_ns) = (4, 263.0);
        s
    };
    let (ind, comb) = (run(&paper(1)).figures, run(&paper(0)).figures);
    let level1 = |f: &nanopu_harness::sort::report::SortFigures| {
        f.stages.iter().find(|s| s.stage == "level 1").cloned().unwrap()
    };
    let (a, b) = (level1(&ind), level1(&comb));
    assert!(ind.msgs_sent > comb.msgs_sent, "{} vs {}", ind.msgs_sent, comb.msgs_sent);
    assert!(a.compute_max_ns < b.compute_max_ns, "{a:?} vs {b:?}");
    assert!(a.idle_mean_ns < b.idle_mean_ns, "{a:?} vs {b:?}");
    assert!(ind.total_ns < comb.total_ns, "{} vs {}", ind.total_ns, comb.total_ns);
    for trees in [0, 1] {
        let mut s = spec(Algorithm::NanoSort, 256, 16, &[16, 16, 1, trees]);
        (s.cores_per_node, s.distribution) = (4, Distribution::DupPrefix);
        run(&s);
    }
}

#[test]
fn nanosort_passes_with_drops_and_hard_keys() {
    for (dist, drop) in
        [(Distribution::Skewed, 0.0), (Distribution::DupPrefix, 0.0), (Distribution::Uniform, 0.001)]
    {
        let mut s = spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]);
        (s.distribution, s.drop_prob) = (dist, drop);
        run(&s);
    }
    run(&spec(Algorithm::NanoSort, 64, 1, &[4, 4, 1]));
    run(&spec(Algorithm::NanoSort, 64, 64, &[4, 4, 1]));
}

/// `nanopu sort --cores 1024 --drop-prob 0.2`: with every link losing a fifth of its
/// packets, a receiver that forgot deliveries after a fixed time would deliver twice the
/// messages whose ACKs were all lost that long (seqwin.rs keeps them by sequence number).
#[test]
fn nanosort_on_1024_cores_passes_at_20_percent_loss() {
    let mut s = spec(Algorithm::NanoSort, 1024, 16, &[4, 4, 1]);
    s.drop_prob = 0.2;
    run(&s);
}

#[test]
fn millisort_and_mergemin_pass() {
    run(&spec(Algorithm::MilliSort, 64, 16, &[4]));
    let mut dup = spec(Algorithm::MilliSort, 32, 32, &[8]);
    (dup.distribution, dup.drop_prob) = (Distribution::DupPrefix, 0.001);
    run(&dup);
    for incast in [1, 8, 64] {
        run(&spec(Algorithm::MergeMin, 64, 128, &[incast]));
    }
}

/// The messages and bytes a sort reports are its NIC's counts (docs/sort-harness.md,
/// "Figures"), checked against two counts that share no code with them: MergeMin's, known
/// from the algorithm (every sorter but the root sends its parent one 8-byte minimum), and,
/// with one core per node so that every message crosses the network, the transports' logs
/// of each message they launch (one per multicast), per sorter, with their lengths.
#[test]
fn messages_and_bytes_sent_are_those_the_network_carried() {
    for incast in [1, 8] {
        let r = run(&spec(Algorithm::MergeMin, 64, 16, &[incast]));
        let sent: Vec<(u64, u64)> = r.outputs.iter().map(|o| (o.msgs_sent, o.bytes_sent)).collect();
        assert_eq!(sent[0], (0, 0), "the root sends nothing");
        assert!(sent[1..].iter().all(|&s| s == (1, 8)), "incast {incast}: {sent:?}");
        assert_eq!((r.figures.msgs_sent, r.figures.bytes_sent), (63, 504));
    }
    for s in [spec(Algorithm::NanoSort, 64, 16, &[16, 4, 1]), spec(Algorithm::MilliSort, 64, 16, &[4])] {
        let r = run(&s);
        let mut logged = vec![(0u64, 0u64); r.outputs.len()];
        for n in &r.sim.nodes {
            for e in &n.nic.transport().expect("a cluster node has a transport").log.sent {
                let sorter = e.src_ip - nanopu_sim::packet::NODE_IP_BASE;
                logged[sorter as usize].0 += 1;
                logged[sorter as usize].1 += u64::from(e.len);
            }
        }
        let counted: Vec<(u64, u64)> = r.outputs.iter().map(|o| (o.msgs_sent, o.bytes_sent)).collect();
        assert_eq!(counted, logged, "{:?}", s.algorithm);
        let total = logged.iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        assert_eq!((r.figures.msgs_sent, r.figures.bytes_sent), total);
        assert!(total.0 > 64, "{:?}: {total:?}", s.algorithm);
    }
}

/// MilliSort's pivot sorters each send the root as many super-pivots as there are pivot
/// sorters (its pickSuperPivots, docs/nanosort.md), so the root merges G^2: on 128 cores
/// a reduction factor of 2 (G = 64) makes the splitter stage several times slower than 8
/// (G = 16). A cap on the super-pivots (256 in all) would hide this growth: under 2 times.
#[test]
fn millisort_root_work_grows_with_the_square_of_the_pivot_sorters() {
    let splitters = |r: u32| {
        let f = run(&spec(Algorithm::MilliSort, 128, 32, &[r])).figures;
        f.stages.iter().find(|s| s.stage == "splitters").unwrap().compute_max_ns
    };
    let (g64, g16) = (splitters(2), splitters(8));
    assert!(g64 > 4.0 * g16, "{g64} vs {g16}");
}

#[test]
fn the_progress_probe_finds_every_sorter_done_at_the_end() {
    use nanopu_harness::sort::harness::PROBE;
    let r = run(&spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]));
    let phases = r.sim.phases();
    assert_eq!(
        phases.into_iter().map(|(id, n)| ((PROBE.name)(id), n)).collect::<Vec<_>>(),
        [("done".into(), 64)]
    );
}

#[test]
fn the_trace_names_every_track_and_draws_each_delivery_from_core_to_core() {
    use nanopu_harness::trace::{trace_json, TraceInput};
    let mut four = spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]);
    four.cores_per_node = 4;
    let r = run(&four);
    let messages = r.sim.message_records();
    let input = TraceInput {
        nodes: 16,
        outputs: &r.outputs,
        cores_per_node: 4,
        hz: r.sim.clock().hz(),
        messages: &messages,
        flows: true,
        problems: &[],
    };
    let doc: serde_json::Value = serde_json::from_str(&trace_json(&input)).expect("valid JSON");
    let events = doc["traceEvents"].as_array().unwrap();
    let of = |ph: &str| events.iter().filter(|e| e["ph"] == ph).collect::<Vec<_>>();
    let names: Vec<&str> = of("M")
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 17, "16 nodes and the network");
    assert_eq!(names[3], "node 3 (10.0.0.5)");
    let delivered = messages.iter().filter(|m| m.delivered.is_some()).count();
    let (starts, ends) = (of("s"), of("f"));
    assert_eq!((starts.len(), ends.len()), (delivered, delivered));
    for (s, f) in starts.iter().zip(&ends) {
        assert_eq!(s["id"], f["id"]);
        assert!(s["ts"].as_f64() <= f["ts"].as_f64());
        assert!(f["pid"].as_u64().unwrap() < 16 && f["tid"].as_u64().unwrap() < 4, "{f}");
    }
    let peak = of("C").iter().map(|c| c["args"]["messages"].as_i64().unwrap()).max().unwrap();
    assert!(peak > 0 && peak as usize <= messages.len());
}

#[test]
fn same_seed_same_sort() {
    let s = spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]);
    let (a, b) = (run(&s), run(&s));
    assert_eq!(a.figures, b.figures);
    assert_eq!(a.outputs, b.outputs);
    assert_eq!(a.sim.events(), b.sim.events());
}

/// The message log is host bookkeeping: without it the run is the same, only unrecorded.
#[test]
fn the_message_log_changes_nothing_simulated() {
    let s = spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]);
    let (a, b) = (run(&s), run(&SortSpec { message_log: false, ..s.clone() }));
    assert_eq!((a.figures, a.outputs, a.sim.events()), (b.figures, b.outputs, b.sim.events()));
    assert!(!a.sim.message_records().is_empty());
    assert!(b.sim.message_records().is_empty());
}

#[test]
fn a_wrong_sorter_count_is_reported_with_the_programs_message() {
    let s = spec(Algorithm::NanoSort, 48, 16, &[4, 4, 1]);
    let r = s.run(&sw_build().join("apps"), false).unwrap();
    assert!(r.verdict.problems.iter().any(|p| p.contains("power of two")), "{:?}", r.verdict.problems);
}

/// docs/nanosort.md: PivotSelect's buckets are equal in expectation, the naive rule's are not.
#[test]
fn pivot_select_beats_the_naive_rule() {
    let mut c = cfg(1);
    c.max_cycles = 3_000_000_000;
    let mut sim = Simulation::new(&elf("apps/pivot_select.elf"), c).unwrap();
    assert_eq!(sim.run().unwrap(), Outcome::AllExited);
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).into_owned();
    println!("{console}");
    assert_eq!(sim.nodes[0].cores[0].halted(), Some(0), "{console}");
    assert_eq!(console.matches("(PivotSelect, per-b rule)").count(), 8, "{console}");
    assert_eq!(console.matches("(PivotSelect, the paper's routine)").count(), 6, "{console}");
}

/// Below 16 buckets, the paper's PivotSelect (its 16-bucket routine, every 16/b-th candidate:
/// PIVOTS 1, the default) samples up to 32 of a sorter's keys where the per-b rules (PIVOTS
/// 0) sample 2b: with 4 buckets and 32 keys per core, 8 of the 32. Its final buckets are
/// the more even (seed 1: skew 2.09 against 5.66), and so its value fetch is the shorter.
#[test]
fn the_papers_pivot_select_evens_the_buckets_below_16() {
    let skew = |pivots: u32| {
        let mut s = spec(Algorithm::NanoSort, 256, 32, &[4, 4, 1, 1, pivots]);
        (s.cores_per_node, s.switch_latency_ns) = (4, 263.0);
        run(&s).figures
    };
    let (paper, per_b) = (skew(1), skew(0));
    assert!(paper.skew * 2.0 < per_b.skew, "skew {} against {}", paper.skew, per_b.skew);
    assert!(paper.total_ns < per_b.total_ns, "{} against {} ns", paper.total_ns, per_b.total_ns);
}

/// `--seed S --seeds N` runs S..=S+N-1: never wrapping past u64::MAX (which ran no seed at
/// all and still reported a pass), never an empty range.
#[test]
fn seed_ranges_that_do_not_fit_are_refused() {
    use nanopu_harness::sort::seeds;
    assert_eq!(seeds(1, 3), Ok(1..=3));
    assert_eq!(seeds(u64::MAX, 1), Ok(u64::MAX..=u64::MAX));
    assert_eq!(seeds(u64::MAX - 1, 2), Ok(u64::MAX - 1..=u64::MAX));
    assert!(seeds(u64::MAX, 2).unwrap_err().contains("largest seed"));
    assert!(seeds(5, 0).unwrap_err().contains("at least one seed"));
}

/// A summary of no runs is no summary (not a NaN mean and "PASS for every seed").
#[test]
fn the_seed_summary_needs_a_run() {
    use nanopu_harness::sort::report::SeedSummary;
    assert_eq!(SeedSummary::of(&[]), None);
    let one = SeedSummary::of(&[5.0]).unwrap();
    assert_eq!((one.seeds, one.mean_ns, one.sd_ns, one.max_ns), (1, 5.0, 0.0, 5.0));
    let two = SeedSummary::of(&[4.0, 6.0]).unwrap();
    assert_eq!((two.mean_ns, two.max_ns), (5.0, 6.0));
    assert!((two.sd_ns - 2f64.sqrt()).abs() < 1e-12, "{}", two.sd_ns);
}

/// Records that cannot fit a node's sort area are refused before a cluster is built.
#[test]
fn too_many_records_per_core_are_refused_before_the_run() {
    use nanopu_harness::sort::harness::max_records_per_core;
    let (one, four) = (max_records_per_core(1), max_records_per_core(4));
    assert!(one > 10_000 && four < one / 3, "{one} {four}");
    let mut s = spec(Algorithm::Local, 1, one as u32 + 1, &[]);
    let e = s.run(&sw_build().join("apps"), false).err().expect("refused").to_string();
    assert!(e.contains("keys_per_core") && e.contains(&format!("at most {one}")), "{e}");
    s.cores_per_node = 4;
    s.cores = 4;
    s.algorithm = Algorithm::MergeMin;
    s.keys_per_core = four as u32 + 1;
    s.args = vec!["4".into()];
    let e = s.run(&sw_build().join("apps"), false).err().expect("refused").to_string();
    assert!(e.contains(&format!("at most {four}")), "{e}");
}

#[test]
fn warm_inputs_start_in_the_caches_cold_ones_in_dram() {
    // 256 records of 104 bytes: 208 blocks of the LLC's 128 bytes.
    let cold = SortSpec { start: Start::Cold, ..spec(Algorithm::Local, 1, 256, &[]) };
    let (c, w) = (run(&cold), run(&SortSpec { start: Start::Warm, ..cold.clone() }));
    let llc_misses = |r: &SortRun| r.sim.nodes[0].cores[0].stats().llc_misses;
    assert!(llc_misses(&c) >= llc_misses(&w) + 200, "cold {} warm {}", llc_misses(&c), llc_misses(&w));
    assert!(w.figures.total_ns < c.figures.total_ns);
    assert!(w.outputs[0].records == c.outputs[0].records, "the same records either way");
}

/// The progress probe reads four words of each sorter's area; what it finds is what the
/// whole area says (`struct sort_area`, sw/include/sortbench.h: word 10 `done`, word 11
/// `n_stages`, then 4-word stages `id, start, end, idle` from word 16), on runs cut at
/// several points of the sort.
#[test]
fn the_progress_probe_agrees_with_the_whole_area_mid_run() {
    use nanopu_harness::sort::harness::{DIR_ADDR, PROBE};
    let words = |sim: &Simulation, n: usize, addr: u64, count: usize| {
        let mut b = vec![0u8; 8 * count];
        sim.nodes[n].mem.read(addr, &mut b).expect("readable");
        b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect::<Vec<u64>>()
    };
    let whole = |sim: &Simulation, n: usize, area: u64| -> String {
        let h = words(sim, n, area, 16 + 4 * 32);
        let k = h[11].min(31) as usize;
        let at = match (h[16 + 4 * k + 1] != 0, k) {
            (_, _) if h[10] == 1 => return "done".into(),
            (true, _) => k,
            (false, 1..) => k - 1,
            (false, 0) => return "starting".into(),
        };
        (PROBE.name)(h[16 + 4 * at] + 1)
    };
    let mut phases_seen = std::collections::BTreeSet::new();
    for max_us in [1.0, 5.0, 9.0, 13.0, 17.0] {
        let mut s = spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]);
        s.max_us = max_us;
        let r = s.run(&sw_build().join("apps"), false).expect("runs to its time limit");
        let mut expected = std::collections::BTreeMap::<String, usize>::new();
        for n in 0..r.sim.nodes.len() {
            let dir = words(&r.sim, n, DIR_ADDR, 2 + r.sim.nodes[n].cores.len());
            dir[2..].iter().for_each(|&area| *expected.entry(whole(&r.sim, n, area)).or_default() += 1);
        }
        let probed: std::collections::BTreeMap<String, usize> =
            r.sim.phases().into_iter().map(|(id, n)| ((PROBE.name)(id), n)).collect();
        assert_eq!(probed, expected, "cut at {max_us} us");
        phases_seen.extend(probed.into_keys());
    }
    // Not only "starting" and "done": the cuts land inside the sort's stages.
    assert!(phases_seen.len() >= 4, "{phases_seen:?}");
}
