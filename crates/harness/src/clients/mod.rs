//! The test host's side of the replicated services, the eRPC-like stack and the C TCP.

pub mod chain;
pub mod erpc;
pub mod raft;
pub mod tcp;
