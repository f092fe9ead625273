//! Raft's safety properties checked after a run (the paper's Figure 3 and section 8;
//! docs/apps/raft.md "Checks"): every violation is a line of the result's problems.

use super::client::{Announcement, Op, Request};
use super::state::{Entry, Replica, E_SET, NKEYS};
use super::wire::{ST_MISS, ST_OK};
use std::collections::{BTreeMap, HashMap};

/// Election Safety: at most one leader per term.
pub fn one_leader_per_term(a: &[Announcement]) -> Vec<String> {
    let mut by_term: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for x in a {
        let v = by_term.entry(x.term).or_default();
        if !v.contains(&x.node) {
            v.push(x.node);
        }
    }
    by_term
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(t, v)| format!("term {t} had {} leaders: nodes {v:?}", v.len()))
        .collect()
}

/// The replica whose commit index is the highest (its committed prefix holds every other's).
fn reference(rs: &[Replica]) -> &Replica {
    rs.iter().max_by_key(|r| (r.commit, std::cmp::Reverse(r.node))).expect("replicas")
}

/// State Machine Safety: each replica's committed prefix is the reference's; the longest
/// committed prefix is stored on a majority; no committed entry was ever overwritten.
pub fn committed_prefixes(rs: &[Replica]) -> Vec<String> {
    let best = reference(rs);
    let c = best.commit as usize;
    let mut out = Vec::new();
    for r in rs {
        let k = r.commit as usize;
        if r.log.len() <= k || r.log[..=k] != best.log[..=k] {
            out.push(format!("node {}: committed prefix 1..={k} differs from node {}'s", r.node, best.node));
        }
        if r.truncated_committed != 0 {
            out.push(format!(
                "node {}: was told to overwrite {} committed entries",
                r.node, r.truncated_committed
            ));
        }
    }
    let holding = rs.iter().filter(|r| r.log.len() > c && r.log[..=c] == best.log[..=c]).count();
    if 2 * holding <= rs.len() {
        out.push(format!(
            "committed prefix 1..={c} stored on {holding} of {} replicas, not a majority",
            rs.len()
        ));
    }
    out
}

/// What applying `log[1..=upto]` in order gives: the store, and each request's result
/// (value, log index) at its first entry (later duplicates are not executed, section 8).
pub fn replay(log: &[Entry], upto: usize) -> (Vec<u64>, HashMap<u64, (u64, u64)>) {
    let (mut kv, mut done) = (vec![0u64; NKEYS], HashMap::new());
    for (i, e) in log.iter().enumerate().take(upto + 1).skip(1) {
        if e.req == 0 || done.contains_key(&e.req) || e.key as usize >= NKEYS {
            continue;
        }
        if e.kind == E_SET {
            kv[e.key as usize] = e.value;
        }
        done.insert(e.req, (kv[e.key as usize], i as u64));
    }
    (kv, done)
}

/// Entries applied in order: each replica's store is the replay of its applied prefix (or,
/// if the run stopped while it applied the next committed entry, of that one too: raft.c
/// updates the store before lastApplied).
pub fn applied_in_order(rs: &[Replica]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rs {
        let upto = |n: u64| replay(&r.log, n as usize).0 == r.kv;
        let consistent = upto(r.applied) || (r.applied < r.commit && upto(r.applied + 1));
        if r.applied > r.commit {
            out.push(format!("node {}: applied {} entries, committed only {}", r.node, r.applied, r.commit));
        } else if !consistent {
            out.push(format!(
                "node {}: store differs from applying its log 1..={} in order",
                r.node, r.applied
            ));
        }
    }
    out
}

/// Every answered request is in the committed log where its reply says, once executed;
/// a SET's value is the one sent, a GET's the value the replay has there (linearizable).
pub fn answers(rs: &[Replica], reqs: &[Request]) -> Vec<String> {
    let best = reference(rs);
    let (_, done) = replay(&best.log, best.commit as usize);
    let mut out = Vec::new();
    for r in reqs {
        let Some(a) = r.reply else { continue };
        let got = done.get(&r.id);
        let want = match r.op {
            Op::Set => (r.value, ST_OK),
            Op::Get => got.map_or((0, ST_OK), |g| (g.0, if g.0 == 0 { ST_MISS } else { ST_OK })),
        };
        if got.map(|g| g.1) != Some(a.index) || (a.value, a.status) != want {
            out.push(format!(
                "request {} ({:?} key {}): acknowledged {{index {}, value {:#x}, status {}}}, the committed log has {:?}",
                r.id, r.op, r.key, a.index, a.value, a.status, got
            ));
        }
    }
    out
}

