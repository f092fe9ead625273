//! The messages between the Raft client and `sw/apps/raft.c` (docs/apps/raft.md "Wire
//! format"): every payload word is 8 bytes, word 0 the type.

use nanopu_nic::Message;
use nanopu_sim::Time;

/// The reply that completed a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    pub at: Time,
    pub status: u64,
    pub value: u64,
    /// Log index the leader applied it at.
    pub index: u64,
    pub from: u32,
}

pub const M_SET: u64 = 1;
pub const M_GET: u64 = 2;
pub const M_REPLY: u64 = 0x10;
pub const M_REDIRECT: u64 = 0x11;
pub const M_LEADER: u64 = 0x12;

/// Reply status: done; a GET of a key never set; log full; malformed request.
pub const ST_OK: u64 = 0;
pub const ST_MISS: u64 = 1;
pub const ST_FULL: u64 = 2;
pub const ST_BAD: u64 = 3;

/// "No leader known" in a redirect.
pub const NONE: u64 = u64::MAX;

/// What a replica sends the host.
#[derive(Debug, PartialEq, Eq)]
pub enum FromReplica {
    Reply { req: u64, reply: Reply },
    Redirect { req: u64, hint: Option<u32> },
    Leader { term: u64, node: u32 },
}

/// The message `m` from a replica of `n`, or None if it is none of the above.
pub fn parse(m: &Message, n: u32) -> Option<FromReplica> {
    let node = |w: u64| u32::try_from(w).ok().filter(|&x| x < n);
    match *m.words {
        [M_REPLY, req, status, value, index, from] => {
            let reply = Reply { at: Time::ZERO, status, value, index, from: node(from)? };
            Some(FromReplica::Reply { req, reply })
        }
        [M_REDIRECT, req, hint] => Some(FromReplica::Redirect { req, hint: node(hint) }),
        [M_LEADER, term, who] => Some(FromReplica::Leader { term, node: node(who)? }),
        _ => None,
    }
}
