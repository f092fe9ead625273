//! What the benchmarks share: the programs they run, message sizes, the node and request
//! they build, and how a rate is reported.

use nanopu_cluster::NodeConfig;
use nanopu_cluster::TestHost;
use nanopu_nic::Message;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};
use std::path::PathBuf;

/// The echo programs of the latency and request-rate benchmarks, by what they do to a
/// request's payload words (docs/platform.md section 5: loopback and stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum App {
    /// Every word back as it came.
    Loopback,
    /// Every word back incremented by one.
    Stream,
}

impl App {
    pub fn name(self) -> &'static str {
        match self {
            App::Loopback => "loopback",
            App::Stream => "stream",
        }
    }

    /// The reply's payload word for a request's word.
    pub fn reply_word(self, w: u64) -> u64 {
        match self {
            App::Loopback => w,
            App::Stream => w.wrapping_add(1),
        }
    }
}

/// Payload sizes of the loopback-latency benchmarks, bytes (issue: 8 to 1,024).
pub const SIZES: [u16; 6] = [8, 16, 64, 256, 512, 1024];

/// When the host starts sending: after every core has registered its context.
pub const START: Time = Time::from_us(2);

/// The built programs a benchmark loads, `apps/NAME.elf` under `--sw-build`: listed once
/// per benchmark (`BenchArgs::program_names`) and read only through here, so that the list
/// the sweeps' cache hashes is the list the benchmark reads (one it does not list is an
/// error, a bug to fix in the list).
pub struct Programs {
    pub(super) sw_build: PathBuf,
    pub(super) names: Vec<String>,
}

impl Programs {
    /// Where program `name` is.
    pub fn path(&self, name: &str) -> Result<PathBuf, String> {
        if !self.names.iter().any(|n| n == name) {
            return Err(format!(
                "the benchmark reads apps/{name}.elf, which its list of programs lacks (a bug)"
            ));
        }
        Ok(self.sw_build.join("apps").join(format!("{name}.elf")))
    }

    /// Every program listed, in order.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.names.iter().map(|n| self.sw_build.join("apps").join(format!("{n}.elf"))).collect()
    }

    /// Program `name`'s bytes.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, String> {
        let p = self.path(name)?;
        std::fs::read(&p)
            .map_err(|e| format!("cannot read {} ({e}); build the programs with `make -C sw`", p.display()))
    }
}

pub fn node_cfg(cores: usize, mac_ns: f64) -> NodeConfig {
    let mut cfg = NodeConfig::default();
    cfg.nic.cores = cores;
    cfg.port.mac_fs = Time::from_ns_f64(mac_ns).as_fs();
    cfg
}

pub fn request(rng: &mut Rng, len: u16) -> Message {
    let words: Vec<u64> = (0..len.div_ceil(8)).map(|_| rng.next_u64()).collect();
    TestHost::message_len(0, nanopu_cluster::node::boot::node_ip(0), 0, len, &words)
}

/// Payload bytes of each message in the rx and tx measurements.
pub const PAYLOAD: usize = 64;

/// Requests the host keeps in flight in the loopback measurement: enough that the server
/// never waits for the next (the round trip is at most a few service times; doubling it
/// changes no rate, experiments/nic-compare/README.md), and fewer than IceNIC's receive
/// buffers (64), so that no request waits for a buffer and none is dropped.
pub const OUTSTANDING: usize = 8;

/// A NIC's name, its rx and tx rates, and its request rates per size of loopback and stream.
pub type Columns = (&'static str, Value, Value, [Value; 2]);

/// `count` messages of `payload` bytes (`wire` bytes on the wire each) in `secs`.
pub fn rate(count: usize, secs: f64, payload: usize, wire: usize) -> Value {
    let per_s = count as f64 / secs;
    json!({ "mpps": per_s / 1e6, "payload_gbps": per_s * payload as f64 * 8.0 / 1e9,
        "wire_gbps": per_s * wire as f64 * 8.0 / 1e9, "window_messages": count, "window_ns": secs * 1e9,
        "wire_bytes": wire })
}

/// The value of `key=N` among the words of a program's console line.
pub fn console_value(console: &str, key: &str) -> Result<u64, String> {
    let found = console.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('='));
    found
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("the program printed {console:?}, without {key}=N"))
}

/// User plus system CPU seconds this process has used, all its threads (`getrusage`): on a
/// shared host steadier than wall time, which counts the time other jobs held the cores.
pub fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain integers, for which all zeros is a valid value.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes the struct it is given, which outlives the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(r.ru_utime) + secs(r.ru_stime)
}
