//! The nanoPU NIC's settings on a node, declared once: each with its unit, default and range
//! in its doc comment, checked by one function and applied onto `NicParams` by one. A cluster
//! file's `[node]` and a load file's `[server]` take them as keys (flattened into their
//! sections), `nanopu run` as flags (`--jbsq-n`), the Python package as keywords; the doc
//! comments are the keys' reference (docs/config.md) and the flags' help alike.

use super::bounds::{Bounds, OneOf};
use super::check::{cycle_key_schema, cycles, sched_timer_cycles, sched_timer_schema};
use super::keys::Given;
use clap::builder::BoolishValueParser;
use nanopu_nic::params::CoreSelection;
use nanopu_nic::NicParams;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the NIC may pick a core.
pub const CORE_SELECTIONS: OneOf = OneOf(&CoreSelection::NAMES);
/// JBSQ's bound, messages.
pub const JBSQ_N: Bounds<u32> = Bounds::closed(1, u32::MAX);
/// The largest message, bytes: a message length is 16 bits on the wire.
pub const MAX_MSG_BYTES: Bounds<u32> = Bounds::closed(8, 65_535);
/// The TX queue, bytes: at least two words.
pub const TX_QUEUE_BYTES: Bounds<u32> = Bounds::closed(16, u32::MAX);

/// The nanoPU NIC's settings; an absent one keeps the NIC's default.
#[derive(Deserialize, Serialize, JsonSchema, clap::Args, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct NicSection {
    /// How the NIC picks a core for a message: "jbsq" (join-bounded-shortest-queue) or "rss"
    /// (by hash). Default "jbsq".
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(CoreSelection::NAMES))]
    #[schemars(transform = CORE_SELECTIONS.schema())]
    pub core_selection: Option<String>,
    /// JBSQ's bound: messages queued per core and context. Default 2; at least 1; not with
    /// core_selection "rss".
    #[arg(long)]
    #[schemars(transform = JBSQ_N.schema())]
    pub jbsq_n: Option<u32>,
    /// Reset value of `lmsgcycles`, the processing bound per message, core cycles (0 turns it
    /// off). Default 3,000; at most 1.152e13 (1 h at 3.2 GHz).
    #[arg(long)]
    #[schemars(transform = cycle_key_schema)]
    pub msg_cycles: Option<u64>,
    /// Reset value of `lidlecycles`, core cycles. Default 3,000; at most 1.152e13.
    #[arg(long)]
    #[schemars(transform = cycle_key_schema)]
    pub idle_cycles: Option<u64>,
    /// Period of the timer-driven scheduler baseline, us; 0 (default) keeps the NIC-driven
    /// thread scheduler. 0, or 0.05 (a 160-cycle context switch)..=3.6e9.
    #[arg(long)]
    #[schemars(transform = sched_timer_schema)]
    pub sched_timer_us: Option<f64>,
    /// Largest message, bytes. Default 2,048; 8..=65,535, and it must fit the TX queue.
    #[arg(long)]
    #[schemars(transform = MAX_MSG_BYTES.schema())]
    pub max_msg_bytes: Option<u32>,
    /// TX queue per core, bytes. Default 8,192 (holds an 8,176-byte message); must hold the
    /// largest message.
    #[arg(long)]
    #[schemars(transform = TX_QUEUE_BYTES.schema())]
    pub tx_queue_bytes: Option<u32>,
    /// Write the prototype's latency stamps into messages for context 0x1234 (docs/abi.md
    /// "Latency stamps"; l-nic/lnic SimUtils.scala). Default true (flag: on or off).
    #[arg(long, value_parser = BoolishValueParser::new())]
    pub latency_stamps: Option<bool>,
}

