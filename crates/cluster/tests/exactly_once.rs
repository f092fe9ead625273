//! All-to-all under heavy random loss, NDP and Homa: every message delivered exactly once and
//! none lost. Each node sends one message to every other (sw/apps/alltoall.c, which checks
//! every word and exits non-zero on a message from a sender it already heard from).
//!
//! They catch a receiver that forgets a delivered message after a fixed time (the transport
//! remembers deliveries by sender and sequence number, crates/nic/src/transport/seqwin.rs):
//! it would deliver a message again when the sender resends it because its ACKs were lost,
//! and an NDP packet resent after that would open a message that never completes.

use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::summarize_cluster;
use nanopu_cluster::Simulation;
use std::path::PathBuf;

/// A 16-node star, one core per node, every link losing `drop` of its packets.
fn config(transport: &str, bytes: u32, drop: f64) -> String {
    format!(
        "seed = 1\nmax_us = 200000.0\ntransport = \"{transport}\"\n\
         [topology]\nkind = \"star\"\nnodes = 16\n\
         [link]\ndrop_prob = {drop}\n\
         [node]\ncores = 1\nmax_msg_bytes = 4096\n\
         [[program]]\nnodes = \"all\"\nelf = \"apps/alltoall.elf\"\nargs = [\"16\", \"{bytes}\"]\n"
    )
}

fn all_to_all_exactly_once(transport: &str, bytes: u32, drop: f64) {
    let what = format!("{transport}, {bytes} bytes, {drop} loss");
    let f = ClusterFile::parse(&config(transport, bytes, drop)).unwrap();
    let sw = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sw/build");
    let mut sim = Simulation::cluster(&f, &sw).unwrap();
    let outcome = sim.run().unwrap_or_else(|e| panic!("{what}: {e}"));
    let records = sim.message_records();
    let in_flight = sim.in_flight();
    let s = summarize_cluster(&mut sim, outcome);
    assert!(s.failures.is_empty() && s.cores_ok == s.cores, "{what}:\n{}", s.text());
    assert_eq!((s.messages_sent, s.messages_received), (240, 240), "{what}: sent, received");
    assert_eq!(records.len(), 240, "{what}: one delivery per message");
    assert!(records.iter().all(|r| r.delivered.is_some()), "{what}: none lost");
    assert!(s.transport.duplicates_received > 0, "{what}: duplicates came and were dropped");
    assert_eq!(in_flight, (0, 0), "{what}: nothing left half sent or half received");
}

#[test]
fn ndp_all_to_all_at_70_percent_loss() {
    all_to_all_exactly_once("ndp", 64, 0.7);
}

#[test]
fn homa_all_to_all_at_70_percent_loss() {
    all_to_all_exactly_once("homa", 64, 0.7);
}

#[test]
fn ndp_all_to_all_of_4_kib_at_60_percent_loss() {
    all_to_all_exactly_once("ndp", 4096, 0.6);
}

#[test]
fn homa_all_to_all_of_4_kib_at_60_percent_loss() {
    all_to_all_exactly_once("homa", 4096, 0.6);
}

/// Reliability2 item 15: at 90% loss, with a time limit that comes while senders still
/// resend messages whose acknowledgements were all lost, every message was delivered: the
/// run's judgement reports none undelivered (it said "212 being sent ... never delivered").
#[test]
fn messages_delivered_whose_acknowledgements_were_lost_are_not_reported_lost() {
    let text = config("ndp", 1024, 0.9).replace("seed = 1\nmax_us = 200000.0", "seed = 7\nmax_us = 20000.0");
    let f = ClusterFile::parse(&text).unwrap();
    let sw = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sw/build");
    let mut sim = Simulation::cluster(&f, &sw).unwrap();
    let outcome = sim.run().unwrap();
    assert!(sim.message_records().iter().all(|r| r.delivered.is_some()), "every message delivered");
    assert!(!sim.unfinished().is_empty(), "some senders still wait for an acknowledgement");
    assert_eq!((sim.undelivered(), sim.undelivered_counts()), (vec![], (0, 0)));
    let j = nanopu_cluster::report::judge::judge(&sim, outcome);
    assert_eq!((j.complete, j.problems, j.exit_status), (true, vec![], 0));
}
