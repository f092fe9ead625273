//! A node's NIC: one component with the nanoPU NIC and IceNIC as its implementations
//! (docs/models/icenic.md "One NIC component"). The platform, the interrupt bit, the event
//! handlers and the summaries ask it which NIC the node has; a node has exactly one.

use nanopu_nic::icenic::IceNic;
use nanopu_nic::nic::NicCounters;
use nanopu_nic::Nic;

/// The NIC of a node.
pub enum NodeNic {
    /// The nanoPU NIC's core side (registers, scheduling, reassembly; docs/platform.md).
    /// In cluster runs its transport endpoint is the node's entry of the network's
    /// transports, which hands it complete messages (`Ev::NicArrive`).
    Nanopu(Nic),
    /// FireSim's IceNIC (docs/models/icenic.md): memory-mapped queues and DMA; its frames
    /// go onto the wire as they are.
    Ice(IceNic),
}

/// What a core of an IceNIC node meets when it uses the nanoPU NIC's registers.
pub const NO_NANOPU_NIC: &str =
    "this node has IceNIC, not the nanoPU NIC: netRX/netTX (x30/x31) and the LNIC CSRs are absent";

impl NodeNic {
    pub fn nanopu(&self) -> Option<&Nic> {
        match self {
            NodeNic::Nanopu(n) => Some(n),
            NodeNic::Ice(_) => None,
        }
    }
    pub fn nanopu_mut(&mut self) -> Option<&mut Nic> {
        match self {
            NodeNic::Nanopu(n) => Some(n),
            NodeNic::Ice(_) => None,
        }
    }
    pub fn ice(&self) -> Option<&IceNic> {
        match self {
            NodeNic::Ice(i) => Some(i),
            NodeNic::Nanopu(_) => None,
        }
    }
    pub fn ice_mut(&mut self) -> Option<&mut IceNic> {
        match self {
            NodeNic::Ice(i) => Some(i),
            NodeNic::Nanopu(_) => None,
        }
    }
    pub fn is_ice(&self) -> bool {
        matches!(self, NodeNic::Ice(_))
    }

    /// The `mip` bit the NIC drives: the nanoPU NIC's line 16 (docs/platform.md), or for
    /// IceNIC the machine external interrupt, 11, as the PLIC delivers it
    /// (docs/models/icenic.md "Interrupts").
    pub fn irq_bit(&self) -> u32 {
        match self {
            NodeNic::Nanopu(_) => nanopu_nic::NIC_IRQ_BIT,
            NodeNic::Ice(_) => crate::node::ICE_IRQ_BIT,
        }
    }

    /// The nanoPU NIC's message counters (all 0 on an IceNIC node, which has no messages;
    /// its frames are counted in `IceNic::counters`).
    pub fn message_counters(&self) -> NicCounters {
        self.nanopu().map(|n| n.counters.clone()).unwrap_or_default()
    }

    /// Messages held in the nanoPU NIC per context, not yet given to any core (none on an
    /// IceNIC node).
    pub fn held(&self) -> Vec<(u16, usize)> {
        self.nanopu().map(|n| n.held().collect()).unwrap_or_default()
    }

    /// Fewest cycles from a message's arrival at the NIC to a core seeing it: the nanoPU
    /// NIC's RX path; IceNIC's frames reach cores only through DMA and registers read at
    /// global time, which the event queue already bounds (0).
    pub fn rx_path_cycles(&self) -> u64 {
        self.nanopu().map_or(0, |n| n.params().rx_path_cycles)
    }
}
