//! The test host's side of the replicated services and the eRPC-like stack.

pub mod chain;
pub mod erpc;
pub mod raft;
