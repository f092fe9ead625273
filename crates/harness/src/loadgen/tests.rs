//! The schedule, reply matching, console cutting and class figures of the load generator.

use super::run::{match_replies, Strays};
use super::server::cut_console;
use super::*;
use crate::workload::server_cost::ServerCost;
use nanopu_cluster::engine::outcome::Outcome;
use nanopu_cluster::host::HOST_IP;
use nanopu_nic::Message;

#[test]
fn a_cut_console_says_how_much_was_cut() {
    let s = cut_console("é".repeat(1001));
    assert!(s.ends_with(" [... 2 more bytes cut]"), "{}", &s[s.len() - 30..]);
    assert_eq!(cut_console("short".into()), "short");
}

#[test]
fn messages_before_the_first_request_are_start_up_messages_not_replies() {
    let request =
        |ns| Request { class: 0, context: 0, service_cycles: 1, sent: Time::from_ns(ns), replied: None };
    let mut requests = vec![request(1000), request(2000)];
    let from_server = |at: u64, words: Vec<u64>| nanopu_cluster::host::HostMessage {
        time: Time::from_ns(at),
        msg: Message {
            src_ip: 0,
            src_context: 0,
            dst_ip: HOST_IP,
            dst_context: 0,
            len: 8 * words.len() as u16,
            group: None,
            words: words.into(),
        },
    };
    let received = [
        from_server(500, vec![7, 9]),                      // start-up, looks like a reply
        from_server(1500, vec![1, Time::from_ns(1000).0]), // the first reply
        from_server(1600, vec![1, Time::from_ns(1500).0]), // matches nothing: a bug
    ];
    let strays = match_replies(&mut requests, &received, None);
    assert_eq!(strays, Strays { startup: 1, unexpected: 1 });
    assert_eq!(requests[0].replied, Some(Time::from_ns(1500)));
}

fn spec(arrivals: Arrivals) -> LoadSpec {
    let class = |name: &str, fraction, ns, contexts: Vec<u16>| Class {
        name: name.into(),
        fraction,
        service: Service::Fixed { ns },
        contexts,
    };
    LoadSpec {
        seed: 3,
        rate_mrps: 2.0,
        requests: 20_000,
        warmup: 100,
        arrivals,
        classes: vec![class("short", 0.9, 500.0, vec![0]), class("long", 0.1, 5000.0, vec![1, 2])],
        drain: Time::from_ns_f64(1e6),
        start: Time::ZERO,
        reply_at: Default::default(),
        kv: None,
        rdma: None,
        setalg: None,
    }
}

#[test]
fn schedule_has_the_offered_rate_and_mix() {
    let r = spec(Arrivals::Exponential).schedule(3_200_000_000).unwrap();
    let span_us = r.last().unwrap().sent.as_us_f64();
    let rate = r.len() as f64 / span_us;
    assert!((rate - 2.0).abs() < 0.06, "rate {rate}");
    let long = r.iter().filter(|x| x.class == 1).count() as f64 / r.len() as f64;
    assert!((long - 0.1).abs() < 0.01, "long share {long}");
    assert!(r.iter().filter(|x| x.class == 1).all(|x| x.service_cycles == 16_000 && x.context != 0));
    assert!(r.windows(2).all(|w| w[0].sent < w[1].sent));
    assert_eq!(r, spec(Arrivals::Exponential).schedule(3_200_000_000).unwrap(), "same seed, same schedule");
}

#[test]
fn fixed_arrivals_are_evenly_spaced() {
    let r = spec(Arrivals::Fixed).schedule(3_200_000_000).unwrap();
    assert_eq!((r[1].sent - r[0].sent), Time::from_ns_f64(500.0));
}

#[test]
fn bad_specs_name_the_field() {
    let mut s = spec(Arrivals::Fixed);
    s.classes[0].fraction = 0.5;
    assert!(s.validate().unwrap_err().contains("fractions add up"));
    s = spec(Arrivals::Fixed);
    s.warmup = s.requests;
    assert!(s.validate().unwrap_err().contains("load.requests"));
}

#[test]
fn unanswered_requests_count_as_infinitely_late() {
    let mut requests = spec(Arrivals::Fixed).schedule(3_200_000_000).unwrap();
    requests.truncate(4);
    requests[0].replied = Some(requests[0].sent + Time::from_ns_f64(100.0));
    let r = LoadResult {
        requests,
        unexpected: 0,
        startup: 0,
        outcome: Outcome::Deadline,
        server: ServerEnd::default(),
        kv_ops: Vec::new(),
        rdma_ops: Vec::new(),
        setalg_ops: Vec::new(),
        kv: None,
        cost: ServerCost::default(),
    };
    let c = r.class_result("all", None, 0);
    assert_eq!((c.measured, c.replied, c.latency.median), (4, 1, f64::INFINITY));
    assert_eq!(c.latency.min, 100.0);
}
