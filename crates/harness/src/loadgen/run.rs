//! A load run: the server started, the requests handed to the test host a window at a
//! time, each reply matched to its request by the send time it echoes (and judged, for a
//! checked workload). A module of its own because this is the one part that drives a simulation.

use super::server::ice_supported;
use super::{LoadResult, LoadSpec, ReplyAt, Request, ServerEnd};
use crate::apps::hostnet::HostNet;
use crate::workload::kv::{self, KvErrors, KvOp, KvSpec};
use crate::workload::rdma::{self, RdmaOp, RdmaSpec};
use crate::workload::server_cost::ServerCost;
use crate::workload::setalg::{self, SetalgOp, SetalgSpec};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::config::PortParams;
use nanopu_cluster::engine::outcome::{Outcome, SimError};
use nanopu_cluster::host::HOST_IP;
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_nic::Message;
use nanopu_sim::Time;

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
    /// Run the server under this load and return every request's times.
    pub fn run(&self, elf: &[u8], cfg: NodeConfig) -> Result<LoadResult, SimError> {
        self.validate().map_err(SimError::Setup)?;
        self.check_nic(&cfg).map_err(SimError::Setup)?;
        let net = HostNet(cfg.nic_kind);
        let (mut requests, mut kv_ops) = self.schedule_kv(cfg.timing.clock_hz).map_err(SimError::Setup)?;
        let mut rdma_ops =
            self.rdma.as_ref().map_or_else(Vec::new, |s| s.ops(requests.iter().map(|r| r.class)));
        let mut setalg_ops =
            self.setalg.as_ref().map_or_else(Vec::new, |s| s.ops(requests.iter().map(|r| r.class)));
        let end = self.end(&requests, &cfg).map_err(SimError::Setup)?;
        let first_byte = (self.reply_at == ReplyAt::FirstByte).then(|| cfg.port.clone());
        let mut sim = Simulation::new(elf, cfg)?;
        self.stop_after_replies(&mut sim, net, &requests);
        let before = self.start_up(&mut sim)?;
        let check = self.checked(&mut kv_ops, &mut rdma_ops, &mut setalg_ops);
        let (outcome, strays) = feed(&mut sim, (net, first_byte.as_ref()), &mut requests, end, check)?;
        if outcome.stopped() {
            let sent = requests.partition_point(|r| r.sent <= sim.now());
            keep_first(sent, &mut requests, &mut kv_ops, &mut rdma_ops, &mut setalg_ops);
        }
        let cost = ServerCost::of(&sim).since(before);
        let server = ServerEnd::of(&mut sim, outcome);
        let kv = self.verdict(&requests, &kv_ops, &rdma_ops, &setalg_ops);
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

    /// Refuse a load an IceNIC server cannot take ([`ice_supported`]).
    fn check_nic(&self, cfg: &NodeConfig) -> Result<(), String> {
        if cfg.nic_kind != NicKind::IceNic {
            return Ok(());
        }
        if self.reply_at == ReplyAt::FirstByte {
            return Err("load.reply_at: \"first_byte\" is for a nanoPU server (an IceNIC frame's \
                        length on the wire is not the message's)"
                .into());
        }
        ice_supported(self.kv.as_ref(), self.is_checked(), cfg.nic.cores)
    }

    /// A checked workload (key-value, RDMA or set algebra): every reply is judged.
    fn is_checked(&self) -> bool {
        self.kv.is_some() || self.rdma.is_some() || self.setalg.is_some()
    }

    /// End the run once every request has its reply. Only replies to requests count, not a
    /// start-up message that looks like one (8 bytes per request while the run lasts).
    fn stop_after_replies(&self, sim: &mut Simulation, net: HostNet, requests: &[Request]) {
        let sent: Vec<Time> = requests.iter().map(|r| r.sent).collect();
        let is_kv = self.is_checked();
        net.stop_after_where(sim, requests.len(), move |m| {
            is_reply(m, is_kv) && echoed(m).is_some_and(|t| sent.binary_search(&t).is_ok())
        });
    }

    /// The checked workload's operations, to build requests and judge replies with.
    fn checked<'a>(
        &'a self,
        kv_ops: &'a mut [KvOp],
        rdma_ops: &'a mut [RdmaOp],
        setalg_ops: &'a mut [SetalgOp],
    ) -> Option<Checked<'a>> {
        match (&self.kv, &self.rdma, &self.setalg) {
            (Some(spec), _, _) => Some(Checked::Kv { spec, ops: kv_ops }),
            (None, Some(_), _) => Some(Checked::Rdma(rdma_ops)),
            (None, None, Some(_)) => Some(Checked::Setalg(setalg_ops)),
            (None, None, None) => None,
        }
    }

    /// A checked run's wrong replies and lost requests.
    fn verdict(
        &self,
        requests: &[Request],
        kv_ops: &[KvOp],
        rdma_ops: &[RdmaOp],
        setalg_ops: &[SetalgOp],
    ) -> Option<KvErrors> {
        let kv = self.kv.as_ref().map(|k| kv_check(k, requests, kv_ops));
        let times: Vec<(Time, Option<Time>)> = requests.iter().map(|r| (r.sent, r.replied)).collect();
        let kv = kv.or_else(|| self.rdma.as_ref().map(|_| rdma::check(rdma_ops, &times)));
        kv.or_else(|| self.setalg.as_ref().map(|_| setalg::check(setalg_ops)))
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

/// A stopped run (Ctrl-C, SIGTERM) keeps its first `n` requests, those sent before it
/// stopped, and their operations: the others were never sent, and their rows (millions in
/// a long sweep) would only make the stop slow and the figures wrong.
fn keep_first(
    n: usize,
    requests: &mut Vec<Request>,
    kv_ops: &mut Vec<KvOp>,
    rdma_ops: &mut Vec<RdmaOp>,
    setalg_ops: &mut Vec<SetalgOp>,
) {
    requests.truncate(n);
    kv_ops.truncate(n);
    rdma_ops.truncate(n);
    setalg_ops.truncate(n);
}

/// Hand the requests to the host a window at a time (see [`WINDOW`]), running the server up
/// to each window's last send, then to `end`; the outcome and the arrivals that were no
/// reply. With `first_byte`'s port, a reply counts as received when its first byte came.
fn feed(
    sim: &mut Simulation,
    (net, first_byte): (HostNet, Option<&PortParams>),
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
        strays.add(collect(sim, (net, first_byte), requests, check.as_mut()));
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
pub(super) enum Checked<'a> {
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
/// that matched no request. With `first_byte`'s port, each arrival is dated when its first
/// byte came: its last byte's time less its serialization on that link.
fn collect(
    sim: &mut Simulation,
    (net, first_byte): (HostNet, Option<&PortParams>),
    requests: &mut [Request],
    kv: Option<&mut Checked>,
) -> Strays {
    let (mut received, not_messages) = net.take_received(sim);
    if let Some(port) = first_byte {
        received.iter_mut().for_each(|h| h.time = h.time - port.wire_time(h.msg.len.into()));
    }
    let mut strays = match_replies(requests, &received, kv);
    strays.unexpected += not_messages;
    strays
}

/// Arrivals that were no reply to a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Strays {
    /// Before the first request was sent: the server's start-up messages.
    pub(super) startup: usize,
    /// After: a server bug.
    pub(super) unexpected: usize,
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

/// A reply: two words from the node (the service server), or at least two (a checked
/// workload).
fn is_reply(m: &Message, kv: bool) -> bool {
    m.dst_ip == HOST_IP && (m.len == 16 || (kv && m.len > 16 && m.words.len() >= 2))
}

/// Give each request its reply time (matched by the echoed send time); the arrivals that
/// matched nothing, before the first request (start-up messages) and after.
pub(super) fn match_replies(
    requests: &mut [Request],
    received: &[nanopu_cluster::host::HostMessage],
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
