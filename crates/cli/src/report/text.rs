//! The human-readable form of a JSON summary, for subcommands whose figures are built as one
//! JSON document (`nanopu bench`, `nanopu app`): without `--json` they print this, with it
//! the document itself, so that the two never disagree. One line per key (`key: value`),
//! nested objects indented under their key, a list of numbers or words on one line, a
//! list of objects with the same keys as a table.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// `v` as indented text, keys in the document's order (alphabetical, as serde_json keeps them).
pub fn text_of(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) => object(&mut out, m, 0),
        other => out += &format!("{}\n", scalar(other)),
    }
    out
}

fn object(out: &mut String, m: &Map<String, Value>, depth: usize) {
    for (k, v) in m {
        entry(out, k, v, depth);
    }
}

/// One key and its value at `depth` (two spaces a level).
fn entry(out: &mut String, key: &str, v: &Value, depth: usize) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(m) => {
            let _ = writeln!(out, "{pad}{key}:");
            object(out, m, depth + 1);
        }
        Value::Array(items) if items.iter().all(is_scalar) => {
            let words: Vec<String> = items.iter().map(scalar).collect();
            let _ = writeln!(out, "{pad}{key}: {}", words.join(", "));
        }
        Value::Array(items) => {
            let _ = writeln!(out, "{pad}{key}:");
            list(out, items, depth + 1);
        }
        _ => {
            let _ = writeln!(out, "{pad}{key}: {}", scalar(v));
        }
    }
}

/// A list of objects with the same scalar keys as a table, anything else item by item.
fn list(out: &mut String, items: &[Value], depth: usize) {
    if let Some(t) = table(items, depth) {
        *out += &t;
        return;
    }
    let pad = "  ".repeat(depth);
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::Object(m) => {
                let _ = writeln!(out, "{pad}- {}:", i + 1);
                object(out, m, depth + 1);
            }
            other => entry(out, "-", other, depth),
        }
    }
}

/// Objects sharing one set of keys, each with only scalar values: a header, then a row
/// each, columns aligned.
fn table(items: &[Value], depth: usize) -> Option<String> {
    let rows: Vec<&Map<String, Value>> = items.iter().map(Value::as_object).collect::<Option<_>>()?;
    let keys: Vec<&String> = rows.first()?.keys().collect();
    let same = |m: &&Map<String, Value>| m.keys().eq(keys.iter().copied()) && m.values().all(is_scalar);
    if !rows.iter().all(same) {
        return None;
    }
    let mut cells = vec![keys.iter().map(|k| k.to_string()).collect::<Vec<_>>()];
    cells.extend(rows.iter().map(|m| m.values().map(scalar).collect()));
    let widths: Vec<usize> =
        (0..keys.len()).map(|c| cells.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    let pad = "  ".repeat(depth);
    let line = |r: &Vec<String>| {
        let padded: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("{pad}{}\n", padded.join("  ").trim_end())
    };
    Some(cells.iter().map(line).collect())
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

/// A number as JSON writes it, a string without quotes, null as "none".
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::text_of;
    use serde_json::json;

    #[test]
    fn keys_nest_lists_inline_and_uniform_rows_make_a_table() {
        let v = json!({ "benchmark": "rx", "reference": { "one_ns": 8 }, "cycles": [194, 126],
            "rows": [{ "messages": 1, "ns": 10.2 }, { "messages": 64, "ns": 404.9 }], "peak": null });
        let want = "benchmark: rx\ncycles: 194, 126\npeak: none\nreference:\n  one_ns: 8\nrows:\n  \
                    messages  ns\n  1         10.2\n  64        404.9\n";
        assert_eq!(text_of(&v), want);
    }

    #[test]
    fn rows_of_different_keys_are_listed_one_by_one() {
        let v = json!({ "runs": [{ "a": 1 }, { "b": [1, 2] }] });
        assert_eq!(text_of(&v), "runs:\n  - 1:\n    a: 1\n  - 2:\n    b: 1, 2\n");
    }
}
