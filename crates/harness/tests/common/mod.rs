//! Shared helpers of the harness's integration tests: loads, sorts and their checks, over
//! the simulator's test helpers (crates/cluster/tests/common).

#![allow(dead_code)]

#[path = "../../../cluster/tests/common/mod.rs"]
mod engine;
pub use engine::*;

use nanopu_cluster::config::NicKind;
use nanopu_cluster::{Outcome, SimError};
use nanopu_harness::loadgen::{Arrivals, Class, LoadResult, LoadSpec, Service};
use nanopu_harness::sort::{Algorithm, Distribution, SortSpec, Start};
use nanopu_harness::workload::kv::{Keys, KvSpec, Steering};
use nanopu_harness::workload::rdma::{RdmaKind, RdmaSpec, KINDS};
use nanopu_harness::workload::setalg::{Corpus, Popularity, SetalgSpec, CLASSES};
use nanopu_sim::Time;

/// Both NICs a server node can have, for the tests that check a property on each.
pub const NICS: [NicKind; 2] = [NicKind::Nanopu, NicKind::IceNic];

/// `app`'s build for `nic`: apps/APP.elf, or apps/APP_ice.elf on an IceNIC node.
pub fn app_elf(app: &str, nic: NicKind) -> Vec<u8> {
    match nic {
        NicKind::Nanopu => elf(&format!("apps/{app}.elf")),
        NicKind::IceNic | NicKind::Zeronic => elf(&format!("apps/{app}_ice.elf")),
        NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
    }
}

/// Run load `s` against `app`'s build for `nic` on `cores` cores started with `args`.
pub fn run_load(
    app: &str,
    nic: NicKind,
    cores: usize,
    s: &LoadSpec,
    args: Vec<String>,
) -> Result<LoadResult, SimError> {
    s.run(&app_elf(app, nic), server_node(nic, cores, args))
}

/// The setup error that refuses load `s` against `app`'s IceNIC build on `cores` cores
/// started with `args`, before the server starts; a run that is not refused fails the test.
pub fn icenic_refusal(app: &str, s: &LoadSpec, cores: usize, args: Vec<String>) -> String {
    match run_load(app, NicKind::IceNic, cores, s, args) {
        Err(SimError::Setup(e)) => e,
        other => panic!("not refused: {:?}", other.map(|r| r.outcome)),
    }
}

/// The start-up messages a server of `nic` on `cores` cores sends before the load: one per
/// core on the nanoPU (`lnic_boot_msg`), none on IceNIC (its servers have no such message).
pub fn startup_messages(nic: NicKind, cores: usize) -> usize {
    match nic {
        NicKind::Nanopu => cores,
        NicKind::IceNic | NicKind::Zeronic => 0,
        NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
    }
}

/// A checked load with nothing wrong: no problem reported, every reply right, none lost,
/// nothing unexpected, the run ended by the host.
pub fn assert_no_errors(s: &LoadSpec, r: &LoadResult) {
    assert_eq!(r.problems(s), Vec::<String>::new());
    let e = r.kv.as_ref().unwrap();
    assert_eq!((e.wrong, e.lost, r.unexpected, r.outcome), (0, 0, 0, Outcome::HostDone), "{e:?}");
}

/// A checked load past what an IceNIC server takes: requests lost to its full receive
/// buffer, none answered wrongly, and the run's problems name both.
pub fn assert_lost_to_icenic_drops(s: &LoadSpec, r: &LoadResult) {
    let e = r.kv.as_ref().unwrap();
    assert!(e.lost > 0 && e.wrong == 0, "{e:?}");
    let p = r.problems(s).join("; ");
    assert!(p.contains("receive buffer full") && p.contains("lost requests"), "{p}");
}

