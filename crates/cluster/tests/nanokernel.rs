//! The nanokernel (sw/lib/nanokernel*.{c,S}) with the NIC's thread scheduler (docs/platform.md sections
//! 2 and 3): the service-time server in its test types, and the context-switch measurement.
//! Requests come from the test host, as in host_driven.rs.

use crate::common;

use common::*;
use nanopu_cluster::host::HOST_IP;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::report::summarize;
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_sim::Time;

const SERVICE: &str = "apps/service.elf";
const CTXSWITCH: &str = "apps/ctxswitch.elf";
const C1STALL: &str = "apps/c1stall.elf";

/// Cycles of the 3.2 GHz node clock in a duration.
fn cycles(t: Time) -> u64 {
    t.as_fs() / 312_500
}

fn service_cfg(cores: usize, test_type: &str) -> NodeConfig {
    let mut c = cfg(cores);
    c.args = vec![test_type.to_string()];
    c
}

/// A service request to `context`: (service cycles, send-time tag).
fn request(context: u16, service: u64, tag: u64) -> nanopu_nic::Message {
    TestHost::message(9, node_ip(0), context, &[service, tag])
}

/// Run to the end; on anything but `want`, fail with every core's console.
fn run_expect(sim: &mut Simulation, want: Outcome) {
    let got = sim.run();
    let consoles = |sim: &mut Simulation| {
        let s = summarize(sim, Outcome::Quiescent);
        s.cores
            .iter()
            .map(|c| format!("core {} [{} pc {}]: {}", c.core, c.state, c.pc, c.console))
            .collect::<Vec<_>>()
    };
    match got {
        Ok(o) if o == want => {}
        other => panic!(
            "run ended with {other:?}, want {want:?}; host received {:?}\n{}",
            sim.host.received.iter().map(|r| (r.msg.src_context, r.msg.words.clone())).collect::<Vec<_>>(),
            consoles(sim).join("\n")
        ),
    }
}

/// The reply to the request tagged `tag` (second word).
fn reply_to(sim: &Simulation, tag: u64) -> &nanopu_cluster::host::HostMessage {
    sim.host
        .received
        .iter()
        .find(|r| r.msg.words.get(1) == Some(&tag))
        .unwrap_or_else(|| panic!("no reply tagged {tag}"))
}

#[test]
fn ctxswitch_reports_a_plausible_figure() {
    let mut sim = Simulation::new(&elf(CTXSWITCH), cfg(1)).unwrap();
    const PAIRS: u64 = 4;
    for i in 0..PAIRS {
        // Context 1 (priority 1) starts spinning, then context 0 (priority 0) preempts it.
        let t_ns = 5_000 + 5_000 * i;
        sim.host.send_at(Time::from_ns(t_ns), TestHost::message(3, node_ip(0), 1, &[100 + i]));
        sim.host.send_at(Time::from_ns(t_ns + 1_000), TestHost::message(4, node_ip(0), 0, &[i]));
    }
    run_expect(&mut sim, Outcome::Quiescent);
    let figures: Vec<u64> =
        sim.host.received.iter().filter(|r| r.msg.dst_context == 4).map(|r| r.msg.words[0]).collect();
    let echoes = sim.host.received.iter().filter(|r| r.msg.dst_context == 3).count();
    println!("context switch, interrupt to first instruction: {figures:?} cycles");
    assert_eq!((figures.len(), echoes), (PAIRS as usize, PAIRS as usize));
    // The first switch in a message's interrupt: context 0 has run once, started by the idle
    // timeout before any message, so its frame and stack have been touched.
    assert!((50..3000).contains(&figures[0]), "{figures:?}");
    for f in &figures[1..] {
        assert!((50..1000).contains(f), "{figures:?}");
    }
}

/// Send time of the request tagged `tag`.
fn sent_at(sim: &Simulation, tag: u64) -> Time {
    sim.host.sent.iter().find(|s| s.msg.words.get(1) == Some(&tag)).expect("sent").time
}

