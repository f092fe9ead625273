//! The load generator against the service-time server (`service.elf`): every request is
//! answered once, latency is at least the service time, and runs are reproducible.

mod common;

use common::{cfg, elf};
use nanopu_cluster::loadgen::{Arrivals, Class, LoadSpec, Service};
use nanopu_cluster::Outcome;
use nanopu_sim::Time;

fn spec(rate_mrps: f64, contexts: Vec<u16>) -> LoadSpec {
    LoadSpec {
        seed: 5,
        rate_mrps,
        requests: 600,
        warmup: 100,
        arrivals: Arrivals::Exponential,
        classes: vec![Class {
            name: "a".into(),
            fraction: 1.0,
            service: Service::Fixed { ns: 500.0 },
            contexts,
        }],
        drain: Time::from_us(500),
    }
}

fn server(test_type: &str) -> nanopu_cluster::NodeConfig {
    let mut c = cfg(4);
    c.args = vec![test_type.into()];
    c
}

#[test]
fn every_request_is_answered_once_and_no_faster_than_its_service() {
    let r = spec(2.0, vec![0]).run(&elf("apps/service.elf"), server("jbsq")).unwrap();
    assert_eq!((r.outcome, r.unexpected), (Outcome::HostDone, 0));
    assert!(r.requests.iter().all(|q| q.service_cycles == 1600));
    let c = r.class_result("all", None, 100);
    assert_eq!((c.measured, c.replied), (500, 500));
    assert!(c.latency.min >= 500.0, "{:?}", c.latency);
    assert!((c.achieved_mrps - 2.0).abs() < 0.3, "{}", c.achieved_mrps);
}

#[test]
fn same_seed_same_times() {
    let run = || spec(3.0, vec![0, 1, 2, 3]).run(&elf("apps/service.elf"), server("rss")).unwrap().requests;
    assert_eq!(run(), run());
}

#[test]
fn overload_leaves_requests_unanswered_and_says_so() {
    let mut s = spec(20.0, vec![0]);
    s.drain = Time::from_us(5);
    let r = s.run(&elf("apps/service.elf"), server("jbsq")).unwrap();
    assert_eq!(r.outcome, Outcome::Deadline);
    let c = r.class_result("all", None, 100);
    assert!(c.replied < c.measured);
    assert_eq!(c.latency.max, f64::INFINITY);
}
