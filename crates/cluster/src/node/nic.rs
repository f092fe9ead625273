//! A node's NIC: one component with the nanoPU NIC and IceNIC as its implementations
//! (docs/models/icenic.md "One NIC component"). The platform, the interrupt bit, the event
//! handlers and the summaries ask it which NIC the node has; a node has exactly one, and
//! everything of it lives here: the nanoPU NIC's core side and, in cluster runs, its
//! transport endpoint; IceNIC's queues and buffers.

use nanopu_nic::icenic::IceNic;
use nanopu_nic::nic::NicCounters;
use nanopu_nic::rdma::RdmaNic;
use nanopu_nic::transport::Transport;
use nanopu_nic::zeronic::ZeroNic;
use nanopu_nic::Nic;

/// The nanoPU NIC of one node: its core side and its transport endpoint.
pub struct NanopuNic {
    /// Registers, scheduling, reassembly (docs/platform.md).
    pub core: Nic,
    /// The transport endpoint (NDP or Homa; docs/models/network.md), which turns packets
    /// into complete messages for `core` and messages from `core` into packets. A node run
    /// alone has none: its port carries whole messages to and from the test host.
    ///
    /// In place, not boxed: a packet's arrival names its node, so `NodeNic::prefetch`
    /// can load the endpoint's lines a step ahead without first reading a pointer.
    pub transport: Option<Transport>,
}

/// The NIC of a node.
// The nanoPU NIC, nearly every node's, is in place with its transport on purpose (see
// `NanopuNic::transport`); the others are boxed.
#[allow(clippy::large_enum_variant)]
pub enum NodeNic {
    /// The nanoPU NIC (docs/platform.md).
    Nanopu(NanopuNic),
    /// FireSim's IceNIC (docs/models/icenic.md): memory-mapped queues and DMA; its frames
    /// go onto the wire as they are. Boxed as the others: in place its 432 bytes made
    /// every node's `NodeNic` (nanoPU nodes too, one `Vec<Node>` a partition) 192 bytes
    /// larger than the nanoPU NIC needs.
    Ice(Box<IceNic>),
    /// ZeroNIC (docs/models/zeronic.md): IceNIC's registers as its control queue, and a
    /// data path placing payload in registered memory.
    Zero(Box<ZeroNic>),
    /// The RDMA NIC (docs/models/rdma-nic.md): queue pairs, work requests and completions
    /// through memory-mapped registers; its RoCEv2 frames go onto the wire as they are.
    Rdma(Box<RdmaNic>),
}

/// What a core of an IceNIC node meets when it uses the nanoPU NIC's registers.
pub const NO_NANOPU_NIC: &str =
    "this node has IceNIC, not the nanoPU NIC: netRX/netTX (x30/x31) and the LNIC CSRs are absent";

impl NodeNic {
    /// A nanoPU NIC without a transport endpoint (a node run alone, or before
    /// `attach_transport`).
    pub fn nanopu_alone(core: Nic) -> NodeNic {
        NodeNic::Nanopu(NanopuNic { core, transport: None })
    }
    pub fn nanopu(&self) -> Option<&Nic> {
        match self {
            NodeNic::Nanopu(n) => Some(&n.core),
            _ => None,
        }
    }
    pub fn nanopu_mut(&mut self) -> Option<&mut Nic> {
        match self {
            NodeNic::Nanopu(n) => Some(&mut n.core),
            _ => None,
        }
    }

    /// Give a nanoPU NIC its transport endpoint (cluster runs); an IceNIC has none and
    /// ignores it: raw frames need no transport.
    pub fn attach_transport(&mut self, t: Transport) {
        if let NodeNic::Nanopu(n) = self {
            n.transport = Some(t);
        }
    }
    /// Start loading this NIC's state, its transport endpoint in place with it, which a
    /// packet arriving next will read (a hint; nothing is read here, not even which NIC
    /// this is).
    #[inline]
    pub fn prefetch(&self) {
        nanopu_sim::hint::prefetch_all(self);
    }

    /// The transport endpoint, if the node has one (a nanoPU node in a cluster).
    pub fn transport(&self) -> Option<&Transport> {
        match self {
            NodeNic::Nanopu(n) => n.transport.as_ref(),
            _ => None,
        }
    }
    pub fn transport_mut(&mut self) -> Option<&mut Transport> {
        match self {
            NodeNic::Nanopu(n) => n.transport.as_mut(),
            _ => None,
        }
    }
    /// The node's IceNIC registers: IceNIC's, or ZeroNIC's control queue.
    pub fn ice(&self) -> Option<&IceNic> {
        match self {
            NodeNic::Ice(i) => Some(i),
            NodeNic::Zero(z) => Some(&z.ice),
            _ => None,
        }
    }
    pub fn ice_mut(&mut self) -> Option<&mut IceNic> {
        match self {
            NodeNic::Ice(i) => Some(i),
            NodeNic::Zero(z) => Some(&mut z.ice),
            _ => None,
        }
    }
    pub fn zero(&self) -> Option<&ZeroNic> {
        match self {
            NodeNic::Zero(z) => Some(z),
            _ => None,
        }
    }
    pub fn zero_mut(&mut self) -> Option<&mut ZeroNic> {
        match self {
            NodeNic::Zero(z) => Some(z),
            _ => None,
        }
    }
    /// Does the node take raw frames through IceNIC's registers (IceNIC or ZeroNIC)?
    pub fn is_ice(&self) -> bool {
        matches!(self, NodeNic::Ice(_) | NodeNic::Zero(_))
    }
    pub fn rdma(&self) -> Option<&RdmaNic> {
        match self {
            NodeNic::Rdma(r) => Some(r),
            _ => None,
        }
    }
    pub fn rdma_mut(&mut self) -> Option<&mut RdmaNic> {
        match self {
            NodeNic::Rdma(r) => Some(r),
            _ => None,
        }
    }
    /// Does the NIC take raw frames rather than nanoPU transport packets (IceNIC, ZeroNIC,
    /// the RDMA NIC)?
    pub fn takes_frames(&self) -> bool {
        !matches!(self, NodeNic::Nanopu(_))
    }

    /// The `mip` bit the NIC drives: the nanoPU NIC's line 16 (docs/platform.md), or for
    /// IceNIC the machine external interrupt, 11, as the PLIC delivers it
    /// (docs/models/icenic.md "Interrupts").
    pub fn irq_bit(&self) -> u32 {
        match self {
            NodeNic::Nanopu(_) => nanopu_nic::NIC_IRQ_BIT,
            NodeNic::Ice(_) | NodeNic::Zero(_) | NodeNic::Rdma(_) => crate::node::ICE_IRQ_BIT,
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
