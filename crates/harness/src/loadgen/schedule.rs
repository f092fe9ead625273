//! The schedule: every request of a run drawn from the seed before the run starts (send
//! times strictly increasing, a class, a context, a service time or a key-value operation).
//! A module of its own because it is pure arithmetic on the spec, tested without a server.

use super::{Arrivals, KvOp, KvSpec, LoadSpec, Request, Service};
use crate::workload::kv::KeyChooser;
use nanopu_sim::{Rng, Time};

impl LoadSpec {
    /// The requests to send, drawn from the seed (send times strictly increasing); an error
    /// if one would be sent past the end of simulated time.
    pub fn schedule(&self, clock_hz: u64) -> Result<Vec<Request>, String> {
        self.schedule_kv(clock_hz).map(|(r, _)| r)
    }

    /// The requests, and for a key-value run what each does (else no operations).
    pub fn schedule_kv(&self, clock_hz: u64) -> Result<(Vec<Request>, Vec<KvOp>), String> {
        let mut rng = Rng::stream(self.seed, 0x10ad);
        let gap_ns = 1e3 / self.rate_mrps;
        let (mut t, mut last) = (self.start.as_ns_f64(), Time::ZERO);
        let mut v = Vec::with_capacity(self.requests);
        let mut keys = self.kv.as_ref().map(KvSpec::chooser);
        let mut ops = Vec::new();
        for i in 0..self.requests {
            t += match self.arrivals {
                Arrivals::Fixed => gap_ns,
                Arrivals::Exponential => rng.exponential(gap_ns),
            };
            last = self.send_time(t, i)?.max(last + Time(1));
            v.push(match &mut keys {
                None => self.draw(&mut rng, last, clock_hz),
                Some(keys) => {
                    let (r, op) = self.draw_kv(&mut rng, i, last, keys);
                    ops.push(op);
                    r
                }
            });
        }
        Ok((v, ops))
    }

    /// Request `i`'s send time from `t_ns`, or why it cannot be simulated.
    fn send_time(&self, t_ns: f64, i: usize) -> Result<Time, String> {
        Time::checked_from_ns_f64(t_ns, "send time")
            .map_err(|e| format!("load.rates_mrps: at {} Mrps, request {i}'s {e}", self.rate_mrps))
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

    /// Key-value request `i`: class 0 ("get") or 1 ("set"), its key, its context.
    fn draw_kv(&self, rng: &mut Rng, i: usize, sent: Time, keys: &mut KeyChooser) -> (Request, KvOp) {
        let kv = self.kv.as_ref().expect("a key-value spec");
        let set = kv.is_set(i, rng.next_f64());
        let op = keys.draw(rng, set);
        let context = kv.context(op.key.into());
        (Request { class: usize::from(set), context, service_cycles: 0, sent, replied: None }, op)
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
