//! Sweeps of many runs (load points, chain configurations) and the tables they print.

pub mod chain;
pub mod load;
pub mod table;
