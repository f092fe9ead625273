//! Load-generator configuration files (TOML) for `nanopu load`: the server node and the
//! load to sweep. Unknown keys are errors; every value is checked against its range when the
//! file is read (and again after command-line overrides), and an error names the key, the
//! value and the limit. Every key's meaning, unit, default and range is the
//! doc comment of its field: docs/config.md is generated from them (`schema`).
//!
//! ```toml
//! [server]
//! elf = "../../sw/build/apps/service.elf"
//! cores = 4
//! [load]
//! rates_mrps = [1.0, 2.0, 4.0]
//! requests = 20000
//! [[load.class]]
//! name = "short"
//! fraction = 1.0
//! service_ns = 500.0
//! contexts = [0]
//! ```
//!
//! Instead of `[[load.class]]`, `[load.kv]` runs the key-value workload against
//! `sw/apps/mica.c` (docs/apps/mica.md), `[load.rdma]` the one-sided RDMA workload against
//! `sw/apps/rdma.c` (docs/apps/rdma.md) and `[load.setalg]` the set algebra (document
//! search) workload against `sw/apps/setalg.c` (docs/apps/setalg.md); the server's arguments
//! then come from them.
//!
//! Times are at most one hour each so that sums of them stay within simulated time (a `u64`
//! of femtoseconds, about 5.1 h; `config::check`).
//!
//! A file per section, each with its checks: `server` (`[server]`, and the node it makes),
//! `section` (`[load]` and `[[load.class]]`: rates, requests, arrivals, the synthetic
//! service's classes), and one per checked workload, `kv`, `rdma` and `setalg` (its keys,
//! the spec they make, its classes). Here: the file as a whole and the load specs.

mod kv;
mod rdma;
mod section;
mod server;
mod setalg;
#[cfg(test)]
mod tests;

use crate::loadgen::{Arrivals, Class, LoadSpec};
use crate::workload::kv::KvSpec;
use crate::workload::rdma::RdmaSpec;
use crate::workload::setalg::SetalgSpec;
use kv::kv_classes;
use nanopu_cluster::config::bounds::OneOf;
use nanopu_cluster::config::check::time_us;
use rdma::rdma_classes;
use schemars::JsonSchema;
use serde::Deserialize;
use setalg::setalg_classes;
use std::path::{Path, PathBuf};

pub use kv::KvFile;
pub use rdma::RdmaFile;
pub use section::{ClassFile, LoadSection};
pub use server::ServerFile;
pub use setalg::SetalgFile;

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadFile {
    /// The server node (required).
    pub server: ServerFile,
    /// The load to offer it (required).
    pub load: LoadSection,
}

impl LoadFile {
    /// Parse a config and check every value; the error names the key.
    pub fn parse(text: &str) -> Result<LoadFile, String> {
        let f: LoadFile = toml::from_str(text).map_err(|e| e.to_string())?;
        f.validate()?;
        Ok(f)
    }

    /// Read a config; the ELF path in it is relative to the directory it is in.
    pub fn load(path: &Path) -> Result<(LoadFile, PathBuf), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let cfg = LoadFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let base = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok((cfg, base))
    }

    /// Check every value (`node_config` and `specs` do it again: a caller may have
    /// changed the rates or the number of requests since).
    pub fn validate(&self) -> Result<(), String> {
        self.server.check()?;
        self.kv_spec()?;
        self.rdma_spec()?;
        self.setalg_spec()?;
        self.nic_check()?;
        self.load.check(nanopu_cluster::engine::cluster::available_memory())
    }

    /// One load spec per offered rate.
    pub fn specs(&self) -> Result<Vec<LoadSpec>, String> {
        let l = &self.load;
        l.check(nanopu_cluster::engine::cluster::available_memory())?;
        let arrivals = match section::ARRIVALS.check(&l.arrivals, "load.arrivals")? {
            "fixed" => Arrivals::Fixed,
            _ => Arrivals::Exponential,
        };
        let kv = self.kv_spec()?;
        let rdma = self.rdma_spec()?;
        let setalg = self.setalg_spec()?;
        let classes = self.classes(kv.as_ref(), rdma.as_ref(), setalg.as_ref())?;
        let drain = time_us(l.drain_us, "load.drain_us")?;
        let start = time_us(l.start_us, "load.start_us")?;
        let reply_at = l.reply_at()?;
        let spec = |rate_mrps| LoadSpec {
            seed: l.seed,
            rate_mrps,
            requests: l.requests,
            warmup: l.warmup,
            arrivals,
            classes: classes.clone(),
            drain,
            start,
            reply_at,
            kv: kv.clone(),
            rdma: rdma.clone(),
            setalg: setalg.clone(),
        };
        let specs: Vec<LoadSpec> = l.rates_mrps.iter().map(|&r| spec(r)).collect();
        specs.iter().try_for_each(LoadSpec::validate)?;
        Ok(specs)
    }

    /// The request classes: a checked workload's, else the `[[load.class]]` entries.
    fn classes(
        &self,
        kv: Option<&KvSpec>,
        rdma: Option<&RdmaSpec>,
        setalg: Option<&SetalgSpec>,
    ) -> Result<Vec<Class>, String> {
        Ok(match (kv, rdma, setalg) {
            (Some(kv), _, _) => kv_classes(kv),
            (None, Some(r), _) => rdma_classes(r),
            (None, None, Some(q)) => setalg_classes(q),
            _ => self.load.class.iter().map(ClassFile::to_class).collect::<Result<Vec<_>, _>>()?,
        })
    }
}

// Defaults more than one section shares.
fn jbsq() -> String {
    "jbsq".into()
}
fn zipf() -> String {
    "zipf".into()
}
fn mica_theta() -> f64 {
    0.99
}

/// How keys or query words are picked (the key-value and set algebra workloads).
pub const POPULARITY: OneOf = OneOf(&["uniform", "zipf"]);

/// A popularity key, read alike by the key-value and set algebra workloads: "uniform"
/// (None), or "zipf" with skew `theta`.
fn zipf_theta(value: &str, theta: f64, key: &str) -> Result<Option<f64>, String> {
    Ok((POPULARITY.check(value, key)? == "zipf").then_some(theta))
}
