//! The harness's integration tests, one binary: a module per topic (cargo test -p nanopu-harness --test main TOPIC::).

mod common;

mod chain;
mod erpc;
mod loadgen;
mod mica;
mod mica_ice;
mod paper_apps;
mod parallel;
mod raft;
mod rdma;
mod rdma_ice;
mod schema;
mod setalg;
mod setalg_ice;
mod sort;
