//! N-body (docs/apps/paper-apps.md): the host side of `sw/apps/nbody.c`, a Barnes-Hut tree
//! node answering force requests. The same IEEE double operations in the same order as
//! `sw/apps/nbody.h` (which is built without fused multiply-add), so every force matches
//! bit for bit.

use super::hostnet::HostNet;
use super::{one_node_with, run_checked};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::TestHost;
use nanopu_sim::Time;

/// Gravitational constant, m^3 kg^-1 s^-2 (CODATA 2018; nbody.h `NB_G`).
pub const G: f64 = 6.674e-11;
/// Opening criterion theta = 0.5, squared (nbody.h `NB_THETA2`).
pub const THETA2: f64 = 0.25;
/// Softening length squared (nbody.h `NB_EPS2`).
pub const EPS2: f64 = 1.0e-6;

const CONFIG: u64 = 0;
const REQUEST: u64 = 1;

/// A tree node: centre of mass, mass, side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeNode {
    pub x: f64,
    pub y: f64,
    pub m: f64,
    pub s: f64,
}

/// A body: position and mass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    pub x: f64,
    pub y: f64,
    pub m: f64,
}

/// The node's answer: None if it must be opened, else the force (fx, fy) on the body.
pub fn force(n: &TreeNode, b: &Body) -> Option<(f64, f64)> {
    let (dx, dy) = (n.x - b.x, n.y - b.y);
    let r2 = dx * dx + dy * dy + EPS2;
    // As nbody.h's `!(s*s < theta2*r2)`: a NaN also means "open it".
    if (n.s * n.s).partial_cmp(&(THETA2 * r2)) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let k = G * n.m * b.m / (r2 * r2.sqrt());
    Some((k * dx, k * dy))
}

/// A uniform double in [lo, hi) from a hash.
fn uniform(h: u64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * ((h >> 11) as f64 / (1u64 << 53) as f64)
}

/// Body `i` of a seeded set: positions in a 1,000 m square, masses 1 to 100 kg.
pub fn body(seed: u64, i: u64) -> Body {
    let h = |k: u64| super::nn::mix(seed ^ (i << 2) ^ k);
    Body { x: uniform(h(0), 0.0, 1000.0), y: uniform(h(1), 0.0, 1000.0), m: uniform(h(2), 1.0, 100.0) }
}

/// A node's answers to `bodies` requests, each request sent when the previous answer came
/// back (closed loop), with each answer's latency (request sent to answer received).
#[derive(Clone, Debug)]
pub struct ForceRun {
    pub answers: Vec<Option<(f64, f64)>>,
    pub expected: Vec<Option<(f64, f64)>>,
    pub latency_ns: Vec<f64>,
}

fn request(seed: u64, i: u64) -> nanopu_nic::Message {
    let b = body(seed, i);
    TestHost::message(0, node_ip(0), 0, &[REQUEST, i, b.x.to_bits(), b.y.to_bits(), b.m.to_bits()])
}

/// Run nbody (its bytes: nbody.elf, or nbody_ice.elf on IceNIC) on one node: configure
/// `node`, then `bodies` seeded requests.
pub fn run_forces(
    elf: &[u8],
    nic: NicKind,
    node: TreeNode,
    seed: u64,
    bodies: u64,
) -> Result<ForceRun, String> {
    let (net, mut sim) = (HostNet(nic), one_node_with(elf, 1, nic)?);
    let cfg = [CONFIG, node.x.to_bits(), node.y.to_bits(), node.m.to_bits(), node.s.to_bits()];
    net.send_at(&mut sim, Time::from_us(1), TestHost::message(0, node_ip(0), 0, &cfg));
    net.send_at(&mut sim, Time::from_us(2), request(seed, 0));
    net.stop_after(&mut sim, bodies as usize);
    net.on_receive(&mut sim, move |now, m| {
        let next = m.words[1] + 1;
        if next < bodies {
            vec![(now, request(seed, next))]
        } else {
            vec![]
        }
    });
    net.run(&mut sim)?;
    let (sent, received) = (net.sent(&sim), net.received(&sim)?);
    let answer = |w: &[u64]| (w[2] == 1).then(|| (f64::from_bits(w[3]), f64::from_bits(w[4])));
    let answers = received.iter().map(|r| answer(&r.msg.words)).collect();
    let expected = (0..bodies).map(|i| force(&node, &body(seed, i))).collect();
    let latency_ns = sent.iter().skip(1).zip(&received).map(|(s, r)| (r.time - s.time).as_ns_f64()).collect();
    Ok(ForceRun { answers, expected, latency_ns })
}

/// The root at scale (nbody_root.c): `senders` nodes each send `per` bodies to the root's
/// node (`cores` cores serving) at once, an incast of senders x per requests.
#[derive(Clone, Debug)]
pub struct RootRun {
    /// Requests the root answered (every one checked by its sender, bit for bit).
    pub requests: u64,
    /// First request leaving a sender to the last answer delivered to a sender, ns.
    pub total_ns: f64,
    /// First request delivered to the root to its last answer leaving it, ns.
    pub root_busy_ns: f64,
    /// Each request's time from its sender to the root's cores, ns (the incast's queueing).
    pub request_ns: Vec<f64>,
}

/// Run nbody_root.elf at `elf` with `senders` x `per` bodies of `seed`.
pub fn run_root(
    elf: &std::path::Path,
    senders: u32,
    per: u64,
    cores: usize,
    seed: u64,
) -> Result<RootRun, String> {
    let args = [senders as u64, per, seed].map(|v| v.to_string()).to_vec();
    let mut sim = super::star_cluster(senders + 1, cores, NicKind::Nanopu, elf, &args, 1_000_000.0)?;
    run_checked(&mut sim)?;
    let recs = sim.message_records();
    let root = node_ip(0);
    let delivered = |r: &nanopu_cluster::report::records::MessageRecord| {
        r.delivered.ok_or("a message was never delivered")
    };
    let (mut req, mut first_sent, mut first_in, mut last_out, mut last_back) =
        (vec![], Time::MAX, Time::MAX, Time::ZERO, Time::ZERO);
    for r in &recs {
        let d = delivered(r)?;
        if r.dst_ip == root {
            req.push((d - r.sent).as_ns_f64());
            (first_sent, first_in) = (first_sent.min(r.sent), first_in.min(d));
        } else if r.src_ip == root {
            (last_out, last_back) = (last_out.max(r.sent), last_back.max(d));
        }
    }
    if req.len() as u64 != senders as u64 * per {
        return Err(format!("{} requests reached the root, not {}", req.len(), senders as u64 * per));
    }
    let ns = |a: Time, b: Time| b.saturating_sub(a).as_ns_f64();
    Ok(RootRun {
        requests: req.len() as u64,
        total_ns: ns(first_sent, last_back),
        root_busy_ns: ns(first_in, last_out),
        request_ns: req,
    })
}
