//! `[load.setalg]`: the set algebra (document search) workload against `sw/apps/setalg.c`
//! (docs/apps/setalg.md): its corpus and queries, the `SetalgSpec` they make, and one class
//! per query size. Apart, like each checked workload, because it replaces `[[load.class]]`
//! and the server's arguments with its own.

use super::{mica_theta, zipf, zipf_theta, LoadFile, POPULARITY};
use crate::loadgen::{Class, Service};
use crate::workload::kv::ZIPF_THETA;
use crate::workload::setalg::{
    Corpus, Popularity, SetalgSpec, CLASSES, DOCUMENTS, VOCABULARY, WORDS_PER_DOCUMENT,
};
use nanopu_cluster::config::bounds::Each;
use nanopu_cluster::config::check::FRACTION;
use schemars::JsonSchema;
use serde::Deserialize;

/// `[load.setalg]`: the set algebra workload (`setalg.rs`). The corpus defaults are our
/// choice, for a short start-up (docs/apps/setalg.md), not the paper's.
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SetalgFile {
    /// Documents in the corpus. Default 2,048; 1..=65,536, and documents x
    /// `words_per_document` at most 262,144.
    #[serde(default = "setalg_documents")]
    #[schemars(transform = DOCUMENTS.schema())]
    pub documents: u64,
    /// Words of the vocabulary, drawn Zipf (exponent 1) into the documents. Default 4,096;
    /// 4..=16,384.
    #[serde(default = "setalg_vocabulary")]
    #[schemars(transform = VOCABULARY.schema())]
    pub vocabulary: u64,
    /// Words drawn per document (a word drawn twice counts once). Default 16; 1..=64.
    #[serde(default = "setalg_words")]
    #[schemars(transform = WORDS_PER_DOCUMENT.schema())]
    pub words_per_document: u64,
    /// Shares of 1-, 2-, 3- and 4-word queries. Default a quarter each; they add up to 1.
    #[serde(default = "quarters")]
    #[schemars(transform = Each(FRACTION))]
    pub query_words: [f64; 4],
    /// How a query picks its distinct words: "zipf" (default: by corpus rank, the most
    /// frequent word the most queried) or "uniform".
    #[serde(default = "zipf")]
    #[schemars(transform = POPULARITY.schema())]
    pub popularity: String,
    /// Zipf skew of the query words. Default 0.99; within (0, 1).
    #[serde(default = "mica_theta")]
    #[schemars(transform = ZIPF_THETA.schema())]
    pub theta: f64,
}

fn setalg_documents() -> u64 {
    2048
}
fn setalg_vocabulary() -> u64 {
    4096
}
fn setalg_words() -> u64 {
    16
}
fn quarters() -> [f64; 4] {
    [0.25; 4]
}

impl LoadFile {
    /// The set algebra workload, if `[load.setalg]` is there.
    pub(super) fn setalg_spec(&self) -> Result<Option<SetalgSpec>, String> {
        let Some(q) = &self.load.setalg else { return Ok(None) };
        let alone = self.load.class.is_empty() && self.load.kv.is_none() && self.load.rdma.is_none();
        if !alone {
            return Err("load.setalg: not with [[load.class]], [load.kv] or [load.rdma]; its classes are \
                        the query sizes"
                .into());
        }
        if !self.server.args.is_empty() {
            return Err("server.args: not with [load.setalg], which gives the server's arguments".into());
        }
        let corpus = Corpus {
            seed: self.load.seed,
            documents: q.documents,
            vocabulary: q.vocabulary,
            words_per_document: q.words_per_document,
        };
        let spec = SetalgSpec { corpus, query_words: q.query_words, popularity: q.popularity()? };
        spec.validate()?;
        Ok(Some(spec))
    }
}

impl SetalgFile {
    fn popularity(&self) -> Result<Popularity, String> {
        // Checked whatever the popularity, as the schema does: a key is never ignored.
        ZIPF_THETA.check(self.theta, "load.setalg.theta", "")?;
        let skew = zipf_theta(&self.popularity, self.theta, "load.setalg.popularity")?;
        Ok(skew.map_or(Popularity::Uniform, |theta| Popularity::Zipf { theta }))
    }
}

/// The classes of a set algebra run: one per query size, all to context 0 (every core).
pub(super) fn setalg_classes(q: &SetalgSpec) -> Vec<Class> {
    let class = |(name, &fraction): (&&str, &f64)| Class {
        name: name.to_string(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: vec![0],
    };
    CLASSES.iter().zip(&q.query_words).map(class).collect()
}