/// Every check; the problems found (empty: the run is safe).
pub fn all(rs: &[Replica], a: &[Announcement], reqs: &[Request]) -> Vec<String> {
    let mut out = one_leader_per_term(a);
    out.extend(committed_prefixes(rs));
    out.extend(applied_in_order(rs));
    out.extend(answers(rs, reqs));
    out.truncate(20);
    out
}

#[cfg(test)]
mod tests {
    use super::super::state::E_GET;
    use super::super::wire::Reply;
    use super::*;
    use nanopu_sim::Time;

    fn set(term: u64, req: u64, key: u64, value: u64) -> Entry {
        Entry { term, kind: E_SET, req, key, value }
    }

    /// Three replicas holding `log` (index 0 the empty prefix), committed and applied to `commit`.
    fn replicas(log: &[Entry], commit: u64) -> Vec<Replica> {
        let mut full = vec![Entry { term: 0, kind: 0, req: 0, key: 0, value: 0 }];
        full.extend_from_slice(log);
        let kv = replay(&full, commit as usize).0;
        (0..3)
            .map(|node| Replica {
                node,
                booted: true,
                term: 1,
                role: 0,
                commit,
                applied: commit,
                elections: 0,
                truncated_committed: 0,
                next_index: vec![0; 7],
                match_index: vec![0; 7],
                log: full.clone(),
                kv: kv.clone(),
            })
            .collect()
    }

    fn answered(id: u64, op: Op, key: u64, value: u64, index: u64) -> Request {
        let reply = Reply { at: Time::ZERO, status: ST_OK, value, index, from: 0 };
        Request {
            extra: 0,
            id,
            op,
            key,
            value,
            due: Time::ZERO,
            sends: 1,
            last_send: Time::ZERO,
            target: 0,
            reply: Some(reply),
        }
    }

    #[test]
    fn a_consistent_run_passes() {
        let rs = replicas(&[set(1, 1, 5, 10), set(1, 2, 5, 20), set(1, 1, 5, 10)], 3);
        let reqs = [answered(1, Op::Set, 5, 10, 1), answered(2, Op::Set, 5, 20, 2)];
        assert_eq!(all(&rs, &[], &reqs), Vec::<String>::new());
        assert_eq!(rs[0].kv[5], 20, "the duplicate of request 1 is not executed again");
    }

    #[test]
    fn two_leaders_in_a_term_are_caught() {
        let a = |node| Announcement { at: Time::ZERO, term: 4, node };
        assert_eq!(one_leader_per_term(&[a(1), a(1)]).len(), 0);
        assert!(one_leader_per_term(&[a(1), a(2)])[0].contains("term 4 had 2 leaders"));
    }

    #[test]
    fn a_differing_committed_entry_is_caught() {
        let mut rs = replicas(&[set(1, 1, 5, 10), set(1, 2, 6, 20)], 2);
        rs[1].log[2].value = 21;
        let p = committed_prefixes(&rs);
        assert!(p.iter().any(|x| x.contains("node 1: committed prefix")), "{p:?}");
        rs[2].log[2].value = 21;
        let p = committed_prefixes(&rs);
        assert!(p.iter().any(|x| x.contains("not a majority")), "{p:?}");
    }

    #[test]
    fn a_store_not_matching_its_log_is_caught() {
        let mut rs = replicas(&[set(1, 1, 5, 10)], 1);
        rs[0].kv[5] = 11;
        assert!(applied_in_order(&rs)[0].contains("node 0: store differs"));
    }

    #[test]
    fn a_run_stopped_while_applying_the_next_committed_entry_passes() {
        let mut rs = replicas(&[set(1, 1, 5, 10), set(1, 2, 5, 20)], 2);
        rs[0].applied = 1; // the store already holds entry 2
        assert!(applied_in_order(&rs).is_empty());
        rs[0].commit = 1; // not committed: the store is ahead of the log
        assert!(!applied_in_order(&rs).is_empty());
    }

    #[test]
    fn a_lost_or_wrong_acknowledgement_is_caught() {
        let rs = replicas(&[set(1, 1, 5, 10), Entry { term: 1, kind: E_GET, req: 2, key: 5, value: 0 }], 2);
        assert!(answers(&rs, &[answered(3, Op::Set, 5, 30, 3)])[0].contains("request 3"), "not in the log");
        assert!(!answers(&rs, &[answered(2, Op::Get, 5, 9, 2)]).is_empty(), "a GET's stale value");
        assert!(answers(&rs, &[answered(2, Op::Get, 5, 10, 2)]).is_empty());
    }
}
