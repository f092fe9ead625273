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
use nanopu_riscv::stores::{holder_bit, region_bit, Holders};
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
        let mut stores = self.cores[core].take_stores();
        if !stores.is_empty() {
            let others = self.record(core, &mut stores);
            self.probe(core, &stores, others);
            if self.mem.stores_prune_due() {
                let earliest = self.earliest_read(now);
                self.mem.prune_stores(earliest);
            }
        }
        self.cores[core].clear_noted(stores);
    }

    /// Enter core `by`'s stores in the node's table. Each line's cycle, once entered, gives
    /// way to the cores that may hold the line (`Holders`, crates/riscv/src/stores.rs), for
    /// `probe`; returns them all but `by`, together.
    fn record(&mut self, by: usize, stores: &mut [(u64, u64)]) -> Holders {
        let mut others = 0;
        for (line, cycle) in stores {
            let holders = self.mem.record_store(by, *line, *cycle);
            others |= holders & !holder_bit(by);
            *cycle = holders as u64;
        }
        others
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

    /// The lines core `by` stored to leave the L1 D-cache of every other core that may
    /// hold them (`stores`: each line and its holders, from `record`; `others`: all their
    /// holders but `by`) and has yet to finish. Most lines a core stores to, no other core
    /// has read since its last store: nothing to do. Core by core, as what one core's cache
    /// loses does not depend on another's: a core none of the lines may be in is skipped
    /// at once, and a probed core's cache is looked up line after line, unless the core
    /// never filled a line of its region (`NodeMem::seen_regions`): the table knows nothing
    /// of most lines a run stores to, and almost no other core holds them (about 4,600 of
    /// 2.48 M probes in the 1,024-core sort found the line).
    fn probe(&mut self, by: usize, stores: &[(u64, u64)], others: Holders) {
        for i in 0..self.cores.len() {
            let bit = holder_bit(i);
            if i == by || (others & bit == 0 && bit != 0) || !self.state[i].running() {
                continue;
            }
            let seen = self.mem.seen_regions(i);
            let core = &mut self.cores[i];
            for &(line, holders) in stores {
                if (holders as Holders & bit != 0 || bit == 0) && seen & region_bit(line) != 0 {
                    core.observe_store(line);
                }
            }
        }
    }

    /// Earliest cycle at which another runnable core of this node could change what `core`
    /// sees (its own time plus the NIC's RX path). A core looping in place changes nothing
    /// until an interrupt moves it (`Core::loops_in_place`), and is not counted. Called at
    /// every dispatch: a plain loop.
    pub fn others_horizon(&self, core: usize) -> u64 {
        let mut t: Option<u64> = None;
        for (i, s) in self.state.iter().enumerate() {
            if let CoreState::Scheduled(at) = *s {
                if t.is_none_or(|t| at < t) && i != core && !self.cores[i].looping() {
                    t = Some(at);
                }
            }
        }
        t.map_or(u64::MAX, |t| t + self.nic.rx_path_cycles())
    }
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
