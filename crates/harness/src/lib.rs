//! What runs on top of the simulator (`nanopu-cluster`), through its public API only.
//!
//! A tour:
//! - [`workload`]: the checked workloads' requests, replies and checkers: the key-value store
//!   ([`workload::kv`], MICA), one-sided RDMA, set algebra, and what a server's requests cost.
//! - [`loadgen`]: the open-loop load generator of the scheduling and nanoservice experiments
//!   (requests {service time, send time}, per-request send and reply times).
//! - [`clients`]: the test host's side of chain replication, Raft, the eRPC-like stack and
//!   the C TCP (smoltcp as an independent TCP).
//! - [`apps`]: the paper apps' drivers (neural network, Othello, N-body, dot product).
//! - [`sort`]: the sort benchmark harness: inputs loaded into memory, outputs validated,
//!   stage logs turned into tables; [`trace`], a run as a Perfetto trace.
//! - [`config`]: the load and chain files ([`config::load`], [`config::chain`]; Raft's is
//!   [`clients::raft::config`]); [`schema`], their JSON Schemas and `docs/config.md`;
//!   [`fuzzing`], the fuzz targets' bodies for the files.
//! - [`sweep`]: sweeps of load points and chain configurations, and their tables.

#![forbid(unsafe_code)]

pub mod apps;
pub mod clients;
pub mod config;
pub mod fuzzing;
pub mod loadgen;
pub mod schema;
pub mod sort;
pub mod sweep;
pub mod trace;
pub mod workload;
