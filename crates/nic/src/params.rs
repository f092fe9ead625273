//! NIC parameters. Every constant: unit, default, provenance.

/// Parameters of one node's NIC.
#[derive(Clone, Debug, PartialEq)]
pub struct NicParams {
    /// Cores attached to the NIC. Default 4 (prototype: 4 Rocket cores, SPEC section 1).
    pub cores: usize,
    /// Thread contexts per core. Default 4 (SPEC section 2).
    pub contexts_per_core: usize,
    /// Local RX queue per core in bytes, split evenly over `contexts_per_core` contexts.
    /// Default 16 KiB (SPEC section 2).
    pub rx_queue_bytes: u32,
    /// TX queue per core in bytes. Default 8 KiB (SPEC section 2).
    pub tx_queue_bytes: u32,
    /// Largest message payload in bytes. Default 2,048 (prototype maximum, SPEC section 2);
    /// the header's 16-bit length field caps it at 65,535.
    pub max_msg_bytes: u32,
    /// Cycles from a message's arrival at the NIC to its header word being readable from
    /// netRX. Default 6 (prototype RX path, SPEC section 3 calibration target).
    pub rx_path_cycles: u64,
    /// Cycles from the last netTX write of a message to its packet leaving the NIC (without
    /// MAC). Default 11 (prototype TX path for a one-word message, SPEC section 3).
    pub tx_path_cycles: u64,
    /// Extra cycles for a message to the node's own IP to turn around inside the NIC, between
    /// the TX path and the RX path. Default 0 (none is documented for the prototype).
    pub loopback_cycles: u64,
    /// JBSQ bound n: most outstanding messages per core and context. Default 2 (SPEC 3).
    pub jbsq_n: u32,
    /// Reset value of `lmsgcycles`. Default 3,000 cycles (SPEC section 2).
    pub msg_cycles: u64,
    /// Reset value of `lidlecycles`. Default 3,000 cycles (SPEC section 2).
    pub idle_cycles: u64,
    /// How a complete message picks its core. Default JBSQ (SPEC section 3).
    pub core_selection: CoreSelection,
    /// Period of the timer-driven scheduler baseline in cycles, or 0 for the NIC-driven
    /// scheduler (default). The loader passes it to the nanokernel in the boot page; the NIC
    /// itself behaves the same either way (SPEC section 3: "e.g. every 5 us" = 16,000).
    pub sched_timer_cycles: u64,
}

/// Core selection policy of the NIC (SPEC section 3).
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
    pub fn parse(s: &str) -> Result<CoreSelection, String> {
        match s {
            "jbsq" => Ok(CoreSelection::Jbsq),
            "rss" => Ok(CoreSelection::Rss),
            _ => Err(format!("core selection {s:?}: expected \"jbsq\" or \"rss\"")),
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
            loopback_cycles: 0,
            jbsq_n: 2,
            msg_cycles: 3000,
            idle_cycles: 3000,
            core_selection: CoreSelection::Jbsq,
            sched_timer_cycles: 0,
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
    /// Words of local RX queue per context.
    pub fn rx_words_per_context(&self) -> usize {
        (self.rx_queue_bytes as usize / 8) / self.contexts_per_core
    }
    pub fn tx_queue_words(&self) -> usize {
        self.tx_queue_bytes as usize / 8
    }
}
