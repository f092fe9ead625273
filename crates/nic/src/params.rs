//! NIC parameters. Every constant: unit, default, provenance.

/// Parameters of one node's NIC.
#[derive(Clone, Debug, PartialEq)]
pub struct NicParams {
    /// Cores attached to the NIC. Default 4 (prototype: 4 Rocket cores, docs/platform.md section 1).
    pub cores: usize,
    /// Thread contexts per core. Default 4 (docs/platform.md section 2).
    pub contexts_per_core: usize,
    /// Local RX queue per core in bytes, split evenly over `contexts_per_core` contexts.
    /// Default 16 KiB (docs/platform.md section 2).
    pub rx_queue_bytes: u32,
    /// TX queue per core in bytes. Default 8 KiB (docs/platform.md section 2). A message leaves only
    /// once all its words are queued, so the largest message must fit in it (`validate`).
    pub tx_queue_bytes: u32,
    /// Largest message payload in bytes. Default 2,048 (prototype maximum, docs/platform.md section 2);
    /// the header's 16-bit length field caps it at 65,535. Above 8,176 the TX queue must
    /// grow with it (see [`NicParams::tx_queue_bytes_for`]).
    pub max_msg_bytes: u32,
    /// Cycles from a message's arrival at the NIC to its header word being readable from
    /// netRX. Default 6 (prototype RX path, docs/platform.md section 3 calibration target).
    pub rx_path_cycles: u64,
    /// Cycles from the last netTX write of a message to its packet leaving the NIC (without
    /// MAC). Default 11 (prototype TX path for a one-word message, docs/platform.md section 3).
    pub tx_path_cycles: u64,
    /// JBSQ bound n: most outstanding messages per core and context. Default 2 (docs/platform.md section 3).
    pub jbsq_n: u32,
    /// Reset value of `lmsgcycles`. Default 3,000 cycles (docs/platform.md section 2).
    pub msg_cycles: u64,
    /// Reset value of `lidlecycles`. Default 3,000 cycles (docs/platform.md section 2).
    pub idle_cycles: u64,
    /// How a complete message picks its core. Default JBSQ (docs/platform.md section 3).
    pub core_selection: CoreSelection,
    /// Period of the timer-driven scheduler baseline in cycles, or 0 for the NIC-driven
    /// scheduler (default). The loader passes it to the nanokernel in the boot page; the NIC
    /// itself behaves the same either way (docs/platform.md section 3: "e.g. every 5 us" = 16,000).
    pub sched_timer_cycles: u64,
    /// Latency stamps for the testers' context 0x1234 at the node's port ([`crate::stamp`]).
    /// Default on, as the prototype's simulated NIC always did (l-nic/lnic `SimUtils.scala`).
    pub latency_stamps: bool,
}

/// TX queue words a message takes besides its payload: the header and, for multicast, the
/// group word (`Message::tx_words`).
const TX_OVERHEAD_WORDS: usize = 2;

/// TX queue words of the largest message of `max_msg_bytes` bytes.
fn tx_words_of(max_msg_bytes: u32) -> usize {
    TX_OVERHEAD_WORDS + (max_msg_bytes as usize).div_ceil(8)
}

/// Core selection policy of the NIC (docs/platform.md section 3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CoreSelection {
    /// Join-bounded-shortest-queue: a per-context global queue in the NIC; a message goes to
    /// the registered core with the fewest outstanding messages once that is below `jbsq_n`.
    #[default]
    Jbsq,
    /// RSS-like static assignment: a message goes at once to one registered core of its
    /// context, chosen by a hash of its source (address, context), however busy that core is.
    Rss,
}

