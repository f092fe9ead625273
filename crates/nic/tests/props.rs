//! Property tests of both transports and of multicast over a faulty in-test network
//! (`common`): random message sizes, 0-90% loss, trimming, reordering, duplicates up to 3 ms
//! late, and link flaps. Every message is delivered exactly once with its payload intact, or
//! the run ends with it still unfinished at its sender, which names it (`Transport::unfinished`).
//! Without permanent faults every run also finishes: nothing is left unfinished.

mod common;

use common::{params, Faults, Flap, World};
use nanopu_nic::transport::Protocol;
use nanopu_sim::Time;
use proptest::prelude::*;

/// Simulated time a case may take; the slowest (90% loss, 16-packet messages) need a few ms.
const LIMIT: Time = Time::from_us(200_000);

/// A message: (sender, destination offset from the sender (or group start), group size
/// (0: unicast), bytes, start in ns).
type Spec = (usize, usize, usize, u16, u64);

fn faults() -> impl Strategy<Value = Faults> {
    let flap = (0usize..8, 0u64..500, 0u64..2000);
    let flaps = prop::collection::vec(flap, 0..=2);
    (0.0..=0.9f64, 0.0..=1.0f64, 0.0..=0.3f64, 0u64..3000, 0u64..2000, flaps).prop_map(
        |(loss, trim, dup, late_us, jitter_ns, flaps)| Faults {
            loss,
            trim,
            dup,
            late: Time::from_us(late_us),
            jitter: Time::from_ns(jitter_ns),
            flaps: flaps
                .into_iter()
                .map(|(node, at, long)| Flap {
                    node,
                    from: Time::from_us(at),
                    until: Time::from_us(at + long),
                })
                .collect(),
            drop: None,
        },
    )
}

/// Messages among `nodes` nodes; `mcast` says whether some may be multicast.
fn specs(mcast: bool) -> impl Strategy<Value = Vec<Spec>> {
    let group = if mcast { 0usize..=4 } else { 0usize..=0 };
    let size = prop_oneof![1u16..=64, 65u16..=4096, 4097u16..=16_384];
    prop::collection::vec((0usize..6, 0usize..6, group, size, 0u64..50_000), 1..=16)
}

fn protocol() -> impl Strategy<Value = Protocol> {
    prop_oneof![Just(Protocol::Ndp), Just(Protocol::Homa)]
}

fn world(nodes: usize, p: Protocol, mut f: Faults, specs: &[Spec], seed: u64) -> World {
    f.flaps.retain(|x| x.node < nodes);
    let mut w = World::new(nodes, params(p), f, seed);
    for &(from, off, group, len, at) in specs {
        let (from, at) = (from % nodes, Time::from_ns(at));
        match group {
            0 => w.unicast(at, from, (from + 1 + off % (nodes - 1)) % nodes, len),
            g => w.multicast(at, from, (off % nodes, g.min(nodes - off % nodes)), len),
        }
    }
    w
}

/// Run to the end; exactly once, intact, and nothing left unfinished.
fn exactly_once(mut w: World) -> Result<(), TestCaseError> {
    let finished = w.run(LIMIT);
    let lost = w.check().map_err(TestCaseError::fail)?;
    prop_assert!(lost.is_empty() || !finished, "finished yet lost {lost:?}");
    prop_assert!(finished, "not finished by {LIMIT:?}; unfinished at their senders: {lost:?}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn unicast_is_delivered_exactly_once(
        nodes in 2usize..=5, p in protocol(), f in faults(), m in specs(false), seed: u64,
    ) {
        exactly_once(world(nodes, p, f, &m, seed))?;
    }

    #[test]
    fn multicast_and_unicast_are_delivered_exactly_once(
        nodes in 3usize..=6, p in protocol(), f in faults(), m in specs(true), seed: u64,
    ) {
        exactly_once(world(nodes, p, f, &m, seed))?;
    }
}

/// A link that never comes back: what crosses it is lost, and its sender says so.
#[test]
fn what_a_dead_link_loses_is_named() {
    let dead = Flap { node: 2, from: Time::ZERO, until: Time::from_us(1_000_000) };
    let mut w = World::new(3, params(Protocol::Ndp), Faults { flaps: vec![dead], ..Faults::default() }, 9);
    w.unicast(Time::ZERO, 0, 1, 3000);
    w.unicast(Time::ZERO, 0, 2, 3000);
    w.unicast(Time::ZERO, 1, 2, 10);
    assert!(!w.run(Time::from_us(2000)));
    let lost = w.check().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lost, vec![(1, 2), (2, 2)], "(message, node) of the two to node 2");
}
