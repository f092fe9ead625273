//! NN inference (docs/apps/paper-apps.md): the host side of `sw/apps/nn_edges.c` (one neuron,
//! N input edges) and `sw/apps/nn_net.c` (a multi-layer network, one neuron per core).
//! The same fixed-point integers as `sw/apps/nn.h`, so results match bit for bit.

use super::hostnet::HostNet;
use super::{one_node_ice, star_cluster};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::host::HostMessage;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::TestHost;
use nanopu_nic::icenic::IceParams;
use nanopu_nic::Message;
use nanopu_sim::Time;
use std::path::Path;

/// Fractional bits of the Q8 fixed point (nn.h).
pub const FRAC_BITS: u32 = 8;
/// When the host sends the first message: after every core has registered its context.
const START: Time = Time::from_us(2);

/// SplitMix64's output function (nn.h `nn_mix`; Steele, Lea, Flood, OOPSLA 2014).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Weight `i` of neuron `j` of `layer` (i = the neuron's input count: its bias), Q8 in [-1, 1).
pub fn weight(seed: u64, layer: u64, j: u64, i: u64) -> i64 {
    (mix(seed ^ (layer << 48) ^ (j << 24) ^ i) % 512) as i64 - 256
}

/// Q16 accumulator to Q8 activation: ReLU except in the output layer (nn.h `nn_activate`).
pub fn activate(acc: i64, output: bool) -> i64 {
    let y = acc >> FRAC_BITS;
    if output || y > 0 {
        y
    } else {
        0
    }
}

/// Input `i` of inference `k`, the host's: Q8 in [0, 2).
pub fn input(seed: u64, k: u64, i: u64) -> i64 {
    (mix(!seed ^ (k << 32) ^ i) % 512) as i64
}

/// A network: layer sizes (layer 0 the inputs), its seed, how many inferences, cores per node.
#[derive(Clone, Debug)]
pub struct NetSpec {
    pub seed: u64,
    pub inferences: u64,
    pub layers: Vec<u64>,
    pub cores: usize,
}

impl NetSpec {
    /// The program's arguments (nn_net.c).
    pub fn args(&self) -> Vec<String> {
        let head = [self.seed, self.inferences, self.layers.len() as u64];
        head.iter().chain(&self.layers).map(u64::to_string).collect()
    }

    pub fn neurons(&self) -> u64 {
        self.layers.iter().sum()
    }

    fn nodes(&self) -> u32 {
        self.neurons().div_ceil(self.cores as u64) as u32
    }

    /// Inference `k`'s outputs, computed on the host.
    pub fn reference(&self, k: u64) -> Vec<i64> {
        let mut x: Vec<i64> = (0..self.layers[0]).map(|i| input(self.seed, k, i)).collect();
        for l in 1..self.layers.len() {
            let last = l + 1 == self.layers.len();
            x = (0..self.layers[l]).map(|j| self.neuron(l as u64, j, &x, last)).collect();
        }
        x
    }

    fn neuron(&self, layer: u64, j: u64, x: &[i64], output: bool) -> i64 {
        let n = x.len() as u64;
        let bias = weight(self.seed, layer, j, n).wrapping_shl(FRAC_BITS);
        let acc = x
            .iter()
            .enumerate()
            .fold(bias, |a, (i, &xi)| a.wrapping_add(weight(self.seed, layer, j, i as u64).wrapping_mul(xi)));
        activate(acc, output)
    }

    /// The host's messages of inference `k`: [k, 0, x_i] to input neuron i (context i).
    fn inputs(&self, k: u64) -> Vec<Message> {
        let to = |g: u64| node_ip((g / self.cores as u64) as u32);
        let msg = |i: u64| TestHost::message(0, to(i), i as u16, &[k, 0, input(self.seed, k, i) as u64]);
        (0..self.layers[0]).map(msg).collect()
    }
}

