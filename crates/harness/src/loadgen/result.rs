//! A run's results: every request's times, the figures of a class (throughput, latency
//! summary) and, in words, why the figures do not measure the server when they do not.
//! A module of its own because this is read after the run, by reports and sweeps.

use super::{LoadSpec, Request, ServerEnd};
use crate::workload::kv::{KvErrors, KvOp};
use crate::workload::rdma::RdmaOp;
use crate::workload::server_cost::ServerCost;
use crate::workload::setalg::SetalgOp;
use nanopu_cluster::engine::outcome::Outcome;
use nanopu_sim::stats::{summarize, Summary};

/// The figures of one class (or all requests) at one offered load.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassResult {
    pub class: String,
    pub measured: usize,
    pub replied: usize,
    pub achieved_mrps: f64,
    /// Latency from send to reply, ns; requests without a reply count as infinitely late.
    pub latency: Summary,
}

/// The outcome of one load run.
#[derive(Debug)]
pub struct LoadResult {
    pub requests: Vec<Request>,
    /// Replies that matched no request (a server bug, reported rather than dropped).
    pub unexpected: usize,
    /// Messages the server sent before the first request (start-up messages, as some of
    /// the prototype's servers send): counted apart, neither replies nor a bug.
    pub startup: usize,
    pub outcome: Outcome,
    /// How the server ended, for [`LoadResult::problems`].
    pub server: ServerEnd,
    /// Key-value runs: what each request did and got, beside `requests` (apart, so that a
    /// service-time run's requests stay 48 bytes each).
    pub kv_ops: Vec<KvOp>,
    /// RDMA runs: what each request did and got, beside `requests`.
    pub rdma_ops: Vec<RdmaOp>,
    /// Set algebra runs: each request's query and verdict, beside `requests`.
    pub setalg_ops: Vec<SetalgOp>,
    /// Checked runs (key-value, RDMA or set algebra): wrong replies and lost requests (either makes the
    /// run fail).
    pub kv: Option<KvErrors>,
    /// What the server's cores spent from `start` to the end (`server_cost.rs`).
    pub cost: ServerCost,
}

impl LoadResult {
    /// Figures of the measured requests of one class (`None`: all classes).
    pub fn class_result(&self, name: &str, class: Option<usize>, warmup: usize) -> ClassResult {
        let measured: Vec<&Request> =
            self.requests[warmup..].iter().filter(|r| class.is_none_or(|c| r.class == c)).collect();
        let lat: Vec<f64> =
            measured.iter().map(|r| r.replied.map_or(f64::INFINITY, |t| (t - r.sent).as_ns_f64())).collect();
        let replied = lat.iter().filter(|l| l.is_finite()).count();
        ClassResult {
            class: name.into(),
            measured: measured.len(),
            replied,
            achieved_mrps: throughput(&measured),
            latency: summarize(&lat),
        }
    }

    /// Why this run's figures do not measure the server, if they do not: the server
    /// failed, requests went to a context no core registered, or a class got no reply at
    /// all. Empty when the figures stand (overload, with some requests unanswered, is a
    /// result, not a problem).
    pub fn problems(&self, spec: &LoadSpec) -> Vec<String> {
        let mut v = self.server.problems();
        if v.is_empty() {
            v = self.silent_classes(spec);
        }
        if let Some(e) = self.kv.as_ref().filter(|e| e.wrong + e.lost > 0) {
            v.push(format!(
                "{} wrong replies and {} lost requests (no reply by the end){}",
                e.wrong,
                e.lost,
                e.examples.first().map_or(String::new(), |x| format!("; first: {x}"))
            ));
        }
        if !v.is_empty() {
            v.push(format!("the run ended: {}", ending(self.outcome)));
        }
        v
    }

    /// One sentence per class that was sent requests and got no reply to any.
    fn silent_classes(&self, spec: &LoadSpec) -> Vec<String> {
        let count = |i: usize, replied: bool| {
            self.requests.iter().filter(|r| r.class == i && (!replied || r.replied.is_some())).count()
        };
        (spec.classes.iter().enumerate())
            .filter(|&(i, _)| count(i, false) > 0 && count(i, true) == 0)
            .map(|(i, c)| {
                format!(
                    "none of the {} requests of class \"{}\" (contexts {:?}) got a reply",
                    count(i, false),
                    c.name,
                    c.contexts
                )
            })
            .collect()
    }
}

/// Why a run ended, in words.
fn ending(o: Outcome) -> String {
    match o {
        Outcome::Deadline => "at its deadline, load.drain_us after the last request was sent".into(),
        Outcome::AllExited => "every core of the server exited".into(),
        Outcome::Quiescent => "nothing left to simulate (the server waits for what never comes)".into(),
        o => format!("early ({})", o.name()),
    }
}

/// Replies per microsecond from the first measured send to the last reply.
fn throughput(measured: &[&Request]) -> f64 {
    let first = measured.iter().map(|r| r.sent).min();
    let last = measured.iter().filter_map(|r| r.replied).max();
    let n = measured.iter().filter(|r| r.replied.is_some()).count();
    match (first, last) {
        (Some(a), Some(b)) if b > a => n as f64 / (b - a).as_us_f64(),
        _ => 0.0,
    }
}
