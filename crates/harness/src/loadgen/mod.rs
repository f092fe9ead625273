//! The load generator: a host on the node's port that sends requests open-loop and records
//! every request's send and reply times (the nanoPU paper's scheduling experiments).
//!
//! Each request is a 2-word message {service time in cycles, send time} to one of the
//! server's contexts, as the prototype's load generator sent; the server spins for the
//! service time and echoes both words back (`sw/apps/service.c`). The send time identifies
//! the request, so replies may come back in any order. Inter-arrival times are fixed or
//! exponential; each request belongs to a class (a share of the requests, a service-time
//! distribution, the contexts it may go to).
//!
//! The server node's NIC is its config's (`NodeConfig::nic_kind`): to an IceNIC node each
//! request and reply is one UDP frame, converted by `apps::hostnet` (docs/apps/mica.md "On
//! IceNIC"); the same records and checks follow. IceNIC serves the checked workloads (key-value,
//! RDMA, set algebra) on one core ([`ice_supported`]).
//!
//! Its parts: here the load's description (classes, specs, requests) and its checks;
//! `schedule`, the requests drawn from the seed; `run`, a run: the requests fed to the host a
//! window at a time and the replies matched to them; `server`, how the server ended and
//! which loads an IceNIC server takes; `result`, a run's figures and problems in words.

mod result;
mod run;
mod schedule;
mod server;
#[cfg(test)]
mod tests;

use crate::workload::kv::{KvOp, KvSpec};
use crate::workload::rdma::RdmaSpec;
use crate::workload::setalg::SetalgSpec;
use nanopu_sim::Time;

pub use result::{ClassResult, LoadResult};
pub use server::{ice_supported, ServerEnd, CONSOLE_MAX};

/// Gaps between request send times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    Fixed,
    /// Poisson arrivals.
    Exponential,
}

/// When a reply counts as received at the load generator (a request counts as sent when
/// its first byte leaves).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReplyAt {
    /// Its last byte arrived.
    #[default]
    LastByte,
    /// Its first byte arrived: the nanoPU prototype's load generator (in the FireSim switch)
    /// stamps a reply when its first flit comes in.
    FirstByte,
}

/// How long one request of a class asks the server to compute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Service {
    Fixed {
        ns: f64,
    },
    /// Exponential with this mean, clipped at `max_ns`.
    Exponential {
        mean_ns: f64,
        max_ns: f64,
    },
}

/// One class of requests.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    pub name: String,
    /// Share of the requests, 0..=1 (the shares of all classes add up to 1).
    pub fraction: f64,
    pub service: Service,
    /// Server contexts this class is sent to, one chosen uniformly per request.
    pub contexts: Vec<u16>,
}

/// One run of the load generator at one offered load.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadSpec {
    pub seed: u64,
    /// Offered load, million requests per second.
    pub rate_mrps: f64,
    /// Requests sent, warm-up included.
    pub requests: usize,
    /// The first `warmup` requests are not measured.
    pub warmup: usize,
    pub arrivals: Arrivals,
    pub classes: Vec<Class>,
    /// How long after the last send the run may go on for the last replies.
    pub drain: Time,
    /// Where the sends' clock starts (the first request goes one gap later): time for a
    /// server's start-up messages, which arrive before the first request.
    pub start: Time,
    /// When a reply counts as received.
    pub reply_at: ReplyAt,
    /// The key-value workload (`kv.rs`) instead of service-time requests: the classes are
    /// then "get" and "set", and every reply is checked.
    pub kv: Option<KvSpec>,
    /// The one-sided RDMA workload (`rdma.rs`): the classes are its operations, in the
    /// order of `rdma::KINDS`, and every reply is checked.
    pub rdma: Option<RdmaSpec>,
    /// The set algebra workload (`setalg.rs`): the classes are the query sizes, 1 to 4
    /// words, and every reply is checked.
    pub setalg: Option<SetalgSpec>,
}

/// One request: what was asked, and when it was sent and answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub class: usize,
    pub context: u16,
    pub service_cycles: u64,
    pub sent: Time,
    pub replied: Option<Time>,
}

/// Most requests per run: each keeps a [`Request`] (48 bytes) until the results are out.
pub const MAX_REQUESTS: usize = 100_000_000;
/// Highest offered load: one request per femtosecond, the resolution of simulated time.
pub const MAX_RATE_MRPS: f64 = 1e9;

impl LoadSpec {
    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let fail = |f: &str, why: String| Err(format!("load.{f}: {why}"));
        check_rate(self.rate_mrps, "load.rates_mrps")?;
        if self.requests <= self.warmup {
            return fail("requests", "must be larger than load.warmup".into());
        }
        if self.requests > MAX_REQUESTS {
            return fail("requests", format!("{} is more than {MAX_REQUESTS}", self.requests));
        }
        if self.classes.is_empty() {
            return fail("class", "at least one request class is needed".into());
        }
        let total: f64 = self.classes.iter().map(|c| c.fraction).sum();
        if (total - 1.0).abs() > 1e-9 {
            return fail("class", format!("the fractions add up to {total}, not 1"));
        }
        self.classes.iter().try_for_each(Class::validate)?;
        self.kv.as_ref().map(KvSpec::validate).transpose()?;
        self.rdma.as_ref().map(RdmaSpec::validate).transpose()?;
        self.setalg.as_ref().map(SetalgSpec::validate).transpose()?;
        self.expected_end().map(|_| ())
    }

    /// When the run ends if the sends span their mean: the last send plus the drain. A run
    /// whose sends or drain would pass the end of simulated time is refused here, before
    /// anything is drawn (exponential gaps may still run a little longer: `schedule`).
    fn expected_end(&self) -> Result<Time, String> {
        let span_us = self.start.as_us_f64() + self.requests as f64 / self.rate_mrps;
        let what = format!("load.rates_mrps: at {} Mrps, {} requests span", self.rate_mrps, self.requests);
        let span = Time::checked_from_us_f64(span_us, &what)?;
        span.checked_add_named(self.drain, "load.drain_us after the last request")
    }
}

/// An offered load must be positive, finite and at most [`MAX_RATE_MRPS`]; `what` names
/// where it was given.
pub fn check_rate(r: f64, what: &str) -> Result<(), String> {
    if r > 0.0 && r <= MAX_RATE_MRPS {
        return Ok(());
    }
    Err(format!("{what}: {r} is not an offered load (Mrps, more than 0 and at most {MAX_RATE_MRPS:e})"))
}

impl Class {
    fn validate(&self) -> Result<(), String> {
        let fail = |why: &str| Err(format!("load.class \"{}\": {why}", self.name));
        if !(0.0..=1.0).contains(&self.fraction) {
            return fail("fraction must be within 0..=1");
        }
        if self.contexts.is_empty() {
            return fail("contexts: at least one context is needed");
        }
        let what = format!("load.class \"{}\": service_ns", self.name);
        match self.service {
            Service::Fixed { ns } => Time::checked_from_ns_f64(ns, &what).map(|_| ()),
            Service::Exponential { mean_ns, max_ns } if mean_ns > 0.0 && max_ns >= mean_ns => {
                Time::checked_from_ns_f64(mean_ns, &what).map(|_| ())
            }
            _ => fail("service_ns must be positive (and max_ns at least the mean)"),
        }
    }
}