/// Every request got exactly one reply from node 0 to the host's context 9, echoing both words.
fn assert_all_echoed(sim: &Simulation) {
    assert_eq!(sim.host.received.len(), sim.host.sent.len(), "one reply per request");
    for s in &sim.host.sent {
        let r = reply_to(sim, s.msg.words[1]);
        assert_eq!((r.msg.src_ip, r.msg.dst_ip, r.msg.dst_context), (node_ip(0), HOST_IP, 9));
        assert_eq!(r.msg.words, s.msg.words);
        assert!(r.time > s.time);
    }
}

#[test]
fn service_jbsq_answers_every_request_and_spreads_over_the_cores() {
    const N: u64 = 40;
    const WORK: u64 = 10_000;
    let mut sim = Simulation::new(&elf(SERVICE), service_cfg(4, "jbsq")).unwrap();
    // Bursts of 8 at once: JBSQ(2) puts two on each of the 4 cores.
    for i in 0..N {
        sim.host.send_at(Time::from_us(5 + 20 * (i / 8)), request(0, WORK, i));
    }
    run_expect(&mut sim, Outcome::Quiescent);
    assert_all_echoed(&sim);
    for r in &sim.host.received {
        assert_eq!(r.msg.src_context, 0);
    }
    // One core would need 8 x WORK per burst; four need 2 x WORK plus overheads.
    let burst = cycles(reply_to(&sim, 7).time.saturating_sub(sent_at(&sim, 0)));
    println!("jbsq: a burst of 8 x {WORK} cycles served in {burst} cycles on 4 cores");
    assert!((2 * WORK..3 * WORK).contains(&burst), "{burst}");
}

#[test]
fn service_rss_replies_come_from_the_context_of_their_core() {
    const WORK: u64 = 10_000;
    let mut sim = Simulation::new(&elf(SERVICE), service_cfg(4, "rss")).unwrap();
    for round in 0..3u64 {
        for ctx in 0..4u64 {
            sim.host.send_at(Time::from_us(5 + 10 * round), request(ctx as u16, 1000, round * 10 + ctx));
        }
    }
    // Four requests for context 0 at once: only core 0 serves context 0 (static assignment).
    for k in 0..4u64 {
        sim.host.send_at(Time::from_us(50), request(0, WORK, 100 + k));
    }
    run_expect(&mut sim, Outcome::Quiescent);
    assert_all_echoed(&sim);
    for s in &sim.host.sent {
        assert_eq!(reply_to(&sim, s.msg.words[1]).msg.src_context, s.msg.dst_context);
    }
    let burst = cycles(reply_to(&sim, 103).time.saturating_sub(sent_at(&sim, 100)));
    println!("rss: 4 x {WORK} cycles for context 0 served in {burst} cycles (one core)");
    assert!(burst >= 4 * WORK, "{burst}");
}

/// A long priority-1 request, then a short priority-0 one while it runs; (short reply
/// latency, long reply latency) in cycles.
fn preempt_run(cfg: NodeConfig) -> (u64, u64) {
    const LONG: u64 = 100_000;
    const SHORT: u64 = 1_000;
    let mut sim = Simulation::new(&elf(SERVICE), cfg).unwrap();
    sim.host.send_at(Time::from_us(5), request(1, LONG, 1));
    sim.host.send_at(Time::from_us(10), request(0, SHORT, 0));
    sim.host.stop_after(2, |_| true);
    run_expect(&mut sim, Outcome::HostDone);
    assert_all_echoed(&sim);
    let (short, long) = (reply_to(&sim, 0), reply_to(&sim, 1));
    assert!(short.time < long.time, "the priority-0 request must not wait for the long one");
    assert_eq!((short.msg.src_context, long.msg.src_context), (0, 1));
    let lat = |tag, r: &nanopu_cluster::host::HostMessage| cycles(r.time.saturating_sub(sent_at(&sim, tag)));
    let (ls, ll) = (lat(0, short), lat(1, long));
    assert!(ll >= LONG, "the long request ran {ll} cycles");
    (ls, ll)
}

