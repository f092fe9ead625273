//! The simulator's integration tests, one binary: a module per topic (cargo test -p nanopu-cluster --test main TOPIC::).

mod common;

mod bad_input;
mod conformance;
mod exactly_once;
mod faults;
mod host_driven;
mod icenic;
mod icenic_cluster;
mod nanokernel;
mod network;
mod nic_compare;
mod rdma_nic;
mod run_ahead;
mod shared_memory;
mod stops;
