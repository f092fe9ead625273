//! Dot product (docs/apps/paper-apps.md "Dot product"): the host side of
//! `sw/apps/dotprod_reg.c` (computed as the words are read) and `dotprod_mem.c` (copied to
//! memory first), one request at a time on one core of either NIC.

use super::hostnet::HostNet;
use super::one_node_with;
use nanopu_cluster::config::NicKind;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::TestHost;
use nanopu_nic::Message;
use nanopu_sim::Time;

/// The servers' weights: `weight[i] = i + 1` over 256 words, used cyclically (dotprod.h).
const WEIGHTS: usize = 256;

/// What the servers answer: sum of `weight[i]` x word i, mod 2^64.
pub fn dot(words: &[u64]) -> u64 {
    let w = |i: usize| (i % WEIGHTS) as u64 + 1;
    words.iter().enumerate().fold(0u64, |acc, (i, x)| acc.wrapping_add(w(i).wrapping_mul(*x)))
}

/// Request `i`'s words, hashed from the seed.
pub fn request_words(seed: u64, i: u64, words: usize) -> Vec<u64> {
    (0..words as u64).map(|k| super::nn::mix(seed ^ (i << 32) ^ k)).collect()
}

/// Every answer, the host's, and each request's latency (request's last byte leaving the
/// host to the answer's last byte back).
#[derive(Clone, Debug)]
pub struct DotRun {
    pub answers: Vec<u64>,
    pub expected: Vec<u64>,
    pub latency_ns: Vec<f64>,
}

/// Run a dot-product server (its bytes, the build for `nic`) on one core: `requests`
/// requests of `words` words, each sent when the previous answer came back.
pub fn run_dot(elf: &[u8], nic: NicKind, words: usize, requests: u64, seed: u64) -> Result<DotRun, String> {
    let (net, mut sim) = (HostNet(nic), one_node_with(elf, 1, nic)?);
    let req =
        move |i: u64| -> Message { TestHost::message(0, node_ip(0), 0, &request_words(seed, i, words)) };
    net.send_at(&mut sim, Time::from_us(2), req(0));
    net.stop_after(&mut sim, requests as usize);
    let mut answered = 0;
    net.on_receive(&mut sim, move |now, _| {
        answered += 1;
        if answered < requests {
            vec![(now, req(answered))]
        } else {
            vec![]
        }
    });
    net.run(&mut sim)?;
    let (sent, received) = (net.sent(&sim), net.received(&sim)?);
    let answers = received.iter().map(|r| r.msg.words[0]).collect();
    let expected = (0..requests).map(|i| dot(&request_words(seed, i, words))).collect();
    let latency_ns = sent.iter().zip(&received).map(|(s, r)| (r.time - s.time).as_ns_f64()).collect();
    Ok(DotRun { answers, expected, latency_ns })
}
