//! What a run reports: per-core summaries (text and JSON); progress on long runs is `progress`.

pub mod cluster;
pub mod gather;
pub mod judge;
pub mod marks;
pub mod rdma;
pub mod records;

use crate::engine::outcome::Outcome;
use crate::engine::Simulation;
use crate::node::CoreState;
use serde::Serialize;

/// One core at the end of a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CoreSummary {
    pub core: usize,
    /// Exit code, or null if the core did not exit.
    pub exit_code: Option<i64>,
    /// "exited", or what the core was waiting for at the end.
    pub state: String,
    pub pc: String,
    pub instructions: u64,
    pub cycles: u64,
    pub dcache_misses: u64,
    pub icache_misses: u64,
    pub l2_misses: u64,
    /// L2 misses that also missed the last-level cache (DRAM reads).
    pub llc_misses: u64,
    /// Cycles spent stalled on an empty netRX.
    pub stall_netrx_cycles: u64,
    /// Cycles spent stalled on a full netTX queue.
    pub stall_nettx_cycles: u64,
    /// Cycles spent in `wfi`.
    pub wfi_cycles: u64,
    pub console: String,
}

/// A whole run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunSummary {
    /// "exited" (every core exited), "quiescent" (nothing left to simulate), or why the run
    /// stopped early ("time limit", "interrupted", "wall-clock limit", "deadline").
    pub outcome: String,
    /// False when the run has a problem (`judge::Judgement`): stopped early, messages never
    /// delivered or taken, cores that will never exit; its figures are partial.
    pub complete: bool,
    /// What went wrong or was left undone, each naming the limit or setting involved.
    pub problems: Vec<String>,
    /// The exit status `nanopu run` gives this run (`judge::Judgement`).
    pub exit_status: u8,
    pub simulated_ns: f64,
    pub cores: Vec<CoreSummary>,
    pub nic: NicSummary,
    /// Messages the test host received, in arrival order.
    pub host_received: Vec<HostRecord>,
    /// Raw frames the test host sent that the NIC dropped, and why (`TestHost::send_raw_at`).
    pub host_rejected: Vec<RejectedFrame>,
    /// An IceNIC node's NIC counters (docs/models/icenic.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icenic: Option<IceSummary>,
    /// A ZeroNIC node's data path and the payload bytes each core touched
    /// (docs/models/zeronic.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zeronic: Option<cluster::ZeroNodeSummary>,
    /// Frames the test host received from an IceNIC node, in arrival order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host_frames: Vec<FrameRecord>,
}

/// A raw frame from the test host that the node's NIC dropped.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct RejectedFrame {
    pub time_ns: f64,
    pub reason: String,
}

/// The test host's raw frames that were dropped, and why.
pub(crate) fn rejected_frames(sim: &Simulation) -> Vec<RejectedFrame> {
    let frame =
        |(t, why): &(nanopu_sim::Time, String)| RejectedFrame { time_ns: t.as_ns_f64(), reason: why.clone() };
    sim.host.rejected.iter().map(frame).collect()
}

/// What an IceNIC moved and dropped.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct IceSummary {
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Frames its receive packet buffer had no room for.
    pub dropped_buffer_full: u64,
    /// Frames too long or too short for it.
    pub dropped_size: u64,
}

/// A frame seen by the test host.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct FrameRecord {
    /// Arrival of its last byte at the host.
    pub time_ns: f64,
    pub len: usize,
    /// The whole frame as hex.
    pub hex: String,
}

impl FrameRecord {
    pub(crate) fn line(&self) -> String {
        format!("host received at {:.3} ns a frame of {} bytes: {}\n", self.time_ns, self.len, self.hex)
    }
}

fn ice_summary(ice: &nanopu_nic::icenic::IceNic) -> IceSummary {
    let c = &ice.counters;
    IceSummary {
        frames_sent: c.frames_sent,
        frames_received: c.frames_received,
        dropped_buffer_full: c.dropped_full,
        dropped_size: c.dropped_size,
    }
}

pub(crate) fn frame_record(f: &crate::host::HostFrame) -> FrameRecord {
    let hex = f.frame.iter().map(|b| format!("{b:02x}")).collect();
    FrameRecord { time_ns: f.time.as_ns_f64(), len: f.frame.len(), hex }
}

/// A message seen by the test host.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct HostRecord {
    /// Arrival of its last byte at the host.
    pub time_ns: f64,
    pub src_ip: String,
    pub src_context: u16,
    pub dst_context: u16,
    pub len: u16,
    /// Payload words as hex.
    pub words: Vec<String>,
}

impl HostRecord {
    /// One line of a text summary.
    pub fn line(&self) -> String {
        let (t, ip, ctx, len) = (self.time_ns, &self.src_ip, self.src_context, self.len);
        format!("host received at {t:.3} ns from {ip} context {ctx}: {len} bytes {}\n", self.words.join(" "))
    }
}

pub(crate) fn host_record(m: &crate::host::HostMessage) -> HostRecord {
    HostRecord {
        time_ns: m.time.as_ns_f64(),
        src_ip: crate::node::boot::ip_text(m.msg.src_ip),
        src_context: m.msg.src_context,
        dst_context: m.msg.dst_context,
        len: m.msg.len,
        words: m.msg.words.iter().map(|w| format!("{w:#x}")).collect(),
    }
}

