//! The checked workloads: what the test host sends, what a correct server answers, and the
//! checkers that hold replies to it.

pub mod chain_proto;
pub mod kv;
pub mod kv_proto;
pub mod rdma;
pub mod server_cost;
pub mod setalg;
