//! The configuration files' JSON Schemas and their reference page, generated from the types
//! that parse the files (`cluster_config::ClusterFile`, `load_config::LoadFile`, `raft::config::RaftFile`,
//! `chain_config::ChainFile`): each key's
//! doc comment is its description (meaning, unit, default, range), serde's defaults are the
//! defaults and `deny_unknown_fields` forbids other keys. So the schema, the page and the
//! parser cannot disagree. `nanopu schema` prints them; docs/config.md is the page (a test
//! keeps it current); editors use the schemas for TOML too (docs/config.md says how).
//!
//! The schemas carry each key's range or names from the same definitions the checks use
//! (`nanopu_cluster::config::bounds`, `#[schemars(transform = ...)]` on the key's field),
//! so a JSON Schema validator refuses what the checks refuse; limits that depend on other
//! keys (a timeout's round-trip floor, a fault within `max_us`, `requests` above `warmup`)
//! are the checks' alone, which name the key at fault.

use crate::clients::raft::config::RaftFile;
use crate::config::chain::ChainFile;
use crate::config::load::LoadFile;
use nanopu_cluster::config::cluster::ClusterFile;
use serde_json::Value;

/// The kinds of configuration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigKind {
    /// A cluster run (`nanopu run CONFIG.toml`, `nanopu.run_cluster`).
    Cluster,
    /// A load-generator run (`nanopu load CONFIG.toml`).
    Load,
    /// A Raft run (`nanopu raft CONFIG.toml`, docs/apps/raft.md).
    Raft,
    /// A chain replication run (`nanopu chain CONFIG.toml`, docs/apps/chain.md).
    Chain,
}

impl ConfigKind {
    pub const ALL: [(&'static str, ConfigKind); 4] = [
        ("cluster", ConfigKind::Cluster),
        ("load", ConfigKind::Load),
        ("raft", ConfigKind::Raft),
        ("chain", ConfigKind::Chain),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, k)| *k == self).expect("listed").0
    }
}

/// The JSON Schema (draft 2020-12) of one kind of file.
pub fn schema(kind: ConfigKind) -> Value {
    let mut s = match kind {
        ConfigKind::Cluster => schemars::schema_for!(ClusterFile),
        ConfigKind::Load => schemars::schema_for!(LoadFile),
        ConfigKind::Raft => schemars::schema_for!(RaftFile),
        ConfigKind::Chain => schemars::schema_for!(ChainFile),
    }
    .to_value();
    s["title"] = format!("nanopu {} configuration", kind.name()).into();
    s
}

/// The reference page: every key of every kind of file, section by section.
pub fn reference() -> String {
    let mut page = String::from(HEADER);
    for (name, kind) in ConfigKind::ALL {
        let s = schema(kind);
        page += &format!("\n## {} files (`nanopu schema {name}`)\n", title(name));
        Section { defs: &s["$defs"], out: &mut page }.object("", "", &s);
    }
    page
}

const HEADER: &str = "# Configuration reference

Generated from the types that parse the files (`crates/harness/src/schema.rs`), by
`nanopu schema --markdown`; do not edit by hand (a test compares this page with what the
command prints). Every key of cluster files (`nanopu run CONFIG.toml`, `nanopu.run_cluster`),
load-generator files (`nanopu load CONFIG.toml`), Raft files (`nanopu raft CONFIG.toml`) and chain
replication files (`nanopu chain CONFIG.toml`), with its type, default and meaning
(unit and range included); a dash in the default column: the meaning says what an absent
key means, often a value that depends on other keys. Unknown keys are errors, and every value is checked when the
file is read: an error names the key, the value and the limit.

The type column gives each key's range (an interval: `[1, 64]`, `(0, 3.6e9]`) or its
names, from the definitions the checks use. The JSON Schemas (`nanopu schema cluster >
cluster.schema.json`, same for `load`, `raft` and `chain`) carry the same keys, ranges and
names, so an editor or a JSON Schema validator refuses what `nanopu` refuses, except the
limits that depend on other keys (a timeout's round-trip floor, a fault's time within
`max_us`, `requests` above `warmup`, shares that add up to 1), which only the checks know:
with the Even Better TOML extension, a first line `#:schema ./cluster.schema.json` in a
file validates and completes it as you type.
Switch and port numbering: docs/models/network.md.
";

fn title(name: &str) -> String {
    name[..1].to_uppercase() + &name[1..]
}

/// Writes one object's keys as a table, then its sub-sections.
struct Section<'a> {
    defs: &'a Value,
    out: &'a mut String,
}

