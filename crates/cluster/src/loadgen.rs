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

use crate::apps::hostnet::{self, HostNet};
use crate::config::NicKind;
use crate::host::HOST_IP;
use crate::kv::{self, KeyChooser, KvErrors, KvOp, KvSpec};
use crate::outcome::{Outcome, SimError};
use crate::rdma::{self, RdmaOp, RdmaSpec};
use crate::server_cost::ServerCost;
use crate::setalg::{self, SetalgOp, SetalgSpec};
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
    /// Where the sends' clock starts (the first request goes one gap later): time for a
    /// server's start-up messages, which arrive before the first request.
    pub start: Time,
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

/// What the end of a run tells about the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerEnd {
    /// Cores that exited with a non-zero code: (core, code).
    pub failed: Vec<(usize, i64)>,
    /// What the cores printed ("core N: ..."), cut to [`CONSOLE_MAX`] bytes.
    pub console: String,
    /// Contexts no core registered, with the requests the NIC holds for them.
    pub unregistered: Vec<(u16, usize)>,
    /// An IceNIC server's dropped frames (its receive buffer full), in a sentence.
    pub nic_drops: Option<String>,
}

/// Most requests per run: each keeps a [`Request`] (48 bytes) until the results are out.
pub const MAX_REQUESTS: usize = 100_000_000;
/// Highest offered load: one request per femtosecond, the resolution of simulated time.
pub const MAX_RATE_MRPS: f64 = 1e9;
/// Most console output kept in [`ServerEnd::console`], bytes.
pub const CONSOLE_MAX: usize = 2000;
/// Requests handed to the test host at a time. The host logs every message it sends and
/// receives, and queues its whole script as events when the run starts: fed everything at
/// once, a run held about 260 bytes of heap per request (300 of resident memory) until it
/// ended. Fed a window at a time, with the logs emptied between windows, it holds only the
/// requests themselves. A run that ends at a deadline stops before the first later event,
/// so running it again continues the same run: the times are those of a run fed at once
/// (a send's order among other events at the same femtosecond changes nothing the node
/// sees: the host's link is the only state a send touches).
const WINDOW: usize = 4096;

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
                    let (r, op) = self.draw_kv(&mut rng, last, keys);
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

    /// A key-value request: class 0 ("get") or 1 ("set"), its key, its context.
    fn draw_kv(&self, rng: &mut Rng, sent: Time, keys: &mut KeyChooser) -> (Request, KvOp) {
        let kv = self.kv.as_ref().expect("a key-value spec");
        let set = rng.next_f64() >= kv.get_fraction;
        let op = keys.draw(rng, set);
        let context = kv.context(op.key.into());
        (Request { class: usize::from(set), context, service_cycles: 0, sent, replied: None }, op)
    }

    /// Run the server under this load and return every request's times.
    pub fn run(&self, elf: &[u8], cfg: NodeConfig) -> Result<LoadResult, SimError> {
        self.validate().map_err(SimError::Setup)?;
        if cfg.nic_kind == NicKind::IceNic {
            let checked = self.kv.is_some() || self.rdma.is_some() || self.setalg.is_some();
            ice_supported(self.kv.as_ref(), checked, cfg.nic.cores).map_err(SimError::Setup)?;
        }
        let net = HostNet(cfg.nic_kind);
        let (mut requests, mut kv_ops) = self.schedule_kv(cfg.timing.clock_hz).map_err(SimError::Setup)?;
        let mut rdma_ops =
            self.rdma.as_ref().map_or_else(Vec::new, |s| s.ops(requests.iter().map(|r| r.class)));
        let mut setalg_ops =
            self.setalg.as_ref().map_or_else(Vec::new, |s| s.ops(requests.iter().map(|r| r.class)));
        let end = self.end(&requests, &cfg).map_err(SimError::Setup)?;
        let mut sim = Simulation::new(elf, cfg)?;
        // Only replies to requests count towards the end, not a start-up message that looks
        // like one (8 bytes per request while the run lasts).
        let sent: Vec<Time> = requests.iter().map(|r| r.sent).collect();
        let is_kv = self.kv.is_some() || self.rdma.is_some() || self.setalg.is_some();
        net.stop_after_where(&mut sim, requests.len(), move |m| {
            is_reply(m, is_kv) && echoed(m).is_some_and(|t| sent.binary_search(&t).is_ok())
        });
        let before = self.start_up(&mut sim)?;
        let check = match (&self.kv, &self.rdma, &self.setalg) {
            (Some(spec), _, _) => Some(Checked::Kv { spec, ops: &mut kv_ops }),
            (None, Some(_), _) => Some(Checked::Rdma(&mut rdma_ops)),
            (None, None, Some(_)) => Some(Checked::Setalg(&mut setalg_ops)),
            (None, None, None) => None,
        };
        let (outcome, strays) = feed(&mut sim, net, &mut requests, end, check)?;
        let cost = ServerCost::of(&sim).since(before);
        let server = ServerEnd::of(&mut sim);
        let kv = self.kv.as_ref().map(|k| kv_check(k, &requests, &kv_ops));
        let times: Vec<(Time, Option<Time>)> = requests.iter().map(|r| (r.sent, r.replied)).collect();
        let kv = kv.or_else(|| self.rdma.as_ref().map(|_| rdma::check(&rdma_ops, &times)));
        let kv = kv.or_else(|| self.setalg.as_ref().map(|_| setalg::check(&setalg_ops)));
        let (unexpected, startup) = (strays.unexpected, strays.startup);
        Ok(LoadResult {
            requests,
            unexpected,
            startup,
            outcome,
            server,
            kv_ops,
            rdma_ops,
            setalg_ops,
            kv,
            cost,
        })
    }

    /// Run the server alone until `start` (if later than 0), and its counters then. The
    /// run goes on from there as if it had not stopped (see [`WINDOW`]).
    fn start_up(&self, sim: &mut Simulation) -> Result<ServerCost, SimError> {
        if self.start > Time::ZERO {
            sim.set_deadline(self.start);
            sim.run()?;
        }
        Ok(ServerCost::of(sim))
    }

    /// The run's deadline: `drain` after the last send, within the server's time limit.
    fn end(&self, requests: &[Request], cfg: &NodeConfig) -> Result<Time, String> {
        let last = requests.last().map_or(Time::ZERO, |r| r.sent);
        let end = last.checked_add_named(self.drain, "load.drain_us after the last request")?;
        let period = nanopu_sim::Clock::from_hz(cfg.timing.clock_hz)?.period().0;
        let limit = Time(period.saturating_mul(cfg.max_cycles));
        if end > limit {
            let (rate, c) = (self.rate_mrps, cfg.max_cycles);
            return Err(format!(
                "load.rates_mrps: at {rate} Mrps the run lasts until {end}, past the server's time limit of {limit} ({c} cycles)"
            ));
        }
        Ok(end)
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

/// Hand the requests to the host a window at a time (see [`WINDOW`]), running the server up
/// to each window's last send, then to `end`; the outcome and the arrivals that were no
/// reply.
fn feed(
    sim: &mut Simulation,
    net: HostNet,
    requests: &mut [Request],
    end: Time,
    mut check: Option<Checked>,
) -> Result<(Outcome, Strays), SimError> {
    let (mut from, mut strays) = (0, Strays::default());
    loop {
        let to = (from + WINDOW).min(requests.len());
        script(sim, net, requests, from..to, check.as_ref());
        let done = to == requests.len();
        sim.set_deadline(if done { end } else { requests[to - 1].sent });
        let outcome = sim.run()?;
        strays.add(collect(sim, net, requests, check.as_mut()));
        if done || outcome != Outcome::Deadline {
            return Ok((outcome, strays));
        }
        from = to;
    }
}

/// Put requests `range` in the host's script to their context: {service cycles, send
/// time}, or a checked workload's request tagged with its send time.
fn script(
    sim: &mut Simulation,
    net: HostNet,
    requests: &[Request],
    range: std::ops::Range<usize>,
    check: Option<&Checked>,
) {
    let ip = sim.node().ip;
    for (i, r) in requests.iter().enumerate().take(range.end).skip(range.start) {
        let words = match check {
            Some(c) => c.request_words(i, r.sent.0),
            None => vec![r.service_cycles, r.sent.0],
        };
        net.send_at(sim, r.sent, TestHost::message(0, ip, r.context, &words));
    }
}

/// A checked run's requests' operations, beside the requests (and the key-value
/// workload's spec, which builds and judges its messages).
enum Checked<'a> {
    Kv { spec: &'a KvSpec, ops: &'a mut [KvOp] },
    Rdma(&'a mut [RdmaOp]),
    Setalg(&'a mut [SetalgOp]),
}

impl Checked<'_> {
    /// Request `i`'s payload words, tagged with its send time.
    fn request_words(&self, i: usize, tag: u64) -> Vec<u64> {
        match self {
            Checked::Kv { spec, ops } => spec.request_words(&ops[i], tag),
            Checked::Rdma(ops) => RdmaSpec::request_words(&ops[i], tag),
            Checked::Setalg(ops) => SetalgSpec::request_words(&ops[i], tag),
        }
    }

    /// Judge the reply `words` to request `i`, and keep the verdict.
    fn judge(&mut self, i: usize, words: &[u64]) {
        match self {
            Checked::Kv { spec, ops } => ops[i].answer = Some(spec.judge(&ops[i], words)),
            Checked::Rdma(ops) => ops[i].answer = Some(RdmaSpec::judge(&ops[i], words)),
            Checked::Setalg(ops) => ops[i].answer = Some(SetalgSpec::judge(&ops[i], words)),
        }
    }
}

/// Wrong replies and lost requests of a key-value run.
fn kv_check(spec: &KvSpec, requests: &[Request], ops: &[KvOp]) -> KvErrors {
    let observed: Vec<kv::Observed> = (requests.iter().zip(ops))
        .map(|(r, op)| kv::Observed { op, sent: r.sent, replied: r.replied })
        .collect();
    kv::check(spec, &observed)
}

/// Give requests the replies received so far, and empty the host's logs; the arrivals
/// that matched no request.
fn collect(sim: &mut Simulation, net: HostNet, requests: &mut [Request], kv: Option<&mut Checked>) -> Strays {
    let (received, not_messages) = net.take_received(sim);
    let mut strays = match_replies(requests, &received, kv);
    strays.unexpected += not_messages;
    strays
}

/// Whether an IceNIC server can take this load: a checked workload (`checked`: key-value,
/// RDMA or set algebra, not service-time classes), the key-value one (`kv`) with static
/// steering, one core (the NIC has one queue pair, driven by hart 0:
/// sw/include/appnet_ice.h). Several cores and JBSQ need a multi-queue IceNIC, not modelled
/// yet (docs/apps/mica.md "On IceNIC").
pub fn ice_supported(kv: Option<&KvSpec>, checked: bool, cores: usize) -> Result<(), String> {
    let why = match kv {
        _ if cores != 1 => "server.cores: an IceNIC server runs on one core (its NIC has one queue pair)",
        _ if !checked => {
            "load: an IceNIC server takes only the checked workloads ([load.kv], sw/apps/mica_ice.c; \
             [load.rdma], rdma_ice.c; [load.setalg], setalg_ice.c), not service-time classes"
        }
        Some(k) if k.steering != kv::Steering::Static => {
            "load.kv.steering: \"jbsq\" is the nanoPU NIC's core selection; an IceNIC server takes \"static\""
        }
        _ => return Ok(()),
    };
    Err(format!("{why} (IceNIC load runs: docs/apps/mica.md \"On IceNIC\")"))
}

/// Arrivals that were no reply to a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Strays {
    /// Before the first request was sent: the server's start-up messages.
    startup: usize,
    /// After: a server bug.
    unexpected: usize,
}

