//! The nanoPU prototype's chain replication request format (`[chain] format =
//! "prototype"`): what the prototype's load generator sends for its chain (the FireSim
//! switch's, load type CHAINREP) and what its chain answers, so that the prototype's own
//! `lnic-multi-core-chain-rep.cc` runs under `nanopu chain`. Format, roles and setup:
//! docs/apps/chain.md "The prototype's chain".
//!
//! The load generator sends every write to the proxy client at 10.0.0.2, which stamps it
//! and forwards it to the head, 10.0.0.3; each replica writes it to its store and forwards
//! it, with one node fewer in its list, to the next (10.0.0.4, 10.0.0.5); the tail answers
//! the proxy, which puts the cycles since its stamp in word 0 and forwards the answer to the
//! load generator.

use crate::workload::kv_proto::{cityhash16, SERVICE_TIME};

/// The metadata word's write flag (`CHAINREP_FLAGS_OP_WRITE`); the word is flags << 56 |
/// seq << 48 | node count << 40 | client context << 32 | client IP.
pub const FLAG_WRITE: u64 = 1 << 5;
/// The proxy client's IP, where the tail answers (`CHAINREP_CLIENT_IP`).
pub const CLIENT_IP: u64 = 0x0a00_0002;
/// The replicas' IPs, head first (`CHAINREP_NODE1_IP` + 0, 1, 2); the chain is three long.
pub const REPLICA_IPS: [u64; 3] = [0x0a00_0003, 0x0a00_0004, 0x0a00_0005];
/// Value words (`CHAINREP_VALUE_SIZE_WORDS`): 64-byte values.
pub const VALUE_WORDS: usize = 8;
/// Words of the tail's answer as the load generator receives it: the proxy's latency, the
/// send time, the metadata, the key and its hash.
const REPLY_WORDS: usize = 6;

/// The metadata word of a write with `nodes` replicas still to visit.
fn meta(nodes: u64) -> u64 {
    FLAG_WRITE << 56 | nodes << 40 | CLIENT_IP
}

/// The words of a write of key number `k` (key {k, 0}); `tag` is its send time, echoed.
/// The value is {k, k + 1, k + 2} and zeros: the load generator leaves its other five words
/// uninitialised. The write goes to the head with the other two replicas listed (context 0
/// each).
pub fn write_words(k: u64, tag: u64) -> Vec<u64> {
    let mut w = vec![SERVICE_TIME, tag, meta(2), REPLICA_IPS[1], REPLICA_IPS[2], k, 0, cityhash16([k, 0])];
    let mut value = [0; VALUE_WORDS];
    value[..3].copy_from_slice(&[k, k + 1, k + 2]);
    w.extend(value);
    w
}

/// Judge the answer to a write of key number `k` as the load generator receives it: the
/// tail's answer (no replicas left, no value) with the key and its hash; `Ok` with the
/// proxy's latency in cycles, from its forward to the head to the tail's answer.
pub fn judge(k: u64, words: &[u64]) -> Result<u64, String> {
    let want = [meta(0), k, 0, cityhash16([k, 0])];
    match words.len() == REPLY_WORDS && words[2..] == want {
        true => Ok(words[0]),
        false => Err(format!("write of key {k}: reply {:x?}, not [_, _, {want:x?}]", words)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words as the program reads them: the metadata's fields where
    /// `lnic-multi-core-chain-rep.cc` takes them apart (flags >> 56, node count >> 40, the
    /// client IP in the low word), each listed node as context << 32 | IP.
    #[test]
    fn a_write_lists_the_rest_of_the_chain_and_carries_the_value() {
        let w = write_words(7, 99);
        assert_eq!(w.len(), 8 + VALUE_WORDS);
        assert_eq!((w[0], w[1]), (SERVICE_TIME, 99));
        assert_eq!((w[2] >> 56, (w[2] >> 40) & 0xff, w[2] & 0xffff_ffff), (0x20, 2, 0x0a00_0002));
        assert_eq!(&w[3..5], &[0x0a00_0004, 0x0a00_0005]);
        assert_eq!(&w[5..8], &[7, 0, cityhash16([7, 0])]);
        assert_eq!(&w[8..11], &[7, 8, 9]);
        assert!(w[11..].iter().all(|&x| x == 0));
    }

    #[test]
    fn judge_wants_the_tails_answer_for_the_key() {
        let reply = [1234, 99, meta(0), 5, 0, cityhash16([5, 0])];
        assert_eq!(judge(5, &reply), Ok(1234));
        assert!(judge(6, &reply).is_err(), "another key");
        assert!(judge(5, &[1234, 99, meta(1), 5, 0, cityhash16([5, 0])]).is_err(), "not from the tail");
        assert!(judge(5, &reply[..5]).is_err(), "short");
    }
}
