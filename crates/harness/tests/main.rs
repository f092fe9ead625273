//! The harness's integration tests, one binary: a module per topic (cargo test -p nanopu-harness --test main TOPIC::).

mod common;

mod chain;
mod dctcp;
mod engines;
mod erpc;
mod loadgen;
mod mica;
mod paper_apps;
mod parallel;
mod raft;
mod rdma;
mod schema;
mod setalg;
mod sort;
mod tcp;
mod tcp_workloads;
mod zeronic;