impl Strays {
    fn add(&mut self, o: Strays) {
        (self.startup, self.unexpected) = (self.startup + o.startup, self.unexpected + o.unexpected);
    }
}

/// The request send time a reply echoes (its second word).
fn echoed(m: &Message) -> Option<Time> {
    m.words.get(1).map(|&w| Time(w))
}

impl ServerEnd {
    fn of(sim: &mut Simulation) -> ServerEnd {
        let node = &mut sim.nodes[0];
        let failed = (node.cores.iter().enumerate())
            .filter_map(|(i, c)| c.halted().filter(|&x| x != 0).map(|x| (i, x)))
            .collect();
        let unregistered = node.nic.nanopu().map_or(Vec::new(), |nic| {
            let registered = |ctx: u16| (0..nic.params().cores).any(|i| nic.core(i).context(ctx).is_some());
            nic.held().filter(|&(ctx, _)| !registered(ctx)).collect()
        });
        let ice = node.ice().is_some();
        let console = consoles(&mut node.cores);
        let nic_drops = ice.then(|| hostnet::dropped(sim).err()).flatten();
        ServerEnd { failed, console, unregistered, nic_drops }
    }

    /// What went wrong with the server, one sentence each: its failure if it failed (what
    /// follows from that need not be said), else the contexts it never registered; and
    /// frames its IceNICs dropped (a likely cause of a failure: lost messages).
    fn problems(&self) -> Vec<String> {
        if self.failed.is_empty() {
            let unserved = |(ctx, held): &(u16, usize)| {
                format!(
                    "no core of the server registered context {ctx} (the NIC holds {held} requests for it)"
                )
            };
            return self.unregistered.iter().map(unserved).chain(self.nic_drops.clone()).collect();
        }
        let exits: Vec<String> =
            self.failed.iter().map(|(c, x)| format!("core {c} exited with code {x}")).collect();
        let printed = match self.console.as_str() {
            "" => "it printed nothing".to_string(),
            c => format!("it printed {c:?}"),
        };
        let failed = format!("the server failed: {}; {printed}", exits.join(", "));
        std::iter::once(failed).chain(self.nic_drops.clone()).collect()
    }
}

