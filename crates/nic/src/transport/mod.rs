//! The message transport terminated in the NIC (`docs/platform.md` section 3): a reliable,
//! message-oriented protocol over packets of at most `segment_bytes` payload.
//!
//! - [`segment`]: the packet descriptor the transport sends and receives.
//! - [`params`]: protocol choice and every transport constant.
//! - [`pktset`]: which of a message's packets were acknowledged or received, as bits.
//! - [`sender`]: per-message send state (what was sent, acknowledged, allowed), kept in a
//!   window by message id (`outmsgs`), their timeouts in a lazy heap (`deadlines`);
//!   [`retired`]: finished messages dropped a few later, their words' counts loaded first.
//! - [`receiver`]: reassembly, ACK/NACK, PULL pacing (NDP) and SRPT grants with
//!   overcommitment (Homa).
//! - [`seqwin`]: per-message sequence numbers and the rule that delivers every message
//!   exactly once, however late its duplicates come (senders keep their unfinished messages
//!   within a window; receivers remember what they delivered within it).
//! - [`Transport`]: one NIC's endpoint: messages in, segments out, timers (`endpoint`: its
//!   sending and receiving halves, the receiver's pacing of its senders, and its timers,
//!   one file each).
//!
//! NDP-style: the first `rtt_pkts` packets go at once, the rest against PULLs that the
//! receiver paces at one per MTU time; every data packet is ACKed, every trimmed one NACKed;
//! NACKed packets are resent on the next PULL, silent losses after a timeout.
//! Homa-style: unscheduled packets up to `rtt_bytes`, then GRANTs chosen by shortest
//! remaining message first among at most `overcommit` messages, with the scheduled priority
//! carried in the packet; lost packets are asked for again (RESEND) after a timeout.
//! Multicast messages are sent once to the fabric, whose switches make them reliable.

pub mod params;
pub mod pktset;
pub mod receiver;
pub mod retired;
pub mod segment;
pub mod sender;
pub mod seqwin;

mod deadlines;
mod endpoint;
mod outmsgs;

pub use endpoint::{Actions, MessageLog, MsgEvent, TAction, Timer, Transport, TransportCounters};
pub use params::{Protocol, TransportParams};
pub use segment::{flags, Segment};