/// What a run measured: each inference's outputs and latency (first input sent by the host
/// to last output back at the host).
#[derive(Clone, Debug)]
pub struct NetRun {
    pub outputs: Vec<Vec<i64>>,
    pub latency_ns: Vec<f64>,
    pub simulated_ns: f64,
}

/// Run `spec` on nn_net at `elf` (nn_net.elf, or nn_net_ice.elf on IceNIC nodes, which take
/// one core each): inference k+1's inputs leave when k's last output arrived (closed loop).
/// Errors if a core's self-check failed, an IceNIC dropped frames or the run did not finish.
pub fn run_net(spec: &NetSpec, elf: &Path, nic: NicKind) -> Result<NetRun, String> {
    one_core_on_icenic(nic, spec.cores)?;
    let net = HostNet(nic);
    let mut sim = star_cluster(spec.nodes(), spec.cores, nic, elf, &spec.args(), 10_000.0)?;
    spec.inputs(0).into_iter().for_each(|m| net.send_at(&mut sim, START, m));
    let (s, outs, mut got) =
        (spec.clone(), *spec.layers.last().unwrap(), vec![0u64; spec.inferences as usize]);
    net.stop_after(&mut sim, (outs * spec.inferences) as usize);
    net.on_receive(&mut sim, move |now, m| {
        let k = m.words[0];
        got[k as usize] += 1;
        let next = got[k as usize] == outs && k + 1 < s.inferences;
        let msgs = if next { s.inputs(k + 1) } else { vec![] };
        msgs.into_iter().map(|m| (now, m)).collect()
    });
    net.run(&mut sim)?;
    let (sent, received) = (net.sent(&sim), net.received(&sim)?);
    let outputs = by_inference(&received, spec.inferences, outs);
    let latency_ns = latencies(&sent, &received, spec.inferences);
    Ok(NetRun { outputs, latency_ns, simulated_ns: sim.now().as_ns_f64() })
}

/// IceNIC nodes drive their NIC from hart 0 alone (appnet_ice.h): one core each.
pub fn one_core_on_icenic(nic: NicKind, cores: usize) -> Result<(), String> {
    if nic == NicKind::IceNic && cores != 1 {
        return Err(format!("IceNIC nodes run one core each (hart 0 drives the NIC), not {cores}"));
    }
    Ok(())
}

/// Outputs [k][j] from the arrivals [k, j, y]; missing ones are i64::MIN.
fn by_inference(received: &[HostMessage], k: u64, n: u64) -> Vec<Vec<i64>> {
    let mut out = vec![vec![i64::MIN; n as usize]; k as usize];
    for r in received {
        let (k, j) = (r.msg.words[0] as usize, r.msg.words[1] as usize);
        out[k][j] = r.msg.words[2] as i64;
    }
    out
}

/// Per inference (the first payload word): first send to last arrival, ns.
fn latencies(sent: &[HostMessage], received: &[HostMessage], k: u64) -> Vec<f64> {
    let first = |k: u64| sent.iter().filter(|m| m.msg.words[0] == k).map(|m| m.time).min();
    let last = |k: u64| received.iter().filter(|m| m.msg.words[0] == k).map(|m| m.time).max();
    (0..k)
        .map(|k| (last(k).unwrap_or(Time::ZERO).saturating_sub(first(k).unwrap_or(Time::ZERO))).as_ns_f64())
        .collect()
}

/// One neuron with `edges` inputs (nn_edges.c): the activation it returned for each of
/// `reps` rounds of inputs and each round's latency (first DATA message sent to the result
/// back at the host), with the host's reference.
#[derive(Clone, Debug)]
pub struct EdgesRun {
    pub results: Vec<i64>,
    pub expected: Vec<i64>,
    pub latency_ns: Vec<f64>,
}

const CONFIG: u64 = 0;
const WEIGHT: u64 = 1;
const DATA: u64 = 2;
const RESULT: u64 = 3;

/// When the configuration is sent to an IceNIC node, one frame per gap: IceNIC has no flow
/// control and its receive buffer holds about 40 small frames (docs/models/icenic.md), so
/// the untimed configuration is spaced, well apart from the node's per-frame time.
pub const ICE_CONFIG_GAP: Time = Time::from_ns(500);