impl Section<'_> {
    /// The keys of `obj` (a schema with `properties`) at TOML path `path`; `heading` is
    /// the section's header line ("" at the top).
    fn object(&mut self, path: &str, heading: &str, obj: &Value) {
        let props = obj["properties"].as_object().cloned().unwrap_or_default();
        let required: Vec<&str> =
            obj["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let (mut rows, mut subs) = (Vec::new(), Vec::new());
        for (key, p) in &props {
            match self.table_of(p) {
                Some((def, many)) => subs.push((key.clone(), def, many, describe(p))),
                None => rows.push(row(key, p, required.contains(&key.as_str()))),
            }
        }
        self.table(heading, &rows);
        for (key, def, many, about) in subs {
            let sub = if path.is_empty() { key } else { format!("{path}.{key}") };
            let head = if many { format!("[[{sub}]]") } else { format!("[{sub}]") };
            let heading = format!("\n### `{head}`\n\n{about}\n");
            self.object(&sub, &heading, &self.defs[&def].clone());
        }
    }

    /// The definition a key refers to, if it is a table (or an array of tables: `true`).
    fn table_of(&self, p: &Value) -> Option<(String, bool)> {
        let def = |v: &Value| v["$ref"].as_str().map(|r| r.trim_start_matches("#/$defs/").to_string());
        let any = p["anyOf"].as_array().and_then(|a| a.iter().find_map(def));
        let (name, many) = match (def(p), any, def(&p["items"])) {
            (Some(d), _, _) | (_, Some(d), _) => (d, false),
            (_, _, Some(d)) => (d, true),
            _ => return None,
        };
        self.defs[&name]["properties"].is_object().then_some((name, many))
    }

    fn table(&mut self, heading: &str, rows: &[String]) {
        *self.out += heading;
        if rows.is_empty() {
            return;
        }
        *self.out += "\n| key | type | default | meaning |\n|---|---|---|---|\n";
        rows.iter().for_each(|r| *self.out += r);
    }
}

/// One key's table row.
fn row(key: &str, p: &Value, required: bool) -> String {
    let default = match (&p["default"], required) {
        (Value::Null, true) => "required".to_string(),
        (Value::Null, false) => "—".to_string(),
        (d, _) => format!("`{d}`"),
    };
    format!("| `{key}` | {} | {default} | {} |\n", type_name(p), describe(p))
}

/// A key's type: "integer", "number or absent", "array of 2 integer"...
fn type_name(p: &Value) -> String {
    let types: Vec<&str> = match &p["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec!["any"],
    };
    let base: Vec<String> = types.iter().filter(|t| **t != "null").map(|t| one_type(t, p)).collect();
    let absent = if types.contains(&"null") { " (may be absent)" } else { "" };
    format!("{}{absent}", base.join(" or "))
}

fn one_type(t: &str, p: &Value) -> String {
    match t {
        "array" => array_type(p),
        "integer" | "number" => number_type(t, p) + &excluded(p),
        "string" => string_type(p),
        _ if p["not"] == serde_json::json!({}) => "refused".into(),
        _ => t.into(),
    }
}

fn array_type(p: &Value) -> String {
    let items = type_name(&p["items"]);
    match (&p["minItems"], &p["maxItems"]) {
        (Value::Number(a), Value::Number(b)) if a == b => format!("array of {a} {items}"),
        (Value::Number(a), _) => format!("array of at least {a} {items}"),
        _ => format!("array of {items}"),
    }
}

/// A number's range as an interval, from the bounds the checks share with the schema
/// (`nanopu_cluster::config::bounds`): "integer in [1, 64]", "number in (0, 3.6e9]".
fn number_type(t: &str, p: &Value) -> String {
    let end = |closed: &str, open: &str| match (&p[closed], &p[open]) {
        (Value::Number(n), _) => Some((shown(n), false)),
        (_, Value::Number(n)) => Some((shown(n), true)),
        _ => None,
    };
    let step = p["multipleOf"].as_u64().map_or(String::new(), |m| format!(", a multiple of {m}"));
    let range = match (end("minimum", "exclusiveMinimum"), end("maximum", "exclusiveMaximum")) {
        (Some((lo, a)), Some((hi, b))) => {
            format!(" in {}{lo}, {hi}{}", if a { "(" } else { "[" }, if b { ")" } else { "]" })
        }
        (Some((lo, false)), None) if lo == "0" && t == "integer" => return format!("unsigned integer{step}"),
        (Some((lo, a)), None) => format!(", {} {lo}", if a { "more than" } else { "at least" }),
        _ => String::new(),
    };
    format!("{t}{range}{step}")
}

/// ", not in (0, 0.05)": a gap in the range (the scheduler period's).
fn excluded(p: &Value) -> String {
    match (&p["not"]["exclusiveMinimum"], &p["not"]["exclusiveMaximum"]) {
        (Value::Number(a), Value::Number(b)) => format!(", not in ({}, {})", shown(a), shown(b)),
        _ if p["not"] == serde_json::json!({}) => ", refused whatever its value".into(),
        _ => String::new(),
    }
}

/// A bound: whole numbers as such, large ones in exponent notation ("3.6e9").
fn shown(n: &serde_json::Number) -> String {
    match (n.as_u64(), n.as_f64()) {
        (Some(u), _) => u.to_string(),
        (_, Some(f)) if f.abs() >= 1e7 => format!("{f:e}"),
        (_, Some(f)) => f.to_string(),
        _ => n.to_string(),
    }
}

/// A string, and the names it may take: "string: \"ndp\" or \"homa\"".
fn string_type(p: &Value) -> String {
    let names: Vec<String> = p["enum"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|n| format!("\"{n}\""))
        .collect();
    match names.split_last() {
        Some((last, [])) => format!("string: {last}"),
        Some((last, rest)) => format!("string: {} or {last}", rest.join(", ")),
        None if p["const"].is_string() => format!("string: \"{}\"", p["const"].as_str().unwrap_or("")),
        None => "string".into(),
    }
}

/// Its description on one line (table cells cannot hold line breaks).
fn describe(p: &Value) -> String {
    p["description"].as_str().unwrap_or("").replace('\n', " ").replace('|', "\\|")
}
