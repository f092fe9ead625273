//! The command's integration tests, one binary: a module per topic (cargo test -p nanopu-cli --test main TOPIC::).

mod common;

mod chain;
mod cli;
mod compat;
mod conventions;
mod faults;
mod figures;
mod flag_errors;
mod judgement;
mod nic_compare;
mod raft_cli;
mod ranks;
mod rdma_end_to_end;
mod run_inputs;
mod stops;
mod wireshark;
