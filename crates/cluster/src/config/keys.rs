//! How a setting is named to the user ([`Given`]: a file's key, a flag, a Python keyword),
//! and unknown keys in a section that takes a shared part flattened into it (the NIC's settings in
//! `[node]` and `[server]`): serde's `deny_unknown_fields` does not work with `flatten`, so
//! such a section ends with a [`NoOtherKeys`] field, which takes what neither the section nor
//! its flattened parts know and refuses the first key, as `deny_unknown_fields` would.

use schemars::JsonSchema;
use serde::de::{Deserializer, Error, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;

/// A section's leftover keys: none, or deserializing fails naming the first and listing the
/// keys of `S` (the section, from its schema).
pub struct NoOtherKeys<S>(PhantomData<S>);

impl<S> Default for NoOtherKeys<S> {
    fn default() -> Self {
        NoOtherKeys(PhantomData)
    }
}

impl<S> Clone for NoOtherKeys<S> {
    fn clone(&self) -> Self {
        NoOtherKeys::default()
    }
}

impl<S> fmt::Debug for NoOtherKeys<S> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("NoOtherKeys")
    }
}

impl<S> PartialEq for NoOtherKeys<S> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<'de, S: JsonSchema> Deserialize<'de> for NoOtherKeys<S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(Leftover(PhantomData))
    }
}

struct Leftover<S>(PhantomData<S>);

impl<'de, S: JsonSchema> Visitor<'de> for Leftover<S> {
    type Value = NoOtherKeys<S>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("no keys but the section's own")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        match m.next_key::<String>()? {
            Some(k) => {
                m.next_value::<IgnoredAny>()?;
                Err(A::Error::custom(format!("unknown field `{k}`, expected one of {}", keys_of::<S>())))
            }
            None => Ok(NoOtherKeys::default()),
        }
    }
}

/// The keys of section `S` as serde lists them: "`a`, `b`, `c`".
pub fn keys_of<S: JsonSchema>() -> String {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<S>();
    let props = schema.get("properties").and_then(|p| p.as_object());
    let names: Vec<String> = props.map_or(Vec::new(), |p| p.keys().map(|k| format!("`{k}`")).collect());
    names.join(", ")
}

/// Where settings were given, which names them in an error as the user wrote them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Given<'a> {
    /// Keys of a file's section: "node.jbsq_n".
    Section(&'a str),
    /// Command-line flags: "--jbsq-n".
    Flags,
    /// Command-line flags named after their section: "--switch-latency-ns".
    FlagsOf(&'a str),
    /// Python keywords: "jbsq_n".
    Keywords,
}

impl Given<'_> {
    /// The setting `key` as the user wrote it.
    pub fn name(self, key: &str) -> String {
        match self {
            Given::Section(s) => format!("{s}.{key}"),
            Given::Flags => format!("--{}", key.replace('_', "-")),
            Given::FlagsOf(s) => format!("--{s}-{}", key.replace('_', "-")),
            Given::Keywords => key.to_string(),
        }
    }
}