/// What passed through the node's NIC.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NicSummary {
    pub messages_sent: u64,
    pub messages_received: u64,
    pub messages_delivered: u64,
    /// Messages still held in the NIC at the end, per context id (nobody took them).
    pub messages_held: Vec<(u16, usize)>,
    pub spurious_msg_done: u64,
}

/// Summarise a finished simulation.
pub fn summarize(sim: &mut Simulation, outcome: Outcome) -> RunSummary {
    // A core stopped by its node's end may have run ahead past it: not part of the run.
    let node = &sim.nodes[0];
    let live = node.cores.iter().zip(&node.state).filter(|(_, s)| !matches!(s, CoreState::Stopped(_)));
    let last_core = live.map(|(c, _)| c.cycle()).max().unwrap_or(0);
    let mut end = sim.now().max(sim.clock().time_of(last_core));
    if outcome == Outcome::Deadline {
        // A core's clock may be one cycle past the deadline it stopped at.
        end = end.min(sim.deadline.unwrap_or(end));
    }
    let simulated_ns = end.as_ns_f64();
    let node = &mut sim.nodes[0];
    let cores = node.cores.iter_mut().zip(&node.state).map(|(c, s)| core_summary(c, *s)).collect();
    let j = judge::judge(sim, outcome);
    let node = &mut sim.nodes[0];
    let c = node.nic.message_counters();
    RunSummary {
        outcome: outcome.name().into(),
        complete: j.complete,
        problems: j.problems,
        exit_status: j.exit_status,
        simulated_ns,
        nic: NicSummary {
            messages_sent: c.msgs_sent,
            messages_received: c.msgs_received,
            messages_delivered: c.msgs_delivered,
            messages_held: node.nic.held(),
            spurious_msg_done: c.spurious_done,
        },
        cores,
        host_received: sim.host.received.iter().map(host_record).collect(),
        host_rejected: rejected_frames(sim),
        icenic: sim.nodes[0].ice().map(ice_summary),
        zeronic: cluster::ZeroNodeSummary::of(&sim.nodes[0]),
        host_frames: sim.host.frames_received.iter().map(frame_record).collect(),
    }
}

fn core_summary(core: &mut nanopu_riscv::Core, state: CoreState) -> CoreSummary {
    let s = core.stats().clone();
    CoreSummary {
        core: core.hart(),
        exit_code: core.halted(),
        state: match state {
            CoreState::Halted(_) => format!("exited{}", exited_from(core)),
            other => other.describe(),
        },
        pc: format!("{:#x}", core.pc()),
        instructions: s.instret,
        cycles: core.cycle(),
        dcache_misses: s.dcache_misses,
        icache_misses: s.icache_misses,
        l2_misses: s.l2_misses,
        llc_misses: s.llc_misses,
        stall_netrx_cycles: s.stall_netrx,
        stall_nettx_cycles: s.stall_nettx,
        wfi_cycles: s.stall_wfi,
        console: String::from_utf8_lossy(&core.take_console()).into_owned(),
    }
}

/// For a core that exited from inside its trap handler, the fault that entered it
/// (`Core::handling_fault`), which its exit code alone does not say; else nothing.
pub(crate) fn exited_from(core: &nanopu_riscv::Core) -> String {
    core.handling_fault().map_or(String::new(), |t| format!(" from its trap handler, entered by {t}"))
}

impl RunSummary {
    /// Human-readable table.
    pub fn text(&self) -> String {
        let mut s = format!("outcome: {}, simulated time {:.3} us\n", self.outcome, self.simulated_ns / 1e3);
        self.problems.iter().for_each(|p| s += &format!("{p}\n"));
        s += "core  exit  instructions      cycles   D$ miss  netRX stall  state\n";
        for c in &self.cores {
            let code = c.exit_code.map_or("-".into(), |x| x.to_string());
            s += &format!(
                "{:>4}  {:>4}  {:>12}  {:>10}  {:>8}  {:>11}  {}\n",
                c.core, code, c.instructions, c.cycles, c.dcache_misses, c.stall_netrx_cycles, c.state
            );
        }
        self.host_received.iter().for_each(|m| s += &m.line());
        for r in &self.host_rejected {
            s += &format!("host frame at {:.3} ns dropped by the NIC: {}\n", r.time_ns, r.reason);
        }
        if let Some(i) = &self.icenic {
            s += &format!(
                "icenic: {} frames sent, {} received, {} dropped (buffer full), {} dropped (size)\n",
                i.frames_sent, i.frames_received, i.dropped_buffer_full, i.dropped_size
            );
        }
        self.zeronic.iter().for_each(|z| s += &z.line());
        self.host_frames.iter().for_each(|f| s += &f.line());
        for c in self.cores.iter().filter(|c| !c.console.is_empty()) {
            s += &format!("--- console of core {} ---\n{}", c.core, c.console);
            if !c.console.ends_with('\n') {
                s.push('\n');
            }
        }
        s
    }
}