impl CoreSelection {
    /// Its names, as files, flags and keywords write them, in `ALL`'s order.
    pub const NAMES: [&'static str; 2] = ["jbsq", "rss"];
    const ALL: [CoreSelection; 2] = [CoreSelection::Jbsq, CoreSelection::Rss];

    pub fn parse(s: &str) -> Result<CoreSelection, String> {
        match Self::NAMES.iter().position(|n| *n == s) {
            Some(i) => Ok(Self::ALL[i]),
            None => Err(format!("\"{s}\" is not \"jbsq\" or \"rss\"")),
        }
    }
}

impl Default for NicParams {
    fn default() -> Self {
        NicParams {
            cores: 4,
            contexts_per_core: 4,
            rx_queue_bytes: 16 * 1024,
            tx_queue_bytes: 8 * 1024,
            max_msg_bytes: 2048,
            rx_path_cycles: 6,
            tx_path_cycles: 11,
            jbsq_n: 2,
            msg_cycles: 3000,
            idle_cycles: 3000,
            core_selection: CoreSelection::Jbsq,
            sched_timer_cycles: 0,
            latency_stamps: true,
        }
    }
}

impl NicParams {
    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, field: &str, why: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("nic.{field}: {why}"))
            }
        };
        check(self.cores >= 1 && self.cores <= 64, "cores", "must be 1..=64")?;
        check((1..=16).contains(&self.contexts_per_core), "contexts_per_core", "must be 1..=16")?;
        check(self.rx_queue_bytes >= 64, "rx_queue_bytes", "must be at least 64")?;
        check(self.tx_queue_bytes >= 16, "tx_queue_bytes", "must be at least 16")?;
        check((8..=65_535).contains(&self.max_msg_bytes), "max_msg_bytes", "must be 8..=65535")?;
        check(self.jbsq_n >= 1, "jbsq_n", "must be at least 1")?;
        check(self.rx_path_cycles >= 1, "rx_path_cycles", "must be at least 1")
    }

    /// A core writes a whole message into its TX queue before the NIC takes it (nic.rs,
    /// `tx_room`): a message larger than the queue would leave the core waiting forever.
    /// The error names both keys, as the caller spells them. Not part of `validate`: a NIC
    /// with a small queue is fine for programs that send small messages (the NIC's tests),
    /// so the run configurations check it (`NodeConfig::validate`, cluster files).
    pub fn check_message_fits(&self, max_key: &str, queue_key: &str) -> Result<(), String> {
        let need = tx_words_of(self.max_msg_bytes);
        if need <= self.tx_queue_words() {
            return Ok(());
        }
        Err(format!(
            "{max_key}: a message of {} bytes takes {need} words of the TX queue (header, \
             multicast group word, payload) but {queue_key} = {} holds {}, so a core writing \
             it would wait forever; set {queue_key} to at least {} or {max_key} to at most {}",
            self.max_msg_bytes,
            self.tx_queue_bytes,
            self.tx_queue_words(),
            Self::tx_queue_bytes_for(self.max_msg_bytes),
            Self::max_msg_bytes_for(self.tx_queue_bytes),
        ))
    }

    /// The smallest TX queue, bytes, that holds a message of `max_msg_bytes`.
    pub fn tx_queue_bytes_for(max_msg_bytes: u32) -> u32 {
        tx_words_of(max_msg_bytes) as u32 * 8
    }

    /// The largest message, bytes, a TX queue of `tx_queue_bytes` holds (8 KiB: 8,176).
    pub fn max_msg_bytes_for(tx_queue_bytes: u32) -> u32 {
        (tx_queue_bytes / 8).saturating_sub(TX_OVERHEAD_WORDS as u32) * 8
    }
    /// Words of local RX queue per context.
    pub fn rx_words_per_context(&self) -> usize {
        (self.rx_queue_bytes as usize / 8) / self.contexts_per_core
    }
    pub fn tx_queue_words(&self) -> usize {
        self.tx_queue_bytes as usize / 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prototype_queue_holds_messages_up_to_8176_bytes() {
        assert_eq!(NicParams::max_msg_bytes_for(8 * 1024), 8176);
        assert_eq!(NicParams::tx_queue_bytes_for(8176), 8192);
        let p = |m, q| NicParams { max_msg_bytes: m, tx_queue_bytes: q, ..NicParams::default() };
        let fits = |m, q| p(m, q).check_message_fits("m", "q");
        assert!(fits(8176, 8192).is_ok());
        assert!(fits(65_535, NicParams::tx_queue_bytes_for(65_535)).is_ok());
    }

    #[test]
    fn a_message_larger_than_the_tx_queue_is_refused() {
        let p = NicParams { max_msg_bytes: 8192, ..NicParams::default() };
        let e = p.check_message_fits("nic.max_msg_bytes", "nic.tx_queue_bytes").unwrap_err();
        assert!(e.contains("nic.max_msg_bytes") && e.contains("nic.tx_queue_bytes"), "{e}");
        assert!(e.contains("at least 8208") && e.contains("at most 8176"), "{e}");
    }
}
