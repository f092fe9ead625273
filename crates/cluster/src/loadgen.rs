//! The load generator: a host on the node's port that sends requests open-loop and records
//! every request's send and reply times (the nanoPU paper's scheduling experiments).
//!
//! Each request is a 2-word message {service time in cycles, send time} to one of the
//! server's contexts, as the prototype's load generator sent; the server spins for the
//! service time and echoes both words back (`sw/apps/service.c`). The send time identifies
//! the request, so replies may come back in any order. Inter-arrival times are fixed or
//! exponential; each request belongs to a class (a share of the requests, a service-time
//! distribution, the contexts it may go to).

use crate::host::HOST_IP;
use crate::outcome::{Outcome, SimError};
use crate::{NodeConfig, Simulation, TestHost};
use nanopu_nic::Message;
use nanopu_sim::stats::{summarize, Summary};
use nanopu_sim::{Rng, Time};

/// Gaps between request send times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    Fixed,
    /// Poisson arrivals.
    Exponential,
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
    pub outcome: Outcome,
}

impl LoadSpec {
    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let fail = |f: &str, why: &str| Err(format!("load.{f}: {why}"));
        if !(self.rate_mrps > 0.0 && self.rate_mrps.is_finite()) {
            return fail("rates_mrps", "every rate must be positive");
        }
        if self.requests <= self.warmup {
            return fail("requests", "must be larger than load.warmup");
        }
        if self.classes.is_empty() {
            return fail("class", "at least one request class is needed");
        }
        let total: f64 = self.classes.iter().map(|c| c.fraction).sum();
        if (total - 1.0).abs() > 1e-9 {
            return fail("class", &format!("the fractions add up to {total}, not 1"));
        }
        self.classes.iter().try_for_each(Class::validate)
    }

    /// The requests to send, drawn from the seed (send times strictly increasing).
    pub fn schedule(&self, clock_hz: u64) -> Vec<Request> {
        let mut rng = Rng::stream(self.seed, 0x10ad);
        let gap_ns = 1e3 / self.rate_mrps;
        let mut t = 0.0;
        let mut last = Time::ZERO;
        (0..self.requests)
            .map(|_| {
                t += match self.arrivals {
                    Arrivals::Fixed => gap_ns,
                    Arrivals::Exponential => rng.exponential(gap_ns),
                };
                last = Time::from_ns_f64(t).max(last + Time(1));
                self.draw(&mut rng, last, clock_hz)
            })
            .collect()
    }

    fn draw(&self, rng: &mut Rng, sent: Time, clock_hz: u64) -> Request {
        let u = rng.next_f64();
        let mut acc = 0.0;
        let last = self.classes.len() - 1;
        let class = self.classes.iter().position(|c| {
            acc += c.fraction;
            u < acc
        });
        let class = class.unwrap_or(last);
        let c = &self.classes[class];
        let context = c.contexts[rng.below(c.contexts.len() as u64) as usize];
        let ns = c.service.draw(rng);
        let service_cycles = (ns * clock_hz as f64 / 1e9).round() as u64;
        Request { class, context, service_cycles, sent, replied: None }
    }

    /// Run the server under this load and return every request's times.
    pub fn run(&self, elf: &[u8], cfg: NodeConfig) -> Result<LoadResult, SimError> {
        self.validate().map_err(SimError::Setup)?;
        let mut requests = self.schedule(cfg.timing.clock_hz);
        let mut sim = Simulation::new(elf, cfg)?;
        let ip = sim.node().ip;
        for r in &requests {
            let words = [r.service_cycles, r.sent.0];
            sim.host.send_at(r.sent, TestHost::message(0, ip, r.context, &words));
        }
        sim.host.stop_after(requests.len(), is_reply);
        let last = requests.last().map_or(Time::ZERO, |r| r.sent);
        sim.set_deadline(last + self.drain);
        let outcome = sim.run()?;
        let unexpected = match_replies(&mut requests, &sim.host.received);
        Ok(LoadResult { requests, unexpected, outcome })
    }
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
        match self.service {
            Service::Fixed { ns } if ns >= 0.0 => Ok(()),
            Service::Exponential { mean_ns, max_ns } if mean_ns > 0.0 && max_ns >= mean_ns => Ok(()),
            _ => fail("service_ns must be positive (and max_ns at least the mean)"),
        }
    }
}

impl Service {
    fn draw(&self, rng: &mut Rng) -> f64 {
        match *self {
            Service::Fixed { ns } => ns,
            Service::Exponential { mean_ns, max_ns } => rng.exponential(mean_ns).min(max_ns),
        }
    }
}

/// A reply of the service server: two words from the node.
fn is_reply(m: &Message) -> bool {
    m.dst_ip == HOST_IP && m.len == 16
}

/// Give each request its reply time (matched by the echoed send time); the number of
/// arrivals that matched nothing.
fn match_replies(requests: &mut [Request], received: &[crate::host::HostMessage]) -> usize {
    let mut unexpected = 0;
    for h in received {
        let sent = h.msg.words.get(1).map(|&w| Time(w));
        let i = sent
            .filter(|_| is_reply(&h.msg))
            .and_then(|t| requests.binary_search_by_key(&t, |r| r.sent).ok());
        match i {
            Some(i) if requests[i].replied.is_none() => requests[i].replied = Some(h.time),
            _ => unexpected += 1,
        }
    }
    unexpected
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

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    #[test]
    fn schedule_has_the_offered_rate_and_mix() {
        let r = spec(Arrivals::Exponential).schedule(3_200_000_000);
        let span_us = r.last().unwrap().sent.as_us_f64();
        let rate = r.len() as f64 / span_us;
        assert!((rate - 2.0).abs() < 0.06, "rate {rate}");
        let long = r.iter().filter(|x| x.class == 1).count() as f64 / r.len() as f64;
        assert!((long - 0.1).abs() < 0.01, "long share {long}");
        assert!(r.iter().filter(|x| x.class == 1).all(|x| x.service_cycles == 16_000 && x.context != 0));
        assert!(r.windows(2).all(|w| w[0].sent < w[1].sent));
        assert_eq!(r, spec(Arrivals::Exponential).schedule(3_200_000_000), "same seed, same schedule");
    }

    #[test]
    fn fixed_arrivals_are_evenly_spaced() {
        let r = spec(Arrivals::Fixed).schedule(3_200_000_000);
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
        let mut requests = spec(Arrivals::Fixed).schedule(3_200_000_000);
        requests.truncate(4);
        requests[0].replied = Some(requests[0].sent + Time::from_ns_f64(100.0));
        let r = LoadResult { requests, unexpected: 0, outcome: Outcome::Deadline };
        let c = r.class_result("all", None, 0);
        assert_eq!((c.measured, c.replied, c.latency.median), (4, 1, f64::INFINITY));
        assert_eq!(c.latency.min, 100.0);
    }
}
