//! Keyword arguments (the Python package's, docs/python.md) mapped onto the same structs the
//! command line fills: `cores=64` sets `SortArgs::cores`. Each struct derives both clap's
//! `Args` and serde's traits, so a setting is declared once: its flag, its keyword, its
//! default (clap's attribute, taken from the command line with nothing on it) and its range
//! (clap's value parser, run on the keyword's value here). A keyword the struct does not
//! have, a value of the wrong shape (a string where a list goes, a list where one value
//! goes, a word where a switch's true or false goes) or out of range is an error naming the
//! keyword.

use clap::{Arg, ArgAction, Command};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// `defaults` with each keyword of `keywords` (a JSON object) put in its place; `cmd` is the
/// command whose arguments `defaults` came from, `what` names it in errors ("nanopu.sort").
pub fn apply<T: Serialize + DeserializeOwned>(
    defaults: &T,
    cmd: &Command,
    keywords: &str,
    what: &str,
) -> Result<T, String> {
    let given: Map<String, Value> =
        serde_json::from_str(keywords).map_err(|e| format!("{what}: keywords: {e}"))?;
    let mut base = serde_json::to_value(defaults).map_err(|e| e.to_string())?;
    for (key, value) in given {
        check(cmd, &key, &value, what)?;
        *slot(&mut base, &key).ok_or_else(|| unknown(cmd, &key, what))? = value;
    }
    named(base)
}

/// `T` from `d`, an error naming the key it is about as a dotted path
/// ("topology.nodes: invalid value ..."): for keywords and for configurations given as dicts.
pub fn named<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(d: D) -> Result<T, String>
where
    D::Error: std::fmt::Display,
{
    serde_path_to_error::deserialize(d).map_err(|e| format!("{}: {}", e.path(), e.inner()))
}

/// Where keyword `key` lives in a struct's JSON: its own field, or a field of the
/// subcommand chosen (a one-entry object `{"Variant": {fields}}`, serde's enum form).
fn slot<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let obj = v.as_object_mut()?;
    if obj.contains_key(key) {
        return obj.get_mut(key);
    }
    let nested = obj.values_mut().filter_map(|x| x.as_object_mut()).filter(|o| o.len() == 1);
    nested.flat_map(|o| o.values_mut()).find_map(|f| f.as_object_mut().and_then(|f| f.get_mut(key)))
}

/// The error of a keyword `cmd` has no argument for, listing those it has.
fn unknown(cmd: &Command, key: &str, what: &str) -> String {
    let names: Vec<String> = arguments(cmd).map(|a| a.get_id().to_string()).collect();
    format!("{key}: not a keyword of {what} (its keywords: {})", names.join(", "))
}

/// Every argument of `cmd` and of its subcommands, but help and version.
fn arguments(cmd: &Command) -> impl Iterator<Item = &Arg> {
    let own = cmd.get_arguments();
    let sub = cmd.get_subcommands().flat_map(|s| s.get_arguments());
    own.chain(sub).filter(|a| !matches!(a.get_action(), ArgAction::Help | ArgAction::Version))
}

/// `value` has the shape argument `key` takes, and passes its value parser.
fn check(cmd: &Command, key: &str, value: &Value, what: &str) -> Result<(), String> {
    let Some(arg) = arguments(cmd).find(|a| a.get_id() == key) else {
        return Err(unknown(cmd, key, what));
    };
    match (arg.get_action(), value) {
        (ArgAction::SetTrue | ArgAction::SetFalse, Value::Bool(_)) => Ok(()),
        (ArgAction::SetTrue | ArgAction::SetFalse, v) => Err(format!("{key}: true or false, not {v}")),
        (ArgAction::Append, Value::Array(items)) => items.iter().try_for_each(|v| parse(arg, key, v)),
        (ArgAction::Append, v) => Err(format!("{key}: a list of values, not {v}")),
        (_, Value::Array(_)) if !takes_many(arg) => Err(format!("{key}: one value, not a list")),
        (_, Value::Array(items)) => items.iter().try_for_each(|v| parse(arg, key, v)),
        (_, Value::String(_)) if takes_many(arg) => Err(format!("{key}: a list of values, not a string")),
        (_, v) => parse(arg, key, v),
    }
}

/// Whether an argument takes several values (a delimited or repeated list).
fn takes_many(arg: &Arg) -> bool {
    arg.get_value_delimiter().is_some() || arg.get_num_args().is_some_and(|n| n.max_values() > 1)
}

/// One value through the argument's own value parser (its range, its choices): a command
/// of that one parser is given the value alone, as one positional word.
fn parse(arg: &Arg, key: &str, v: &Value) -> Result<(), String> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(_) | Value::Bool(_) => v.to_string(),
        other => return Err(format!("{key}: {other} is not a value")),
    };
    let one = Arg::new("value").value_parser(arg.get_value_parser().clone()).allow_hyphen_values(true);
    let cmd = Command::new("keyword").no_binary_name(true).arg(one);
    cmd.try_get_matches_from([&text]).map(|_| ()).map_err(|e| format!("{key}: {}", message(e, &text)))
}

/// clap's message without its "error: " and usage lines, and without the flag's spelling.
fn message(e: clap::Error, text: &str) -> String {
    let rendered = e.render().to_string();
    let first = rendered.lines().next().unwrap_or("").trim_start_matches("error: ");
    let reason = first.split_once("': ").map_or(first, |(_, r)| r);
    format!("invalid value '{text}': {reason}")
}
