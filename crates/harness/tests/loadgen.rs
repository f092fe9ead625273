//! The load generator against the service-time server (`service.elf`): every request is
//! answered once, latency is at least the service time, and runs are reproducible.

use crate::common;

use common::{cfg, elf};
use nanopu_cluster::Outcome;
use nanopu_harness::loadgen::{Arrivals, Class, LoadSpec, Service};
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
        start: Time::ZERO,
        reply_at: Default::default(),
        kv: None,
        rdma: None,
        setalg: None,
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

#[test]
fn a_server_that_prints_its_usage_and_exits_is_a_problem_naming_code_and_output() {
    let s = spec(2.0, vec![0]);
    let r = s.run(&elf("apps/service.elf"), server("")).unwrap();
    assert_eq!(r.class_result("all", None, 0).replied, 0);
    let p = r.problems(&s).join("; ");
    assert!(p.contains("core 0 exited with code 2") && p.contains("usage: service.elf"), "{p}");
}

#[test]
fn requests_to_a_context_no_core_registered_are_a_problem() {
    let s = spec(2.0, vec![7]);
    let r = s.run(&elf("apps/service.elf"), server("jbsq")).unwrap();
    let p = r.problems(&s).join("; ");
    assert!(p.contains("message(s) for context 7 were never taken: no core registered context 7"), "{p}");
}

#[test]
fn a_class_without_any_reply_is_a_problem_and_overload_is_not() {
    let mut s = spec(2.0, vec![0]);
    (s.requests, s.warmup, s.drain) = (1, 0, Time::ZERO);
    let r = s.run(&elf("apps/service.elf"), server("jbsq")).unwrap();
    let p = r.problems(&s).join("; ");
    assert!(p.contains("none of the 1 requests of class \"a\"") && p.contains("deadline"), "{p}");
    let mut over = spec(20.0, vec![0]);
    over.drain = Time::from_us(5);
    let r = over.run(&elf("apps/service.elf"), server("jbsq")).unwrap();
    assert_eq!(r.problems(&over), Vec::<String>::new());
}

#[test]
fn rates_and_service_times_that_cannot_be_simulated_are_refused() {
    for rate in [1e-9, 0.0, -1.0, f64::NAN, f64::INFINITY, 1e10] {
        let e = spec(rate, vec![0]).validate().unwrap_err();
        assert!(e.starts_with("load.rates_mrps: "), "{rate}: {e}");
    }
    let mut s = spec(2.0, vec![0]);
    s.classes[0].service = Service::Fixed { ns: 1e30 };
    assert!(s.validate().unwrap_err().contains("service_ns"));
    s.classes[0].service = Service::Fixed { ns: f64::INFINITY };
    assert!(s.validate().unwrap_err().contains("service_ns"));
    s = spec(2.0, vec![0]);
    s.requests = nanopu_harness::loadgen::MAX_REQUESTS + 1;
    assert!(s.validate().unwrap_err().contains("load.requests"));
}

/// Bytes the current thread holds from the allocator, and the most it held since `reset`
/// (a single-node run allocates on the thread that runs it; other tests' threads do not
/// count).
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static NOW: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    pub struct Counting;

    fn add(bytes: isize) {
        let now = NOW.with(|n| {
            n.set(n.get() + bytes);
            n.get()
        });
        PEAK.with(|p| p.set(p.get().max(now)));
    }

    // SAFETY: every call goes to the system allocator unchanged; the counters are
    // thread-local cells initialised without allocating.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            add(l.size() as isize);
            // SAFETY: the caller's guarantees, passed on unchanged.
            unsafe { System.alloc(l) }
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            add(-(l.size() as isize));
            // SAFETY: the caller's guarantees, passed on unchanged.
            unsafe { System.dealloc(p, l) }
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            add(new as isize - l.size() as isize);
            // SAFETY: the caller's guarantees, passed on unchanged.
            unsafe { System.realloc(p, l, new) }
        }
    }

    /// Start a new peak from what is held now.
    pub fn reset() -> isize {
        let now = NOW.with(Cell::get);
        PEAK.with(|p| p.set(now));
        now
    }

    pub fn peak() -> isize {
        PEAK.with(Cell::get)
    }
}

#[global_allocator]
static COUNTING: counting::Counting = counting::Counting;

/// The most a run of `requests` requests holds at once, bytes.
fn peak_bytes(requests: usize) -> isize {
    let mut s = spec(4.0, vec![0]);
    s.requests = requests;
    let (elf, cfg) = (elf("apps/service.elf"), server("jbsq"));
    let before = counting::reset();
    let r = s.run(&elf, cfg).unwrap();
    assert_eq!(r.class_result("all", None, 0).replied, requests);
    counting::peak() - before
}

/// A long run holds the requests (48 bytes each), their send times for the end condition
/// (8 bytes each: only replies to requests end it, not a server's start-up messages) and a
/// bounded window of messages, not every message it sent and received. (Both runs are several windows long, so that the window's
/// share is the same; measured 69 bytes with the vectors' spare capacity.)
#[test]
fn a_long_run_holds_little_more_than_its_requests() {
    let (short, long) = (peak_bytes(10_000), peak_bytes(30_000));
    let per_request = (long - short) / 20_000;
    assert!(per_request <= 80, "{per_request} bytes per request");
}

/// The load generator feeds its requests to the test host a window at a time (to bound its
/// memory): every request's reply time is the one of a run given the whole script at once.
#[test]
fn a_run_fed_in_windows_times_every_reply_as_one_fed_at_once() {
    use nanopu_cluster::Simulation;
    use nanopu_cluster::TestHost;
    let mut s = spec(6.0, vec![0]);
    (s.requests, s.arrivals) = (10_000, Arrivals::Fixed);
    let r = s.run(&elf("apps/service.elf"), server("jbsq")).unwrap();
    let mut sim = Simulation::new(&elf("apps/service.elf"), server("jbsq")).unwrap();
    let ip = sim.node().ip;
    for q in &r.requests {
        sim.host.send_at(q.sent, TestHost::message(0, ip, q.context, &[q.service_cycles, q.sent.0]));
    }
    sim.host.stop_after(s.requests, |m| m.len == 16);
    sim.set_deadline(r.requests.last().unwrap().sent + s.drain);
    assert_eq!(sim.run().unwrap(), Outcome::HostDone);
    let mut once: Vec<(Time, Time)> =
        sim.host.received.iter().map(|h| (Time(h.msg.words[1]), h.time)).collect();
    once.sort();
    let windowed: Vec<(Time, Time)> = r.requests.iter().map(|q| (q.sent, q.replied.unwrap())).collect();
    assert_eq!(windowed, once);
}
