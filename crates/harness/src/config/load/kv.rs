//! `[load.kv]`: the key-value workload against `sw/apps/mica.c` (docs/apps/mica.md): its
//! keys, the `KvSpec` they make, and its two classes (GET, SET). Apart, like each checked
//! workload, because it replaces `[[load.class]]` and the server's arguments with its own.

use super::{jbsq, mica_theta, zipf, zipf_theta, LoadFile, POPULARITY};
use crate::loadgen::{Class, Service};
use crate::workload::kv::{
    Keys, KvFormat, KvSpec, Steering, ITEMS_PER_CORE, VALUE_BYTES, VALUE_WORD, ZIPF_THETA,
};
use nanopu_cluster::config::bounds::{Each, OneOf};
use nanopu_cluster::config::check::FRACTION;
use schemars::transform::Transform;
use schemars::{JsonSchema, Schema};
use serde::Deserialize;

/// Whose requests and replies.
pub const FORMAT: OneOf = OneOf(&["ours", "prototype"]);
/// How requests reach a core.
pub const STEERING: OneOf = OneOf(&["jbsq", "static"]);

/// `value_bytes`' schema: each within [`VALUE_BYTES`], in whole words.
fn value_bytes_schema(s: &mut Schema) {
    Each(VALUE_BYTES).transform(s);
    if let Some(items) = s.get_mut("items") {
        items["multipleOf"] = VALUE_WORD.into();
    }
}

/// `[load.kv]`: the key-value workload (`kv.rs`).
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct KvFile {
    /// Items preloaded per core. Default 10,000 (the nanoPU paper's MICA setup); 1..=16,384.
    #[serde(default = "ten_thousand")]
    #[schemars(transform = ITEMS_PER_CORE.schema())]
    pub items_per_core: u64,
    /// Share of GETs. Default 0.95; [0, 1].
    #[serde(default = "mostly_gets")]
    #[schemars(transform = FRACTION.schema())]
    pub get_fraction: f64,
    /// Key popularity: "zipf" (default) or "uniform".
    #[serde(default = "zipf")]
    #[schemars(transform = POPULARITY.schema())]
    pub keys: String,
    /// Zipf skew. Default 0.99 (MICA's evaluation); (0, 1).
    #[serde(default = "mica_theta")]
    #[schemars(transform = ZIPF_THETA.schema())]
    pub theta: f64,
    /// Smallest and largest value, bytes (uniform between). Default [512, 512]; multiples of 8
    /// within 8..=512.
    #[serde(default = "largest_value")]
    #[schemars(transform = value_bytes_schema)]
    pub value_bytes: [u64; 2],
    /// "jbsq" (default: context 0 on every core, the NIC picks the core) or "static" (context =
    /// the core owning the key's partition).
    #[serde(default = "jbsq")]
    #[schemars(transform = STEERING.schema())]
    pub steering: String,
    /// Requests and replies: "ours" (default: `sw/apps/mica.c`'s, docs/apps/mica.md) or
    /// "prototype", the nanoPU prototype's load generator's, for its own MICA server
    /// (`lnic-multi-core-mica.cc`) or one that speaks its format: keys 1..=`items_per_core`,
    /// SETs and GETs alternating (`get_fraction` 0.5), `keys` "uniform", `value_bytes`
    /// [512, 512], `steering` "jbsq", and the server's program and arguments as `[server]`
    /// gives them (docs/apps/mica.md "The prototype's request format").
    #[serde(default = "ours")]
    #[schemars(transform = FORMAT.schema())]
    pub format: String,
}

fn ours() -> String {
    "ours".into()
}

fn ten_thousand() -> u64 {
    10_000
}
fn mostly_gets() -> f64 {
    0.95
}
fn largest_value() -> [u64; 2] {
    [512, 512]
}

impl LoadFile {
    /// The key-value workload, if `[load.kv]` is there.
    pub(super) fn kv_spec(&self) -> Result<Option<KvSpec>, String> {
        let Some(k) = &self.load.kv else { return Ok(None) };
        if !self.load.class.is_empty() {
            return Err("load.class: not with [load.kv], whose classes are \"get\" and \"set\"".into());
        }
        let format = k.format()?;
        if !self.server.args.is_empty() && format == KvFormat::Ours {
            return Err("server.args: not with [load.kv], which gives the store's arguments".into());
        }
        let spec = KvSpec {
            items_per_core: k.items_per_core,
            cores: self.server.cores as u64,
            seed: self.load.seed,
            get_fraction: k.get_fraction,
            keys: k.keys()?,
            value_min: k.value_bytes[0],
            value_max: k.value_bytes[1],
            steering: k.steering()?,
            format,
        };
        spec.validate()?;
        Ok(Some(spec))
    }
}

impl KvFile {
    fn keys(&self) -> Result<Keys, String> {
        // Checked whatever the popularity, as the schema does: a key is never ignored.
        ZIPF_THETA.check(self.theta, "load.kv.theta", "")?;
        let skew = zipf_theta(&self.keys, self.theta, "load.kv.keys")?;
        Ok(skew.map_or(Keys::Uniform, |theta| Keys::Zipf { theta }))
    }

    fn format(&self) -> Result<KvFormat, String> {
        match FORMAT.check(&self.format, "load.kv.format")? {
            "ours" => Ok(KvFormat::Ours),
            _ => Ok(KvFormat::Prototype),
        }
    }

    fn steering(&self) -> Result<Steering, String> {
        match STEERING.check(&self.steering, "load.kv.steering")? {
            "jbsq" => Ok(Steering::Jbsq),
            _ => Ok(Steering::Static),
        }
    }
}

/// The classes of a key-value run: GETs and SETs, to the contexts steering may pick.
pub(super) fn kv_classes(kv: &KvSpec) -> Vec<Class> {
    let contexts: Vec<u16> = match kv.steering {
        Steering::Jbsq => vec![0],
        Steering::Static => (0..kv.cores as u16).collect(),
    };
    let class = |name: &str, fraction| Class {
        name: name.into(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: contexts.clone(),
    };
    vec![class("get", kv.get_fraction), class("set", 1.0 - kv.get_fraction)]
}