impl NicSection {
    /// The settings given, by key, in declaration order.
    pub fn given(&self) -> Vec<&'static str> {
        let set = [
            ("core_selection", self.core_selection.is_some()),
            ("jbsq_n", self.jbsq_n.is_some()),
            ("msg_cycles", self.msg_cycles.is_some()),
            ("idle_cycles", self.idle_cycles.is_some()),
            ("sched_timer_us", self.sched_timer_us.is_some()),
            ("max_msg_bytes", self.max_msg_bytes.is_some()),
            ("tx_queue_bytes", self.tx_queue_bytes.is_some()),
            ("latency_stamps", self.latency_stamps.is_some()),
        ];
        set.iter().filter(|(_, s)| *s).map(|(k, _)| *k).collect()
    }

    /// Every setting given, against its range (`clock_hz` turns times into cycles).
    pub fn check(&self, at: Given, clock_hz: u64) -> Result<(), String> {
        self.apply(&mut NicParams::default(), at, clock_hz)
    }

    /// `nic` with these settings, each checked first; an error names the setting as `at`.
    pub fn apply(&self, nic: &mut NicParams, at: Given, clock_hz: u64) -> Result<(), String> {
        let key = |k: &str| at.name(k);
        if let Some(s) = &self.core_selection {
            nic.core_selection =
                CoreSelection::parse(CORE_SELECTIONS.check(s, &key("core_selection"))?).expect("listed");
        }
        nic.jbsq_n = self.jbsq_n.map_or(Ok(nic.jbsq_n), |v| JBSQ_N.check(v, &key("jbsq_n"), ""))?;
        self.check_jbsq_applies(at)?;
        nic.msg_cycles =
            self.msg_cycles.map_or(Ok(nic.msg_cycles), |v| cycles(v, &key("msg_cycles"), clock_hz))?;
        nic.idle_cycles =
            self.idle_cycles.map_or(Ok(nic.idle_cycles), |v| cycles(v, &key("idle_cycles"), clock_hz))?;
        if let Some(us) = self.sched_timer_us {
            nic.sched_timer_cycles = sched_timer_cycles(us, &key("sched_timer_us"), clock_hz)?;
        }
        nic.latency_stamps = self.latency_stamps.unwrap_or(nic.latency_stamps);
        self.apply_sizes(nic, at)
    }

    /// JBSQ's bound only with JBSQ selection: RSS picks a core by hash, whatever its queue.
    fn check_jbsq_applies(&self, at: Given) -> Result<(), String> {
        if self.jbsq_n.is_some() && self.core_selection.as_deref() == Some("rss") {
            return Err(format!(
                "{}: JBSQ's bound does not apply when {} is rss (RSS picks a core by hash, \
                 not by the length of its queue)",
                at.name("jbsq_n"),
                at.name("core_selection")
            ));
        }
        Ok(())
    }

    /// An IceNIC node takes none of these settings: the first one given is an error naming it.
    pub fn none_on_icenic(&self, at: Given) -> Result<(), String> {
        match self.given().first() {
            Some(k) => Err(format!("{}: {}", at.name(k), nanopu_only(k))),
            None => Ok(()),
        }
    }

    /// The message and TX queue sizes: each in range, and the largest message fits the queue.
    fn apply_sizes(&self, nic: &mut NicParams, at: Given) -> Result<(), String> {
        let (msg, queue) = (at.name("max_msg_bytes"), at.name("tx_queue_bytes"));
        nic.max_msg_bytes =
            MAX_MSG_BYTES.check(self.max_msg_bytes.unwrap_or(nic.max_msg_bytes), &msg, " bytes")?;
        let q = self.tx_queue_bytes.unwrap_or(nic.tx_queue_bytes);
        nic.tx_queue_bytes = TX_QUEUE_BYTES.check(q, &queue, " bytes")?;
        nic.check_message_fits(&msg, &queue)
    }
}

/// Why an IceNIC node refuses the nanoPU NIC's setting `key`.
fn nanopu_only(key: &str) -> &'static str {
    match key {
        "core_selection" | "jbsq_n" => {
            "the nanoPU NIC's core selection (JBSQ, RSS); an IceNIC node has one core and one queue"
        }
        "sched_timer_us" | "msg_cycles" | "idle_cycles" => {
            "an option of the nanoPU NIC's scheduler, not of an IceNIC node"
        }
        _ => "a setting of the nanoPU NIC, not of an IceNIC node",
    }
}

#[cfg(test)]
mod tests {
    use super::{Given, NicSection};

    #[test]
    fn errors_name_the_setting_as_it_was_given() {
        let s = NicSection { jbsq_n: Some(0), ..Default::default() };
        let hz = 3_200_000_000;
        assert!(s.check(Given::Section("server"), hz).unwrap_err().starts_with("server.jbsq_n: 0 is not"));
        assert!(s.check(Given::Flags, hz).unwrap_err().starts_with("--jbsq-n: 0 is not"));
        assert!(s.check(Given::Keywords, hz).unwrap_err().starts_with("jbsq_n: 0 is not"));
    }

    #[test]
    fn a_timer_shorter_than_a_context_switch_is_refused() {
        let s = NicSection { sched_timer_us: Some(0.01), ..Default::default() };
        assert!(s
            .check(Given::Flags, 3_200_000_000)
            .unwrap_err()
            .starts_with("--sched-timer-us: 0.01 us is shorter"));
    }

    #[test]
    fn jbsq_bound_with_rss_selection_is_refused() {
        let s = NicSection { jbsq_n: Some(7), core_selection: Some("rss".into()), ..Default::default() };
        let e = s.check(Given::Section("node"), 3_200_000_000).unwrap_err();
        assert!(
            e.starts_with("node.jbsq_n: JBSQ's bound does not apply when node.core_selection is rss"),
            "{e}"
        );
        let e = s.check(Given::Flags, 3_200_000_000).unwrap_err();
        assert!(e.starts_with("--jbsq-n: JBSQ's bound does not apply when --core-selection is rss"), "{e}");
    }

    #[test]
    fn the_largest_message_must_fit_the_tx_queue() {
        let s = NicSection { max_msg_bytes: Some(8192), ..Default::default() };
        assert!(s.check(Given::Section("node"), 3_200_000_000).is_err());
        assert_eq!(NicSection::default().given(), Vec::<&str>::new());
    }
}
