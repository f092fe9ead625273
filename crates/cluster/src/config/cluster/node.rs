//! `[node]` and `[transport_params]`: every node's cores, NIC and transport. Apart from the
//! fabric's sections because they configure what sits at the ends of the links, and are
//! checked against the NIC's own limits (`NicParams::check_message_fits`).

use super::{clock_hz, ClusterFile};
use crate::config::check::{self, fraction, time_us, within};
use crate::config::ExitMode;
use nanopu_nic::NicParams;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct NodeFile {
    /// Cores per node. Default 4; 1..=64.
    pub cores: Option<usize>,
    /// Largest message, bytes. Default 2,048; 8..=65,535, and it must fit the TX queue.
    pub max_msg_bytes: Option<u32>,
    /// TX queue per core, bytes. Default 8,192 (holds an 8,176-byte message); must hold the
    /// largest message.
    pub tx_queue_bytes: Option<u32>,
    /// Refused: the run's limit is the top-level `max_us`.
    pub max_cycles: Option<u64>,
    /// How the NIC picks a core for a message: "jbsq" (default: join-bounded-shortest-queue) or
    /// "rss" (by hash).
    pub core_selection: Option<String>,
    /// JBSQ's bound: messages queued per core. Default 2; at least 1.
    pub jbsq_n: Option<u32>,
    /// Reset value of `lmsgcycles`, the processing bound per message, core cycles (0 turns it
    /// off). Default 3,000; at most 1.152e13 (1 h at 3.2 GHz).
    pub msg_cycles: Option<u64>,
    /// Reset value of `lidlecycles`, core cycles. Default 3,000; at most 1.152e13.
    pub idle_cycles: Option<u64>,
    /// Period of the timer-driven scheduler baseline, us; 0 (default) keeps the NIC-driven
    /// thread scheduler. 0, or 0.05 (a 160-cycle context switch)..=3.6e9.
    pub sched_timer_us: Option<f64>,
    /// What a core's exit ends: "hart" (each core exits on its own), "node" (the first exit
    /// ends the node, as on the prototype) or "auto" (default: "node" unless the program
    /// defines `__nanopu_abi`).
    pub exit: Option<String>,
    /// Write the prototype's latency stamps into messages for context 0x1234 (docs/abi.md
    /// "Latency stamps"). Default true.
    pub latency_stamps: Option<bool>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TransportFile {
    /// NDP: packets a sender sends before the first PULL. Default 2 (the prototype's); 1..=64
    /// (a message has at most 64).
    pub rtt_pkts: Option<u32>,
    /// Sender: resend what is unacknowledged after this long without progress, us. Default 20
    /// (an estimate: many round trips of a two-tier fabric); at least the longest path's
    /// round-trip floor (one full packet's serialization plus an unloaded round trip), at most
    /// 3.6e9.
    pub rto_us: Option<f64>,
    /// Homa: bytes a sender may send unscheduled and the receiver keeps granted ahead. Default
    /// 8,192 (an estimate: about one round trip of a leaf-spine at 200 Gb/s); 1,024 (one
    /// packet)..=65,536 (64).
    pub rtt_bytes: Option<u32>,
    /// Homa: messages granted at once. Default 3 (the prototype's); at least 1.
    pub overcommit: Option<u32>,
    /// Share of messages delayed by `tail_delay_us` at their sender (the tail experiment).
    /// Default 0; [0, 1].
    pub tail_fraction: Option<f64>,
    /// Extra delay of those messages, us. Default 0; 0..=3.6e9.
    pub tail_delay_us: Option<f64>,
}

impl NodeFile {
    /// The `exit` key, checked.
    pub fn exit_mode(&self) -> Result<ExitMode, String> {
        self.exit
            .as_deref()
            .map_or(Ok(ExitMode::Auto), |s| ExitMode::parse(s).map_err(|e| format!("node.{e}")))
    }

    pub(super) fn check(&self) -> Result<(), String> {
        if let Some(c) = self.max_cycles {
            return Err(format!(
                "node.max_cycles: {c}: a cluster file has no cycle limit; set the simulated-time \
                 limit with the top-level max_us (microseconds; 3.2 cycles per ns)"
            ));
        }
        self.cores.map(|v| within(v, 1, 64, "node.cores", "")).transpose()?;
        self.exit_mode()?;
        self.jbsq_n.map(|v| within(v, 1, u32::MAX, "node.jbsq_n", "")).transpose()?;
        let hz = clock_hz();
        self.msg_cycles.map(|v| check::cycles(v, "node.msg_cycles", hz)).transpose()?;
        self.idle_cycles.map(|v| check::cycles(v, "node.idle_cycles", hz)).transpose()?;
        check::sched_timer_cycles(self.sched_timer_us.unwrap_or(0.0), "node.sched_timer_us", hz)?;
        self.check_tx_queue()
    }

    /// The largest message must fit in the TX queue (`NicParams::check_message_fits`).
    fn check_tx_queue(&self) -> Result<(), String> {
        let mut nic = NicParams::default();
        nic.max_msg_bytes = self.max_msg_bytes.unwrap_or(nic.max_msg_bytes);
        nic.tx_queue_bytes = self.tx_queue_bytes.unwrap_or(nic.tx_queue_bytes);
        within(nic.max_msg_bytes, 8, 65_535, "node.max_msg_bytes", " bytes")?;
        within(nic.tx_queue_bytes, 16, u32::MAX, "node.tx_queue_bytes", " bytes")?;
        nic.check_message_fits("node.max_msg_bytes", "node.tx_queue_bytes")
    }
}

impl ClusterFile {
    pub(super) fn check_transport(&self) -> Result<(), String> {
        let t = &self.transport_params;
        // A message has at most 64 packets (65,535 bytes of 1,024): a larger window sends
        // nothing more, and NDP adds it to 32-bit counts and 16-bit PULL credits.
        t.rtt_pkts.map(|v| within(v, 1, 64, "transport_params.rtt_pkts", "")).transpose()?;
        t.rtt_bytes.map(|v| within(v, 1024, 65_536, "transport_params.rtt_bytes", " bytes")).transpose()?;
        t.overcommit.map(|v| within(v, 1, u32::MAX, "transport_params.overcommit", "")).transpose()?;
        t.tail_fraction.map(|v| fraction(v, "transport_params.tail_fraction")).transpose()?;
        t.tail_delay_us.map(|v| time_us(v, "transport_params.tail_delay_us")).transpose()?;
        let Some(v) = t.rto_us else { return Ok(()) };
        let hops = if self.topology.kind == "star" { 2 } else { 4 };
        self.at_least_round_trip(time_us(v, "transport_params.rto_us")?, v, hops, "transport_params.rto_us")
    }
}
