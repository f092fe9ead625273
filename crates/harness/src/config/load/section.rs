//! `[load]` and `[[load.class]]`: the offered rates, the number of requests and their
//! arrivals, and the synthetic service's request classes. A module of its own because these bound the
//! run itself (its span within simulated time, its memory) whatever the workload.

use super::{KvFile, RdmaFile, SetalgFile};
use crate::loadgen::{Class, ReplyAt, Service};
use nanopu_cluster::config::bounds::{Bounds, Each, OneOf};
use nanopu_cluster::config::check::{self, fraction, time_ns, time_us, FRACTION, TIME_NS, TIME_US};
use schemars::transform::Transform;
use schemars::{JsonSchema, Schema};
use serde::Deserialize;

/// Gaps between sends.
pub const ARRIVALS: OneOf = OneOf(&["exponential", "fixed"]);
/// When a reply counts as received.
pub const REPLY_AT: OneOf = OneOf(&["last_byte", "first_byte"]);
/// Service time distributions.
pub const SERVICES: OneOf = OneOf(&["fixed", "exponential"]);
/// An offered load, Mrps.
pub const RATE_MRPS: Bounds<f64> = Bounds::above(0.0, MAX_RATE_MRPS);

/// `rates_mrps`' schema: at least one, each in [`RATE_MRPS`].
fn rates_schema(s: &mut Schema) {
    Each(RATE_MRPS).transform(s);
    s.insert("minItems".into(), 1.into());
}

/// A list that must not be empty (a class's contexts).
fn not_empty(s: &mut Schema) {
    s.insert("minItems".into(), 1.into());
}

/// `requests`: more than `warmup`, itself at least 0 (`LoadSection::check_requests`).
fn some_requests(s: &mut Schema) {
    s.insert("minimum".into(), 1.into());
}

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Seed of the arrivals, classes, keys and operations. Default 1.
    #[serde(default = "one")]
    pub seed: u64,
    /// Offered loads, million requests/s, one run each (required). Each more than 0 and at most
    /// 1e9; requests / rate (the span of the sends) at most one hour.
    #[schemars(transform = rates_schema)]
    pub rates_mrps: Vec<f64>,
    /// Requests per rate, warm-up included (required). More than `warmup`; their estimated
    /// memory (512 bytes each) within what the machine has.
    #[schemars(transform = some_requests)]
    pub requests: usize,
    /// First requests of each run not measured. Default 0.
    #[serde(default)]
    pub warmup: usize,
    /// Gaps between sends: "exponential" (default: Poisson arrivals) or "fixed".
    #[serde(default = "exponential")]
    #[schemars(transform = ARRIVALS.schema())]
    pub arrivals: String,
    /// How long a run goes on after the last send, us. Default 1,000; 0..=3.6e9 (1 h).
    #[serde(default = "thousand")]
    #[schemars(transform = TIME_US.schema())]
    pub drain_us: f64,
    /// The sends' clock starts here, us: servers that announce themselves first get this long.
    /// Default 0; 0..=3.6e9.
    #[serde(default)]
    #[schemars(transform = TIME_US.schema())]
    pub start_us: f64,
    /// When a reply counts as received: "last_byte" (default: its last byte reached the load
    /// generator) or "first_byte" (its first byte did, as the nanoPU prototype's load
    /// generator in the FireSim switch stamps a reply when its first flit arrives;
    /// docs/apps/mica.md "The prototype's setup"). Either way a request counts as sent when
    /// its first byte leaves. "first_byte" is refused with an IceNIC server.
    #[serde(default = "last_byte")]
    #[schemars(transform = REPLY_AT.schema())]
    pub reply_at: String,
    /// Request classes of the synthetic service (`sw/apps/service.c`): one entry each. Not with
    /// `[load.kv]`, `[load.rdma]` or `[load.setalg]`.
    #[serde(default)]
    pub class: Vec<ClassFile>,
    /// The key-value workload against `sw/apps/mica.c` (docs/apps/mica.md): classes "get" and
    /// "set", every reply checked.
    pub kv: Option<KvFile>,
    /// The one-sided RDMA workload against `sw/apps/rdma.c` (docs/apps/rdma.md): one class per
    /// operation, every reply checked.
    pub rdma: Option<RdmaFile>,
    /// The set algebra (document search) workload against `sw/apps/setalg.c`
    /// (docs/apps/setalg.md): one class per query size, "1-word" to "4-word", every answer
    /// checked against the generator's own index of the same corpus.
    pub setalg: Option<SetalgFile>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ClassFile {
    /// The class's name in the report (required).
    pub name: String,
    /// Share of the requests (required); [0, 1], the classes' shares add up to 1.
    #[schemars(transform = FRACTION.schema())]
    pub fraction: f64,
    /// Service time distribution: "fixed" (default) or "exponential" (mean `service_ns`,
    /// clipped at `max_ns`).
    #[serde(default = "fixed")]
    #[schemars(transform = SERVICES.schema())]
    pub service: String,
    /// Service time, or its mean, ns (required). 0..=3.6e12 (1 h); more than 0 for
    /// "exponential".
    #[schemars(transform = TIME_NS.schema())]
    pub service_ns: f64,
    /// Longest service time, ns (absent: no clip). At least `service_ns`, at most 3.6e12.
    #[schemars(transform = TIME_NS.schema())]
    pub max_ns: Option<f64>,
    /// Server contexts its requests go to, one chosen uniformly per request (required; at
    /// least one).
    #[schemars(transform = not_empty)]
    pub contexts: Vec<u16>,
}