/// The untimed configuration, CONFIG then the N weights, each with its send time; and when
/// the first round of inputs can start.
fn edges_config(nic: NicKind, seed: u64, edges: u64) -> (Vec<(Time, Message)>, Time) {
    let msg = |w: &[u64]| TestHost::message(0, node_ip(0), 0, w);
    let weights = (0..edges).map(|i| msg(&[WEIGHT, i, weight(seed, 1, 0, i) as u64]));
    let config = std::iter::once(msg(&[CONFIG, edges])).chain(weights);
    let gap = if nic == NicKind::IceNic { ICE_CONFIG_GAP } else { Time::ZERO };
    let at = |i: usize| Time::from_us(1) + Time(gap.as_fs() * i as u64);
    let timed: Vec<(Time, Message)> = config.enumerate().map(|(i, m)| (at(i), m)).collect();
    (timed, START.max(at(edges as usize + 2)))
}

/// Run nn_edges (`elf`, its bytes: nn_edges.elf, or nn_edges_ice.elf on IceNIC) on one
/// core: configure `edges` edges and their weights, then `reps` rounds of inputs, each sent
/// back to back when the previous result arrived.
pub fn run_edges(elf: &[u8], nic: NicKind, seed: u64, edges: u64, reps: u64) -> Result<EdgesRun, String> {
    run_edges_ice(elf, nic, IceParams::default(), seed, edges, reps)
}

/// `run_edges` on an IceNIC with parameters `ice` (docs/models/icenic.md "Queue and buffer
/// sizes"; ignored on the nanoPU NIC).
pub fn run_edges_ice(
    elf: &[u8],
    nic: NicKind,
    ice: IceParams,
    seed: u64,
    edges: u64,
    reps: u64,
) -> Result<EdgesRun, String> {
    let (net, mut sim) = (HostNet(nic), one_node_ice(elf, 1, nic, ice)?);
    let (config, start) = edges_config(nic, seed, edges);
    config.into_iter().for_each(|(t, m)| net.send_at(&mut sim, t, m));
    let data = move |r: u64| -> Vec<Message> {
        (0..edges)
            .map(|i| TestHost::message(0, node_ip(0), 0, &[DATA, i, input(seed, r, i) as u64]))
            .collect()
    };
    data(0).into_iter().for_each(|m| net.send_at(&mut sim, start, m));
    net.stop_after(&mut sim, reps as usize);
    let mut round = 0;
    net.on_receive(&mut sim, move |now, m| {
        round += 1;
        let more = m.words[0] == RESULT && round < reps;
        let next = if more { data(round) } else { vec![] };
        next.into_iter().map(|d| (now, d)).collect()
    });
    net.run(&mut sim)?;
    let (sent, received) = (net.sent(&sim), net.received(&sim)?);
    let results = received.iter().map(|r| r.msg.words[1] as i64).collect();
    let expected = (0..reps).map(|r| edges_reference(seed, edges, r)).collect();
    Ok(EdgesRun { results, expected, latency_ns: edge_latencies(&sent, &received, edges) })
}

/// The neuron's activation for round `r` (no bias: nn_edges.c accumulates weight x data).
pub fn edges_reference(seed: u64, edges: u64, r: u64) -> i64 {
    let acc =
        (0..edges).fold(0i64, |a, i| a.wrapping_add(weight(seed, 1, 0, i).wrapping_mul(input(seed, r, i))));
    activate(acc, true)
}

/// Round r: its first DATA message sent to its result received.
fn edge_latencies(sent: &[HostMessage], received: &[HostMessage], edges: u64) -> Vec<f64> {
    let data: Vec<&HostMessage> = sent.iter().filter(|m| m.msg.words[0] == DATA).collect();
    let starts = data.chunks(edges as usize).map(|c| c[0].time);
    starts.zip(received).map(|(s, r)| (r.time - s).as_ns_f64()).collect()
}
