//! One simulated nanoPU: cores, shared memory, NIC.

pub mod boot;
pub mod nic;
pub mod platform;
pub mod spin;

use crate::config::{NicKind, NodeConfig};
use crate::node::boot::{ip_text, mac_text, node_ip, node_mac, BootInfo};
use crate::node::nic::NodeNic;
use nanopu_nic::icenic::{IceNic, IceParams};
use nanopu_nic::rdma::{RdmaNic, RdmaParams};
use nanopu_nic::zeronic::ZeroNic;
use nanopu_nic::{Nic, NicParams};
use nanopu_riscv::stores::{holder_bit, Holders, HOLDER_BITS};
use nanopu_riscv::{Core, Ddr3Params, Engine, NodeMem, Program};
use std::sync::Arc;

/// MEIP: the machine external interrupt pending bit (RISC-V privileged spec 3.1.9).
pub const ICE_IRQ_BIT: u32 = 11;

/// Where a core stands in the event loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreState {
    /// Will run at this node cycle (it is in the core queue).
    Scheduled(u64),
    /// Reading netRX with nothing queued; woken by a delivery.
    ParkedRx,
    /// Writing netTX with the TX queue full; woken when the NIC takes a message.
    ParkedTx,
    /// Executed `wfi`; woken by an interrupt.
    Wfi,
    Halted(i64),
    /// Ended without exiting: core `.0` of its node exited first, which ends the node
    /// (`ExitMode::Node`, the prototype's convention).
    Stopped(usize),
    /// Its node crashed at this time (fault injection: `fault`).
    Crashed(nanopu_sim::Time),
}

impl CoreState {
    pub fn describe(self) -> String {
        match self {
            CoreState::Scheduled(_) => "running".into(),
            CoreState::ParkedRx => "waiting on netRX (no message for its current context)".into(),
            CoreState::ParkedTx => "waiting on netTX (TX queue full)".into(),
            CoreState::Wfi => "waiting for an interrupt (wfi)".into(),
            CoreState::Halted(c) => format!("exited with code {c}"),
            CoreState::Stopped(by) => {
                format!("stopped: core {by} exited first, which ends the node (exit = node)")
            }
            CoreState::Crashed(t) => format!("crashed at {:.3} us", t.as_us_f64()),
        }
    }

    /// Has it yet to exit (or stop, or crash)?
    pub fn running(&self) -> bool {
        !matches!(self, CoreState::Halted(_) | CoreState::Stopped(_) | CoreState::Crashed(_))
    }
}

/// One node.
pub struct Node {
    pub index: u32,
    pub ip: u32,
    pub cores: Vec<Core>,
    pub state: Vec<CoreState>,
    pub mem: NodeMem,
    /// Its NIC: the nanoPU NIC or IceNIC (`NodeNic`).
    pub nic: NodeNic,
    /// Sorted PCs of the program's `lnic_wait()` loops (see `spin`).
    pub spin_pcs: Arc<Vec<u64>>,
    /// The core that ran last on this node: a core's LR reservation survives from one run
    /// to its next only if no other core ran in between (and so could have stored to it).
    pub(crate) last_run: usize,
    /// The first exit of a core ends the node (`ExitMode`).
    pub first_exit_ends: bool,
    /// When the node crashed, if it did (fault injection: `fault`).
    pub crashed: Option<nanopu_sim::Time>,
    /// No core runs past this cycle: the node crashes then (u64::MAX: never).
    pub(crate) crash_cycle: u64,
}

/// What the nodes running one program share, filled by the first of them (`Node::new`).
#[derive(Default)]
pub struct Shared {
    /// The program's spin loops: scanning the code costs about a million host
    /// instructions, and every node running the program has the same code.
    spins: Option<Arc<Vec<u64>>>,
    /// The cores' timing parameters (424 bytes), when the next node's are the same.
    timing: Option<Arc<nanopu_riscv::TimingParams>>,
    /// The nanoPU NIC's parameters (80 bytes), likewise.
    nic: Option<Arc<NicParams>>,
    /// The DRAM's timing (96 bytes), likewise.
    dram: Option<Arc<Ddr3Params>>,
}

impl Shared {
    /// `timing`, as the copy already shared if it is the same.
    fn timing(&mut self, timing: nanopu_riscv::TimingParams) -> Arc<nanopu_riscv::TimingParams> {
        share(&mut self.timing, &timing)
    }

    /// `nic`, as the copy already shared if it is the same.
    fn nic(&mut self, nic: &NicParams) -> Arc<NicParams> {
        share(&mut self.nic, nic)
    }

    /// `dram`, as the copy already shared if it is the same.
    fn dram(&mut self, dram: &Ddr3Params) -> Arc<Ddr3Params> {
        share(&mut self.dram, dram)
    }
}

/// `value`, as the copy in `kept` if it is the same; else a new one, kept for the next.
fn share<T: Clone + PartialEq>(kept: &mut Option<Arc<T>>, value: &T) -> Arc<T> {
    match kept {
        Some(p) if **p == *value => Arc::clone(p),
        _ => Arc::clone(kept.insert(Arc::new(value.clone()))),
    }
}