/// A sort run: one core per node, 64-node leaves, NDP, seed 1, no faults.
pub fn sort_spec(algorithm: Algorithm, cores: u32, keys: u32, args: &[u32]) -> SortSpec {
    SortSpec {
        algorithm,
        cores,
        cores_per_node: 1,
        keys_per_core: keys,
        args: args.iter().map(u32::to_string).collect(),
        distribution: Distribution::Uniform,
        start: Start::Warm,
        seed: 1,
        transport: "ndp".into(),
        switch_latency_ns: 0.0,
        multicast: true,
        drop_prob: 0.0,
        tail_fraction: 0.0,
        tail_delay_us: 0.0,
        max_msg_bytes: 2048,
        max_us: 20_000.0,
        nodes_per_leaf: 64,
        spines: 64,
        threads: None,
        message_log: true,
        capture_at: None,
        faults: Vec::new(),
        engine: Default::default(),
        memory: Default::default(),
    }
}

/// The MICA tests' load (tests/mica.rs): 3,000 requests, half GETs and half SETs of 8- to
/// 512-byte values, over 1,000 items per core (fewer than the experiment's 10,000 so that
/// preloading is quick, enough that a Zipf workload hits some keys many times and most not
/// at all), Poisson arrivals at `rate_mrps`, to every core.
pub fn mica_spec(cores: u64, keys: Keys, steering: Steering, rate_mrps: f64) -> LoadSpec {
    let kv = KvSpec {
        items_per_core: 1000,
        cores,
        seed: 11,
        get_fraction: 0.5,
        keys,
        value_min: 8,
        value_max: 512,
        steering,
        format: Default::default(),
    };
    let class = |name: &str, fraction| Class {
        name: name.into(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: (0..cores as u16).collect(),
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
        reply_at: Default::default(),
        kv: Some(kv),
        rdma: None,
        setalg: None,
    }
}

/// Filling the 4 MiB region (512 Ki words) takes core 0 between 5 and 7 ms of simulated
/// time (measured: four cores registered their context by 7 ms, not by 5); the sends start
/// after it.
pub const RDMA_START_US: u64 = 8000;

/// The RDMA tests' load (tests/rdma.rs): the operations in the shares of `mix`, READs and
/// WRITEs of 1 to 16 words, Poisson arrivals at `rate_mrps` to context 0, from
/// [`RDMA_START_US`].
pub fn rdma_spec(mix: [f64; 5], rate_mrps: f64, requests: usize) -> LoadSpec {
    let rdma = RdmaSpec { seed: 9, mix, read_words: [1, 16], write_words: [1, 16] };
    let class = |(k, &fraction): (&RdmaKind, &f64)| Class {
        name: k.name().into(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: vec![0],
    };
    LoadSpec {
        seed: 9,
        rate_mrps,
        requests,
        warmup: 0,
        arrivals: Arrivals::Exponential,
        classes: KINDS.iter().zip(&mix).map(class).collect(),
        drain: Time::from_us(200),
        start: Time::from_us(RDMA_START_US),
        reply_at: Default::default(),
        kv: None,
        rdma: Some(rdma),
        setalg: None,
    }
}

/// Building the index of [`setalg_corpus`] takes core 0 1.87 ms of simulated time (measured:
/// `nanopu run sw/build/apps/setalg.elf --cores 1 -- 9 1024 2048 16`); the sends start after it.
pub const SETALG_START_US: u64 = 2500;

/// The set algebra tests' corpus (tests/setalg.rs).
pub fn setalg_corpus() -> Corpus {
    Corpus { seed: 9, documents: 1024, vocabulary: 2048, words_per_document: 16 }
}

/// Their load: a quarter each of 1- to 4-word queries, Poisson arrivals at `rate_mrps`.
pub fn setalg_spec(rate_mrps: f64, requests: usize) -> LoadSpec {
    let setalg = SetalgSpec {
        corpus: setalg_corpus(),
        query_words: [0.25; 4],
        popularity: Popularity::Zipf { theta: 0.99 },
    };
    let class = |name: &&str| Class {
        name: name.to_string(),
        fraction: 0.25,
        service: Service::Fixed { ns: 0.0 },
        contexts: vec![0],
    };
    LoadSpec {
        seed: 9,
        rate_mrps,
        requests,
        warmup: 0,
        arrivals: Arrivals::Exponential,
        classes: CLASSES.iter().map(class).collect(),
        drain: Time::from_us(500),
        start: Time::from_us(SETALG_START_US),
        reply_at: Default::default(),
        kv: None,
        rdma: None,
        setalg: Some(setalg),
    }
}
