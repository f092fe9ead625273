//! Builds simulated nanoPU nodes around real RISC-V programs and runs them.
//!
//! A tour:
//! - [`config`]: what a run is made of (program, cores, NIC, timing, port, limits), validated
//!   with errors that name the field.
//! - [`boot`]: the boot-info page each node's cores find at 0x1000 (docs/abi.md).
//! - [`node`]: one nanoPU: cores, shared memory and L2, NIC, and the state of each core
//!   (scheduled, parked on netRX/netTX, waiting for an interrupt, halted).
//! - [`platform`]: the seam where a core's x30/x31 and nanoPU CSR accesses meet the NIC, and
//!   the rule that keeps run-ahead cores exact (answer now, or yield until global time
//!   catches up).
//! - [`host`]: a test host on the node's port that sends messages at given times and records
//!   replies with arrival times, as the prototype's Scapy tests did.
//! - [`sim`]: the event loop tying them together, and the run's outcome; `nic_path`: the
//!   nanoPU NIC's message path in it (arrivals, sends, latency stamps).
//! - [`stop`]: ending a long run early (Ctrl-C, wall-clock limit) with what it measured.
//! - [`spin`]: recognising `lnic_wait()`'s spin loop so idle cores park instead of spinning.
//! - `cluster`, `network`: clusters from a TOML file ([`cluster_config`], a file per
//!   section): the packet-level fabric between nodes and the transport endpoint in each NIC.
//! - `partition`, `parallel`: a leaf-spine cluster run as one partition per leaf,
//!   advancing together in windows on several host threads, with results that do not
//!   depend on the number of threads; `barrier` is where their threads meet.
//! - [`loadgen`]: the open-loop load generator of the scheduling experiments (requests
//!   {service time, send time}, per-request send and reply times), configured by
//!   [`load_config`]; [`fuzzing`] holds the fuzz targets' bodies for both files (`fuzz/`).
//! - [`chain`]: chain replication's client (the test host) against `sw/apps/chain.c`,
//!   configured by [`chain_config`].
//! - [`sort`]: the sort benchmark harness: inputs loaded into memory, outputs validated,
//!   stage logs turned into tables.
//! - [`report`]: per-core and per-run summaries, as text and JSON; [`progress`], the progress
//!   line of long runs; [`trace`], a run as a Perfetto trace (nodes, cores, a sort's stages,
//!   messages in flight, message flows).

#![forbid(unsafe_code)]

pub mod apps;
mod barrier;
pub mod boot;
pub mod capture;
pub mod chain;
pub mod chain_config;
pub mod chain_sweep;
mod cluster;
pub mod cluster_config;
pub mod cluster_report;
pub mod config;
mod cores;
pub mod erpc;
pub mod fault;
pub mod fuzzing;
pub mod host;
pub mod ice;
pub mod ice_frame;
pub mod kv;
mod link;
pub mod load_config;
pub mod load_sweep;
pub mod load_table;
pub mod loadgen;
mod network;
mod nic_path;
pub mod node;
pub mod node_nic;
pub mod outcome;
mod parallel;
mod partition;
pub mod platform;
mod port_tx;
pub mod progress;
pub mod raft;
pub mod rdma;
pub mod records;
pub mod report;
pub mod schema;
pub mod server_cost;
pub mod setalg;
pub mod sim;
pub mod sort;
pub mod spin;
pub mod stop;
pub mod trace;

pub use config::{NodeConfig, PortParams};
pub use host::{HostMessage, TestHost};
pub use outcome::{Outcome, SimError};
pub use sim::Simulation;
