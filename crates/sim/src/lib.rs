//! The discrete-event kernel every other crate stands on.
//!
//! - [`time`]: simulated time as an integer number of femtoseconds, in which the 3.2 GHz core
//!   clock (312,500 fs), 200 Gb/s serialization (40,000 fs per byte) and the prototype's
//!   propagation delays are all exact.
//! - [`queue`]: an event queue ordered by (time, insertion sequence), so ties are broken
//!   deterministically and never by hash order or thread timing.
//! - [`rng`]: a small, fast, seedable generator and per-component streams derived from
//!   (seed, component id).
//! - [`packet`]: the packet the NIC's transports and the network share.
//! - [`stats`]: exact percentiles and summaries over recorded samples.
//! - [`hint`]: cache prefetching for the hot paths.
//! - [`hash`]: a cheap deterministic hasher for maps keyed by integers.
//! - [`div`]: division by a divisor fixed at setup, as a multiplication.

pub mod div;
pub mod hash;
pub mod hint;
pub mod lanes;
pub mod packet;
pub mod queue;
pub mod rng;
pub mod stats;
pub mod time;

pub use queue::EventQueue;
pub use rng::Rng;
pub use time::{Clock, Time};
