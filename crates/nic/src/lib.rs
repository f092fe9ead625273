//! The nanoPU NIC as seen by its node's cores (docs/platform.md sections 2 and 3).
//!
//! A tour:
//! - [`params`]: every NIC constant with unit, default and provenance.
//! - [`message`]: a message as the NIC handles it, and the application header word.
//! - [`core_if`]: per-core state: contexts, their local RX queues (whole messages, each word
//!   readable a cycle after the one before), the TX assembler, the scheduler CSRs.
//! - [`nic`]: the NIC proper: packet-to-core delivery with JBSQ(n) core selection over a
//!   per-context global queue, message completion on the TX side, CSR semantics, and the
//!   interrupt line of each core; its contexts' queues and registrations are kept by
//!   context id in a small ordered vector (`nic/by_context.rs`).
//! - [`core_if::sched`]: the hardware thread scheduler's rules: target, interrupt, demotion, idle.
//! - [`stamp`]: the prototype's latency stamps for the testers' context 0x1234.
//! - [`icenic`]: FireSim's IceNIC, the DMA NIC of the traditional baseline node
//!   (docs/models/icenic.md).
//! - [`zeronic`]: ZeroNIC, the split data path / control path NIC of issue 36's third host
//!   stack (docs/models/zeronic.md), around an IceNIC as its control queue.
//! - [`rdma`]: an RDMA NIC with the InfiniBand reliable-connection transport in hardware
//!   (go-back-N), as RoCEv2 NICs have (docs/models/rdma-nic.md).
//! - [`transport`]: the NDP- and Homa-style transports terminated in the NIC, and
//!   multicast sending.
//!
//! Time inside the NIC is counted in cycles of the node clock (the cores' 3.2 GHz clock).
//! The NIC never schedules anything itself: methods return [`Action`]s with the cycle at
//! which the caller (the cluster's event loop) must act. A core may run ahead of global
//! time; the NIC answers its accesses exactly as of the core's local cycle or the caller
//! makes the core retry later (see `docs/architecture.md`).

#![forbid(unsafe_code)]

pub mod core_if;
pub mod icenic;
pub mod message;
pub mod nic;
pub mod params;
pub mod rdma;
pub mod stamp;
pub mod transport;
pub mod zeronic;

pub use message::{AppHeader, Message};
pub use nic::{Action, Nic, NicCounters};
pub use params::NicParams;

/// CSR addresses of the nanoPU register interface (docs/platform.md section 2).
pub mod csr {
    pub const LMSGSRDY: u16 = 0x052;
    pub const LCURCONTEXT: u16 = 0x053;
    pub const LNICCMD: u16 = 0x054;
    pub const LCURPRIORITY: u16 = 0x055;
    pub const LNICUCMD: u16 = 0x056;
    pub const LNICRDY: u16 = 0x057;
    pub const LTARGETCONTEXT: u16 = 0x058;
    pub const LTARGETPRIORITY: u16 = 0x059;
    pub const LMSGCYCLES: u16 = 0x060;
    pub const LIDLECYCLES: u16 = 0x061;
}

/// The interrupt line the NIC drives in each core's `mip` (docs/platform.md section 2: bit 16).
pub const NIC_IRQ_BIT: u32 = 16;
