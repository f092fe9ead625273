//! The harness's configuration files: a load file ([`load`]) and a chain file ([`chain`]).

pub mod chain;
pub mod load;
