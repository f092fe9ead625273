//! The simulator: simulated nanoPU (and IceNIC) nodes around real RISC-V programs, the
//! network between them, and the event loop that runs them. What runs on top (workloads,
//! load generators, clients, apps, the sort harness) is the `nanopu-harness` crate, which uses
//! only this crate's public API.
//!
//! A tour, room by room:
//! - [`engine`]: the [`Simulation`] and its event loop; every `impl Simulation` lives in this
//!   folder: core dispatch (`cores`), the nanoPU NIC's message path (`nic_path`), IceNIC
//!   glue ([`engine::ice`]), the network and host-link glue, faults ([`engine::fault`]),
//!   building a cluster from its file ([`engine::cluster`]), progress, stops and the run's
//!   [`Outcome`], and `parallel/`: a leaf-spine cluster as one partition per leaf advancing
//!   in windows on several host threads, with results that do not depend on the threads.
//! - [`node`]: one nanoPU: cores, shared memory and L2, NIC ([`node::nic`]), the state of
//!   each core; [`node::platform`], the seam where x30/x31 and nanoPU CSR accesses meet the
//!   NIC; [`node::boot`], the boot-info page; [`node::spin`], recognising `lnic_wait()`'s spin
//!   loop so idle cores park.
//! - [`net`]: the packet-level fabric's state in a cluster, the host link and port
//!   transmit of single-node runs, captures ([`net::capture`]) and UDP frames
//!   ([`net::frame`]).
//! - [`host`]: the test host on a node's port that sends messages at given times and records
//!   replies with arrival times, as the prototype's Scapy tests did.
//! - [`config`]: what a run is made of (program, cores, NIC, timing, port, limits) and the
//!   cluster file ([`config::cluster`]), validated with errors that name the field.
//! - [`report`]: per-core, per-run and per-cluster summaries, as text and JSON, and
//!   per-message records.

#![forbid(unsafe_code)]

pub mod config;
pub mod engine;
pub mod host;
pub mod net;
pub mod node;
pub mod report;

pub use config::{NodeConfig, PortParams};
pub use engine::outcome::{Outcome, SimError};
pub use engine::Simulation;
pub use host::{HostMessage, TestHost};