#[test]
fn service_preempt_serves_priority_0_before_a_long_priority_1_request() {
    for cores in [1, 4] {
        let (short, long) = preempt_run(service_cfg(cores, "preempt"));
        println!("preempt, {cores} cores: short request {short} cycles, long request {long} cycles");
        // 1,000 cycles of work plus port, NIC and switch overheads: nowhere near the long one.
        assert!(short < 5_000, "{cores} cores: short request took {short} cycles");
    }
}

#[test]
fn service_two_runs_both_contexts_on_core_0_and_the_other_cores_exit() {
    let mut sim = Simulation::new(&elf(SERVICE), service_cfg(4, "two")).unwrap();
    for i in 0..10u64 {
        sim.host.send_at(Time::from_us(5 + i), request((i % 2) as u16, 2_000, i));
    }
    run_expect(&mut sim, Outcome::Quiescent);
    assert_all_echoed(&sim);
    for s in &sim.host.sent {
        assert_eq!(reply_to(&sim, s.msg.words[1]).msg.src_context, s.msg.dst_context);
    }
    let s = summarize(&mut sim, Outcome::Quiescent);
    let exits: Vec<Option<i64>> = s.cores.iter().map(|c| c.exit_code).collect();
    assert_eq!(exits, vec![None, Some(0), Some(0), Some(0)]);
}

#[test]
fn service_misbehave_demoted_context_is_preempted_by_an_equal_priority_one() {
    const WORK: u64 = 500;
    let mut sim = Simulation::new(&elf(SERVICE), service_cfg(1, "misbehave")).unwrap();
    // Context 1's 100th request runs 10 x 500 = 5,000 cycles, beyond lmsgcycles (3,000).
    for i in 1..=100u64 {
        sim.host.send_at(Time::from_us(4 + i), request(1, WORK, i));
    }
    // 1.2 us (3,840 cycles) into the 100th: context 1 is demoted by then.
    sim.host.send_at(Time::from_ns(104_000 + 1_200), request(0, WORK, 0));
    run_expect(&mut sim, Outcome::Quiescent);
    assert_all_echoed(&sim);
    let (ctx0, hundredth) = (reply_to(&sim, 0), reply_to(&sim, 100));
    let ninety_ninth = cycles(reply_to(&sim, 99).time.saturating_sub(sent_at(&sim, 99)));
    let stretched = cycles(hundredth.time.saturating_sub(sent_at(&sim, 100)));
    println!("misbehave: 99th request {ninety_ninth} cycles, 100th {stretched} cycles");
    assert!(stretched >= 10 * WORK && ninety_ninth < 2 * WORK + 1_000);
    assert!(ctx0.time < hundredth.time, "the demoted context must yield to context 0");
}

/// `c1stall.elf` (the prototype's HIGH_PRIORITY_C1_STALL server): context 1's requests
/// 1..=101 (tags 1001..=1101), 500 cycles each, one per us from 5 us; its 101st is stretched to 5,000 cycles, beyond lmsgcycles (3,000), as the
/// prototype's c1_stall_freq = 100 counts. Returns the simulation, not yet run.
fn c1stall_with_a_stretch() -> Simulation {
    let mut sim = Simulation::new(&elf(C1STALL), cfg(1)).unwrap();
    for i in 1..=101u64 {
        sim.host.send_at(Time::from_us(4 + i), request(1, 500, 1000 + i));
    }
    sim
}

/// Both threads announced themselves ({core, context}), and every request has its reply.
fn assert_announced_and_echoed(sim: &Simulation) {
    let announced: Vec<&[u64]> = sim.host.received.iter().take(2).map(|r| &r.msg.words[..]).collect();
    assert_eq!(announced, [[0u64, 0].as_slice(), &[0, 1]], "start-up messages first");
    assert_eq!(sim.host.received.len(), sim.host.sent.len() + 2, "one reply per request");
}