impl Node {
    /// Load `program` on a fresh node `index` and put every core at its reset state.
    /// `shared`: what the nodes running `program` share, filled by the first one.
    pub fn new(
        index: u32,
        program: &Arc<Program>,
        cfg: &NodeConfig,
        shared: &mut Shared,
    ) -> Result<Node, String> {
        let ncores = cfg.nic.cores;
        let dram = shared.dram(&cfg.timing.dram);
        let mut mem = NodeMem::sharing(program.clone(), ncores, &cfg.mem, &cfg.timing, dram)
            .map_err(|e| e.to_string())?;
        let ip = node_ip(index);
        let argv = node_argv(index, ip, cfg);
        mem.write_boot(&boot_page(index, ip, cfg, &argv)?);
        mem.set_args(argv);
        let ice = cfg.nic_kind.raw_frames();
        // IceNIC nodes' cores have the byte-swap instructions (docs/models/icenic.md).
        let pcie = cfg.pcie_cycles();
        let timing = shared.timing(nanopu_riscv::TimingParams {
            bswap_insns: ice || cfg.timing.bswap_insns,
            device_load_extra: 2 * pcie,
            ..cfg.timing.clone()
        });
        let cores = (0..ncores).map(|h| core(h, program, &timing, cfg.engine)).collect();
        let spin_pcs =
            shared.spins.get_or_insert_with(|| Arc::new(crate::node::spin::spin_pcs(&mem, program)));
        let spin_pcs = Arc::clone(spin_pcs);
        Ok(Node {
            index,
            ip,
            cores,
            state: vec![CoreState::Scheduled(0); ncores],
            mem,
            nic: node_nic(cfg, index, ip, pcie, shared)?,
            spin_pcs,
            last_run: usize::MAX,
            first_exit_ends: cfg.exit.first_exit_ends_node(program),
            crashed: None,
            crash_cycle: u64::MAX,
        })
    }

    /// The `mip` bit the node's NIC drives (`NodeNic::irq_bit`).
    pub fn irq_bit(&self) -> u32 {
        self.nic.irq_bit()
    }

    /// The node's IceNIC, if it is an IceNIC node.
    pub fn ice(&self) -> Option<&IceNic> {
        self.nic.ice()
    }

    /// After `core`'s run, dispatched at global cycle `now`: the lines it stored to leave
    /// the other cores' L1 D-caches and enter the node's table of stores
    /// (crates/riscv/src/core/coherence.rs), and whether it now loops in place is noted.
    pub fn publish_stores(&mut self, core: usize, now: u64) {
        self.cores[core].note_loop(&self.mem);
        let stores = self.cores[core].take_stores();
        if !stores.is_empty() {
            self.record(core, &stores);
            self.probe_unbitted(core, &stores);
            if self.mem.stores_prune_due() {
                let earliest = self.earliest_read(now);
                self.mem.prune_stores(earliest);
            }
        }
        self.cores[core].clear_noted(stores);
    }

    /// Enter core `by`'s stores in the node's table, and take each line from the L1 D-cache
    /// of every other core that may hold it and has yet to finish: the table's holders
    /// (`Holders`, crates/riscv/src/stores.rs), among them those that filled a line of its
    /// region (`NodeMem::may_hold`). Most lines a core stores to, no other core has read
    /// since its last store: nothing to look up. Line by line, as the table gives each
    /// line's holders: a pass over the lines for each core after it cost about 400 host
    /// instructions a dispatch in the 1,024-core sort (callgrind); what one core's cache
    /// loses does not depend on another's, and each still loses the lines in their order.
    fn record(&mut self, by: usize, stores: &[(u64, u64)]) {
        let live = self.live_others(by);
        for &(line, cycle) in stores {
            let holders = self.mem.record_store(by, line, cycle) & live;
            if holders != 0 {
                self.invalidate(line, holders & self.mem.may_hold(line));
            }
        }
    }

    /// `line` leaves the L1 D-cache of cores `holders`.
    fn invalidate(&mut self, line: u64, mut holders: Holders) {
        while holders != 0 {
            self.cores[holders.trailing_zeros() as usize].observe_store(line);
            holders &= holders - 1;
        }
    }

    /// The node's cores that have a holder bit and have yet to finish, all but `by`.
    fn live_others(&self, by: usize) -> Holders {
        let mut live = 0;
        for (i, s) in self.state.iter().enumerate().take(HOLDER_BITS) {
            if s.running() {
                live |= holder_bit(i);
            }
        }
        live & !holder_bit(by)
    }

    /// The cores past the holder bits (nodes of more than `HOLDER_BITS` cores) may hold any
    /// line: each that has yet to finish, but `by`, loses every line `by` stored to.
    fn probe_unbitted(&mut self, by: usize, stores: &[(u64, u64)]) {
        for i in HOLDER_BITS.min(self.cores.len())..self.cores.len() {
            if i != by && self.state[i].running() {
                stores.iter().for_each(|&(line, _)| self.cores[i].observe_store(line));
            }
        }
    }

