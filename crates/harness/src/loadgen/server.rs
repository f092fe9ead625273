//! How the server ended (failed cores, what they printed, the run's judgement, an
//! IceNIC's dropped frames) and which loads an IceNIC server takes. A module of its own because these
//! speak of the server node and its NIC, not of the load.

use crate::apps::hostnet;
use crate::workload::kv::{self, KvSpec};
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;

/// What the end of a run tells about the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerEnd {
    /// Cores that exited with a non-zero code: (core, code).
    pub failed: Vec<(usize, i64)>,
    /// What the cores printed ("core N: ..."), cut to [`CONSOLE_MAX`] bytes.
    pub console: String,
    /// The run's judgement's problems (`nanopu_cluster::report::judge`): requests held for
    /// a context no core registered, a run stopped early.
    pub judged: Vec<String>,
    /// An IceNIC server's dropped frames (its receive buffer full), in a sentence.
    pub nic_drops: Option<String>,
}

/// Most console output kept in [`ServerEnd::console`], bytes.
pub const CONSOLE_MAX: usize = 2000;

/// Whether an IceNIC server can take this load: a checked workload (`checked`: key-value,
/// RDMA or set algebra, not service-time classes), the key-value one (`kv`) with static
/// steering, one core (the NIC has one queue pair, driven by hart 0:
/// sw/include/appnet_ice.h). Several cores and JBSQ need a multi-queue IceNIC, not modelled
/// yet (docs/apps/mica.md "On IceNIC").
pub fn ice_supported(kv: Option<&KvSpec>, checked: bool, cores: usize) -> Result<(), String> {
    let why = match kv {
        _ if cores != 1 => "server.cores: an IceNIC server runs on one core (its NIC has one queue pair)",
        _ if !checked => {
            "load: an IceNIC server takes only the checked workloads ([load.kv], sw/apps/mica_ice.c; \
             [load.rdma], rdma_ice.c; [load.setalg], setalg_ice.c), not service-time classes"
        }
        Some(k) if k.steering != kv::Steering::Static => {
            "load.kv.steering: \"jbsq\" is the nanoPU NIC's core selection; an IceNIC server takes \"static\""
        }
        _ => return Ok(()),
    };
    Err(format!("{why} (IceNIC load runs: docs/apps/mica.md \"On IceNIC\")"))
}

impl ServerEnd {
    pub(super) fn of(sim: &mut Simulation, outcome: Outcome) -> ServerEnd {
        let judged = nanopu_cluster::report::judge::judge(sim, outcome).problems;
        let node = &mut sim.nodes[0];
        let failed = (node.cores.iter().enumerate())
            .filter_map(|(i, c)| c.halted().filter(|&x| x != 0).map(|x| (i, x)))
            .collect();
        let ice = node.ice().is_some();
        let console = consoles(&mut node.cores);
        let nic_drops = ice.then(|| hostnet::dropped(sim).err()).flatten();
        ServerEnd { failed, console, judged, nic_drops }
    }

    /// What went wrong with the server, one sentence each: its failure if it failed (what
    /// follows from that need not be said), else the run's judgement (contexts it never
    /// registered, a run stopped early); and frames its IceNICs dropped (a likely cause of
    /// a failure: lost messages).
    pub(super) fn problems(&self) -> Vec<String> {
        if self.failed.is_empty() {
            return self.judged.iter().cloned().chain(self.nic_drops.clone()).collect();
        }
        let exits: Vec<String> =
            self.failed.iter().map(|(c, x)| format!("core {c} exited with code {x}")).collect();
        let printed = match self.console.as_str() {
            "" => "it printed nothing".to_string(),
            c => format!("it printed {c:?}"),
        };
        let failed = format!("the server failed: {}; {printed}", exits.join(", "));
        std::iter::once(failed).chain(self.nic_drops.clone()).collect()
    }
}

/// What each core printed, "core N: text" per line, cut to [`CONSOLE_MAX`] bytes.
fn consoles(cores: &mut [nanopu_riscv::Core]) -> String {
    let mut s = String::new();
    for (i, c) in cores.iter_mut().enumerate() {
        let text = String::from_utf8_lossy(&c.take_console()).trim().to_string();
        if !text.is_empty() {
            s.push_str(&format!("{}core {i}: {text}", if s.is_empty() { "" } else { "\n" }));
        }
    }
    cut_console(s)
}

/// `s` within [`CONSOLE_MAX`] bytes (at a character boundary), saying how much was cut.
pub(super) fn cut_console(mut s: String) -> String {
    if s.len() > CONSOLE_MAX {
        let cut = (0..=CONSOLE_MAX).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        let more = s.len() - cut;
        s.truncate(cut);
        s.push_str(&format!(" [... {more} more bytes cut]"));
    }
    s
}