#[test]
fn c1stall_demoted_context_is_preempted_by_an_equal_priority_one() {
    let mut sim = c1stall_with_a_stretch();
    // 1.2 us (3,840 cycles) into the 101st: context 1 is demoted by then.
    sim.host.send_at(Time::from_ns(105_000 + 1_200), request(0, 500, 7));
    run_expect(&mut sim, Outcome::Quiescent);
    assert_announced_and_echoed(&sim);
    let (ctx0, stretched) = (reply_to(&sim, 7), reply_to(&sim, 1101));
    let hundredth = cycles(reply_to(&sim, 1100).time.saturating_sub(sent_at(&sim, 1100)));
    let lat = cycles(stretched.time.saturating_sub(sent_at(&sim, 1101)));
    println!("c1stall: 100th request {hundredth} cycles, 101st {lat} cycles");
    assert!(lat >= 5_000 && hundredth < 2 * 500 + 1_000, "100th {hundredth}, 101st {lat}");
    assert_eq!(stretched.msg.words[0], 5_000, "the reply echoes the stretched time, as the prototype's");
    assert!(ctx0.time < stretched.time, "the demoted context must yield to context 0");
}

/// The prototype's NIC never restores a demoted context's priority (l-nic/rocket-chip
/// `LNICRxQueues`): after its stretch, context 1's plain requests no longer go before
/// context 0's, even older ones.
#[test]
fn c1stall_demoted_context_stays_below_the_well_behaved_one() {
    let mut sim = c1stall_with_a_stretch();
    // Well after the stretch: three plain 2,000-cycle requests to context 1, then one to
    // context 0 while the first of them runs.
    for k in 0..3u64 {
        sim.host.send_at(Time::from_ns(120_000 + 100 * k), request(1, 2_000, 2000 + k));
    }
    sim.host.send_at(Time::from_ns(120_300), request(0, 500, 7));
    run_expect(&mut sim, Outcome::Quiescent);
    assert_announced_and_echoed(&sim);
    let ctx0 = cycles(reply_to(&sim, 7).time.saturating_sub(sent_at(&sim, 7)));
    println!("c1stall: context 0 behind a demoted context's backlog: {ctx0} cycles");
    assert!(
        reply_to(&sim, 7).time < reply_to(&sim, 2001).time,
        "context 0 waited behind context 1's backlog"
    );
    assert!(ctx0 < 500 + 1_000, "{ctx0} cycles");
}

#[test]
fn service_timer_mode_switches_only_on_the_tick() {
    // NIC-driven first, then the timer-driven baseline (docs/platform.md section 3, every 5 us).
    let (nic_short, _) = preempt_run(service_cfg(1, "preempt"));
    let mut timer = service_cfg(1, "preempt");
    timer.nic.sched_timer_cycles = 16_000;
    let (timer_short, timer_long) = preempt_run(timer);
    println!("priority-0 latency behind a long request: NIC-driven {nic_short} cycles, timer-driven {timer_short} cycles");
    assert!(timer_short > nic_short && timer_short < 16_000 + 5_000, "{timer_short}");
    assert!(timer_long >= 100_000);
}

#[test]
fn service_without_a_valid_type_prints_usage_and_fails() {
    for args in [vec![], vec!["bogus".to_string()]] {
        let mut c = cfg(2);
        c.args = args.clone();
        let (outcome, s) = run(&elf(SERVICE), c).unwrap();
        assert_eq!(outcome, Outcome::AllExited, "{args:?}");
        assert!(s.cores.iter().all(|c| c.exit_code == Some(2)), "{args:?}");
        assert!(s.cores[0].console.contains("usage: service.elf"), "{:?}", s.cores[0].console);
    }
}