/// What each core printed, "core N: text" per line, cut to [`CONSOLE_MAX`] bytes.
fn consoles(cores: &mut [nanopu_riscv::Core]) -> String {
    let mut s = String::new();
    for (i, c) in cores.iter_mut().enumerate() {
        let text = String::from_utf8_lossy(&c.take_console()).trim().to_string();
        if !text.is_empty() {
            s.push_str(&format!("{}core {i}: {text}", if s.is_empty() { "" } else { "\n" }));
        }
    }
    cut_console(s)
}

/// `s` within [`CONSOLE_MAX`] bytes (at a character boundary), saying how much was cut.
fn cut_console(mut s: String) -> String {
    if s.len() > CONSOLE_MAX {
        let cut = (0..=CONSOLE_MAX).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        let more = s.len() - cut;
        s.truncate(cut);
        s.push_str(&format!(" [... {more} more bytes cut]"));
    }
    s
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

impl Service {
    fn draw(&self, rng: &mut Rng) -> f64 {
        match *self {
            Service::Fixed { ns } => ns,
            Service::Exponential { mean_ns, max_ns } => rng.exponential(mean_ns).min(max_ns),
        }
    }
}

/// A reply: two words from the node (the service server), or at least two (a checked
/// workload).
fn is_reply(m: &Message, kv: bool) -> bool {
    m.dst_ip == HOST_IP && (m.len == 16 || (kv && m.len > 16 && m.words.len() >= 2))
}

/// Give each request its reply time (matched by the echoed send time); the arrivals that
/// matched nothing, before the first request (start-up messages) and after.
fn match_replies(
    requests: &mut [Request],
    received: &[crate::host::HostMessage],
    mut kv: Option<&mut Checked>,
) -> Strays {
    let first = requests.first().map_or(Time::ZERO, |r| r.sent);
    let mut strays = Strays::default();
    for h in received {
        let i = echoed(&h.msg)
            .filter(|_| is_reply(&h.msg, kv.is_some()))
            .and_then(|t| requests.binary_search_by_key(&t, |r| r.sent).ok());
        match i {
            Some(i) if requests[i].replied.is_none() => {
                requests[i].replied = Some(h.time);
                if let Some(k) = kv.as_deref_mut() {
                    k.judge(i, &h.msg.words);
                }
            }
            _ if h.time < first => strays.startup += 1,
            _ => strays.unexpected += 1,
        }
    }
    strays
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let from_server = |at: u64, words: Vec<u64>| crate::host::HostMessage {
            time: Time::from_ns(at),
            msg: Message {
                src_ip: 0,
                src_context: 0,
                dst_ip: HOST_IP,
                dst_context: 0,
                len: 8 * words.len() as u16,
                group: None,
                words,
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
        assert_eq!(
            r,
            spec(Arrivals::Exponential).schedule(3_200_000_000).unwrap(),
            "same seed, same schedule"
        );
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
}