fn one() -> u64 {
    1
}
fn thousand() -> f64 {
    1000.0
}
fn exponential() -> String {
    "exponential".into()
}
fn last_byte() -> String {
    "last_byte".into()
}
fn fixed() -> String {
    "fixed".into()
}

/// Most requests per second the generator can offer, millions: one per femtosecond (send
/// times are whole, strictly increasing femtoseconds, `loadgen`).
const MAX_RATE_MRPS: f64 = 1e9;
/// Bytes one request takes over a run, an *estimate*: the request record, its message in
/// the host's script and in the event queue, the reply and its record (measured: about
/// 0.37 KB per request between 20,000 and 200,000 requests of 2-word messages; rounded up).
const BYTES_PER_REQUEST: u64 = 512;

impl LoadSection {
    /// Check every value; `available` bytes of memory bound the number of requests.
    pub(super) fn check(&self, available: Option<u64>) -> Result<(), String> {
        if self.rates_mrps.is_empty() {
            return Err("load.rates_mrps: at least one rate is needed".into());
        }
        self.check_requests(available)?;
        self.rates_mrps.iter().try_for_each(|&r| self.check_rate(r))?;
        ARRIVALS.check(&self.arrivals, "load.arrivals")?;
        time_us(self.drain_us, "load.drain_us")?;
        time_us(self.start_us, "load.start_us")?;
        self.reply_at()?;
        self.class.iter().try_for_each(ClassFile::check)?;
        self.check_class_names()
    }

    /// When a reply counts as received.
    pub(super) fn reply_at(&self) -> Result<ReplyAt, String> {
        match REPLY_AT.check(&self.reply_at, "load.reply_at")? {
            "last_byte" => Ok(ReplyAt::LastByte),
            _ => Ok(ReplyAt::FirstByte),
        }
    }

    /// Each class's name once: it names the class's row in the report.
    fn check_class_names(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        match self.class.iter().find(|c| !seen.insert(c.name.as_str())) {
            Some(c) => Err(format!(
                "load.class \"{}\": the name is given to two classes; each names its own row in the report",
                c.name
            )),
            None => Ok(()),
        }
    }

    fn check_requests(&self, available: Option<u64>) -> Result<(), String> {
        if self.requests <= self.warmup {
            return Err(format!(
                "load.requests: {} must be more than load.warmup ({})",
                self.requests, self.warmup
            ));
        }
        let need = (self.requests as u64).saturating_mul(BYTES_PER_REQUEST);
        match available {
            Some(have) if need > have => Err(format!(
                "load.requests: {} requests need about {:.1} GB (an estimate, {BYTES_PER_REQUEST} \
                 bytes each), more than the {:.1} GB of memory available",
                self.requests,
                need as f64 / 1e9,
                have as f64 / 1e9
            )),
            _ => Ok(()),
        }
    }

    /// A rate: positive, at most [`MAX_RATE_MRPS`], and its sends span at most one hour.
    fn check_rate(&self, r: f64) -> Result<(), String> {
        RATE_MRPS.check(r, "load.rates_mrps", " Mrps")?;
        let span_us = self.requests as f64 / r;
        if span_us > check::MAX_KEY_US {
            return Err(format!(
                "load.rates_mrps: {} requests at {r} Mrps take about {:.3e} s to send, more \
                 than the one-hour limit of simulated time",
                self.requests,
                span_us / 1e6
            ));
        }
        Ok(())
    }
}

impl ClassFile {
    fn check(&self) -> Result<(), String> {
        let key = |k: &str| format!("load.class \"{}\": {k}", self.name);
        fraction(self.fraction, &key("fraction"))?;
        SERVICES.check(&self.service, &key("service"))?;
        if self.contexts.is_empty() {
            return Err(format!("{}: at least one context is needed", key("contexts")));
        }
        time_ns(self.service_ns, &key("service_ns"))?;
        if let Some(m) = self.max_ns {
            time_ns(m, &key("max_ns"))?;
        }
        Ok(())
    }

    pub(super) fn to_class(&self) -> Result<Class, String> {
        let service =
            match SERVICES.check(&self.service, &format!("load.class \"{}\": service", self.name))? {
                "fixed" => Service::Fixed { ns: self.service_ns },
                _ => Service::Exponential {
                    mean_ns: self.service_ns,
                    max_ns: self.max_ns.unwrap_or(f64::INFINITY),
                },
            };
        Ok(Class {
            name: self.name.clone(),
            fraction: self.fraction,
            service,
            contexts: self.contexts.clone(),
        })
    }
}
