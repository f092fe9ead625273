//! The key-value load against the MICA-style store on an IceNIC node (`mica_ice.elf`,
//! docs/apps/mica.md "On IceNIC"): requests and replies as UDP frames, every GET answered
//! with the last SET value (or the preloaded one), a wrong or lost reply failing the run,
//! the same bytes from the same seed, and what IceNIC cannot serve yet refused.

mod common;

use common::{cfg, elf};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::kv::{Keys, KvSpec, Steering};
use nanopu_cluster::loadgen::{Arrivals, Class, LoadResult, LoadSpec, Service};
use nanopu_cluster::{NodeConfig, Outcome, SimError};
use nanopu_sim::Time;

/// Items in the store: fewer than the experiment's 10,000 so that preloading is quick.
const ITEMS: u64 = 1000;

fn spec(keys: Keys, steering: Steering, cores: u64, rate_mrps: f64) -> LoadSpec {
    let kv = KvSpec {
        items_per_core: ITEMS,
        cores,
        seed: 11,
        get_fraction: 0.5,
        keys,
        value_min: 8,
        value_max: 512,
        steering,
    };
    let class = |name: &str, fraction| Class {
        name: name.into(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: vec![0],
    };
    LoadSpec {
        seed: 11,
        rate_mrps,
        requests: 3000,
        warmup: 0,
        arrivals: Arrivals::Exponential,
        classes: vec![class("get", 0.5), class("set", 0.5)],
        drain: Time::from_us(200),
        start: Time::from_us(1000),
        kv: Some(kv),
        rdma: None,
        setalg: None,
    }
}

fn node(nic: NicKind, args: Vec<String>) -> NodeConfig {
    let mut c = NodeConfig { nic_kind: nic, ..cfg(1) };
    c.max_cycles = 1 << 30;
    c.args = args;
    c
}

fn run_on(nic: NicKind, s: &LoadSpec, args: Option<Vec<String>>) -> Result<LoadResult, SimError> {
    let args = args.unwrap_or_else(|| s.kv.as_ref().unwrap().server_args());
    let program = match nic {
        NicKind::Nanopu => "apps/mica.elf",
        NicKind::IceNic => "apps/mica_ice.elf",
    };
    s.run(&elf(program), node(nic, args))
}

fn run(s: &LoadSpec) -> LoadResult {
    run_on(NicKind::IceNic, s, None).unwrap()
}

#[test]
fn every_get_returns_the_last_set_value_over_icenic_frames() {
    for keys in [Keys::Uniform, Keys::Zipf { theta: 0.99 }] {
        let s = spec(keys, Steering::Static, 1, 0.5);
        let r = run(&s);
        assert_eq!(r.problems(&s), Vec::<String>::new());
        let e = r.kv.as_ref().unwrap();
        assert_eq!((e.wrong, e.lost, r.unexpected, r.outcome), (0, 0, 0, Outcome::HostDone), "{e:?}");
        let read_set = (r.kv_ops.iter().filter(|k| !k.set))
            .filter(|k| k.answer.as_ref().is_some_and(|a| a.as_ref().is_ok_and(|&v| v > 0)));
        assert!(read_set.count() > 100, "GETs must read values the generator SET, not only preloaded ones");
    }
}

/// The same requests on both NICs: the same answers, and IceNIC's later (DMA through
/// memory, a driver on the core: docs/models/icenic.md) by more than 50 ns at this light
/// load (their loopback latencies differ by 80 ns and more: experiments/nic-compare).
#[test]
fn the_same_load_on_both_nics_reads_the_same_versions_icenic_later() {
    let s = spec(Keys::Uniform, Steering::Static, 1, 0.5);
    let (ice, nanopu) = (run(&s), run_on(NicKind::Nanopu, &s, None).unwrap());
    let answers = |r: &LoadResult| r.kv_ops.iter().map(|k| k.answer.clone()).collect::<Vec<_>>();
    assert_eq!(answers(&ice), answers(&nanopu), "light load: every request served before the next");
    let median = |r: &LoadResult| r.class_result("all", None, 0).latency.median;
    let (i, n) = (median(&ice), median(&nanopu));
    assert!(i > n + 50.0, "IceNIC median {i} ns, nanoPU {n} ns");
}

#[test]
fn a_store_with_other_values_fails_the_run() {
    let s = spec(Keys::Uniform, Steering::Static, 1, 0.5);
    let mut args = s.kv.as_ref().unwrap().server_args();
    args[2] = "12".into(); // the seed: other keys, other values
    let r = run_on(NicKind::IceNic, &s, Some(args)).unwrap();
    let e = r.kv.as_ref().unwrap();
    assert!(e.wrong > 500, "{e:?}");
    assert!(r.problems(&s).join("; ").contains("wrong replies"));
}

/// Past what one core can serve, IceNIC's receive buffer fills and drops frames (it has no
/// flow control): the requests are lost and the run fails, naming the drops.
#[test]
fn frames_the_icenic_dropped_are_lost_requests_and_fail_the_run() {
    let mut s = spec(Keys::Uniform, Steering::Static, 1, 20.0);
    s.requests = 2000;
    let r = run(&s);
    let e = r.kv.as_ref().unwrap();
    assert!(e.lost > 0 && e.wrong == 0, "{e:?}");
    let p = r.problems(&s).join("; ");
    assert!(p.contains("receive buffer full") && p.contains("lost requests"), "{p}");
}

#[test]
fn same_seed_same_replies() {
    let s = spec(Keys::Zipf { theta: 0.99 }, Steering::Static, 1, 1.0);
    let (a, b) = (run(&s), run(&s));
    assert_eq!((a.requests, a.kv_ops, a.cost), (b.requests, b.kv_ops, b.cost));
}

#[test]
fn what_an_icenic_server_cannot_take_is_refused() {
    let refused = |s: &LoadSpec, cores: usize| {
        let mut c = node(NicKind::IceNic, Vec::new()); // refused before the server starts
        c.nic.cores = cores;
        match s.run(&elf("apps/mica_ice.elf"), c) {
            Err(SimError::Setup(e)) => e,
            other => panic!("not refused: {:?}", other.map(|r| r.outcome)),
        }
    };
    let jbsq = spec(Keys::Uniform, Steering::Jbsq, 1, 1.0);
    assert!(refused(&jbsq, 1).starts_with("load.kv.steering"));
    let four = spec(Keys::Uniform, Steering::Static, 4, 1.0);
    assert!(refused(&four, 4).starts_with("server.cores"));
    let mut service = spec(Keys::Uniform, Steering::Static, 1, 1.0);
    service.kv = None;
    assert!(refused(&service, 1).starts_with("load: an IceNIC server takes only"));
}
