//! `[load.rdma]`: the one-sided RDMA workload against `sw/apps/rdma.c` (docs/apps/rdma.md):
//! its operation mix and sizes, the `RdmaSpec` they make, and one class per operation.
//! Apart, like each checked workload, because it replaces `[[load.class]]` and the server's
//! arguments with its own.

use super::LoadFile;
use crate::loadgen::{Class, Service};
use crate::workload::rdma::{RdmaSpec, KINDS, WORDS};
use nanopu_cluster::config::bounds::Each;
use nanopu_cluster::config::check::FRACTION;
use schemars::JsonSchema;
use serde::Deserialize;

/// `[load.rdma]`: the one-sided RDMA workload (`rdma.rs`).
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RdmaFile {
    /// Share of READs. Default 0.2; the five shares add up to 1.
    #[serde(default = "fifth")]
    #[schemars(transform = FRACTION.schema())]
    pub read: f64,
    /// Share of WRITEs. Default 0.2.
    #[serde(default = "fifth")]
    #[schemars(transform = FRACTION.schema())]
    pub write: f64,
    /// Share of compare-and-swaps. Default 0.2.
    #[serde(default = "fifth")]
    #[schemars(transform = FRACTION.schema())]
    pub cas: f64,
    /// Share of fetch-and-adds. Default 0.2.
    #[serde(default = "fifth")]
    #[schemars(transform = FRACTION.schema())]
    pub faa: f64,
    /// Share of indirect READs. Default 0.2.
    #[serde(default = "fifth")]
    #[schemars(transform = FRACTION.schema())]
    pub indirect_read: f64,
    /// Words a READ or indirect READ asks for, smallest and largest (uniform between). Default
    /// [8, 8] (64 bytes); within 1..=64.
    #[serde(default = "cache_line")]
    #[schemars(transform = Each(WORDS))]
    pub read_words: [u64; 2],
    /// Words a WRITE carries, smallest and largest. Default [8, 8]; within 1..=64.
    #[serde(default = "cache_line")]
    #[schemars(transform = Each(WORDS))]
    pub write_words: [u64; 2],
}

fn fifth() -> f64 {
    0.2
}
/// A 64-byte line: our choice of default transfer, not the paper's.
fn cache_line() -> [u64; 2] {
    [8, 8]
}

impl LoadFile {
    /// The RDMA workload, if `[load.rdma]` is there.
    pub(super) fn rdma_spec(&self) -> Result<Option<RdmaSpec>, String> {
        let Some(r) = &self.load.rdma else { return Ok(None) };
        let alone = self.load.class.is_empty() && self.load.kv.is_none();
        if !alone {
            return Err(
                "load.rdma: not with [[load.class]] or [load.kv]; its classes are its operations".into()
            );
        }
        if !self.server.args.is_empty() {
            return Err("server.args: not with [load.rdma], which gives the server's argument".into());
        }
        let spec = RdmaSpec {
            seed: self.load.seed,
            mix: [r.read, r.write, r.cas, r.faa, r.indirect_read],
            read_words: r.read_words,
            write_words: r.write_words,
        };
        spec.validate()?;
        Ok(Some(spec))
    }
}

/// The classes of an RDMA run: one per operation, all to context 0 (every core).
pub(super) fn rdma_classes(r: &RdmaSpec) -> Vec<Class> {
    let class = |(k, &fraction): (&crate::workload::rdma::RdmaKind, &f64)| Class {
        name: k.name().into(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: vec![0],
    };
    KINDS.iter().zip(&r.mix).map(class).collect()
}