    /// The earliest cycle at which a core of the node that has yet to exit may read memory
    /// again, global time being `now`: a scheduled core's own clock; a core parked (netRX,
    /// netTX) or in `wfi` resumes only when woken, and waking moves its clock to the global
    /// time then, at least `now` (`engine/cores.rs`, `wake`). Stores before it can no
    /// longer make a core wait (`StoreTable::prune`), so a node whose other cores wait for
    /// messages keeps only the stores of its run-ahead, not every store since they parked.
    /// A plain loop: the iterator chain it replaced was left as calls (`Zip::new`,
    /// `Map::fold`) in the `fast` build, 150 host instructions a dispatch (callgrind).
    fn earliest_read(&self, now: u64) -> u64 {
        let mut earliest = u64::MAX;
        for (c, s) in self.cores.iter().zip(&self.state) {
            let resumes = match s {
                CoreState::Scheduled(_) => c.cycle(),
                _ if s.running() => c.cycle().max(now),
                _ => continue,
            };
            earliest = earliest.min(resumes);
        }
        earliest
    }

    /// What the node's other cores mean to `core`'s run: one pass over the node's cores,
    /// made at every dispatch (a plain loop; `others_horizon` and a second pass for
    /// `running` took about 150 host instructions a dispatch in the 1,024-core sort,
    /// callgrind).
    pub fn others(&self, core: usize) -> Others {
        let (mut first, mut running) = (u64::MAX, false);
        for (i, s) in self.state.iter().enumerate() {
            if i == core || !s.running() {
                continue;
            }
            running = true;
            if let CoreState::Scheduled(at) = *s {
                if at < first && !self.cores[i].looping() {
                    first = at;
                }
            }
        }
        let horizon = match first {
            u64::MAX => u64::MAX,
            at => at + self.nic.rx_path_cycles(),
        };
        Others { horizon, running }
    }
}

/// What a node's other cores mean to the run of one (`Node::others`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Others {
    /// Earliest cycle at which another runnable core of the node could change what the
    /// core sees (its own time plus the NIC's RX path; `u64::MAX`: none). A core looping
    /// in place changes nothing until an interrupt moves it (`Core::loops_in_place`), and
    /// is not counted.
    pub horizon: u64,
    /// Another core of the node has yet to finish (exit, stop or crash): it may read what
    /// this core stores.
    pub running: bool,
}

/// The node's NIC, as `cfg.nic_kind` says.
fn node_nic(
    cfg: &NodeConfig,
    index: u32,
    ip: u32,
    pcie: u64,
    shared: &mut Shared,
) -> Result<NodeNic, String> {
    let ice = IceParams { pcie_cycles: pcie, ..cfg.ice.clone() };
    Ok(match cfg.nic_kind {
        NicKind::IceNic => NodeNic::Ice(Box::new(IceNic::new(ice, node_mac(index)))),
        NicKind::Zeronic => {
            let control = IceNic::new(cfg.zero.control_queue(&ice), node_mac(index));
            NodeNic::Zero(Box::new(ZeroNic::new(cfg.zero.clone(), control)))
        }
        NicKind::Rdma => {
            let p = RdmaParams { clock_hz: cfg.timing.clock_hz, ..cfg.rdma.clone() };
            NodeNic::Rdma(Box::new(RdmaNic::new(p, node_mac(index), ip)?))
        }
        NicKind::Nanopu => NodeNic::nanopu_alone(Nic::new(shared.nic(&cfg.nic), ip)?),
    })
}

/// The program's argv as the prototype passed it: program name, MAC, IP, then the
/// program's own arguments.
fn node_argv(index: u32, ip: u32, cfg: &NodeConfig) -> Vec<String> {
    let mut argv = vec![cfg.program_name.clone(), mac_text(node_mac(index)), ip_text(ip)];
    argv.extend(cfg.args.iter().cloned());
    argv
}

fn boot_page(index: u32, ip: u32, cfg: &NodeConfig, argv: &[String]) -> Result<Vec<u8>, String> {
    let mac = node_mac(index);
    BootInfo {
        ncores: cfg.nic.cores as u64,
        node: index as u64,
        mac,
        ip,
        argv,
        dram_base: cfg.mem.dram_base,
        dram_size: cfg.mem.dram_size,
        sched_timer_cycles: cfg.nic.sched_timer_cycles,
        rtc_cycles: cfg.timing.rtc_cycles,
    }
    .encode()
}

/// Hart `hart` of a node, executing with `engine`.
fn core(
    hart: usize,
    program: &Arc<Program>,
    timing: &Arc<nanopu_riscv::TimingParams>,
    engine: Engine,
) -> Core {
    let mut c = Core::sharing(hart, program, Arc::clone(timing));
    c.set_engine(engine);
    c
}
