//! The configuration reference (docs/config.md) is what `nanopu schema --markdown` prints,
//! and every key of every kind of file is described there.

use nanopu_harness::schema::{reference, schema, ConfigKind};
use serde_json::Value;
use std::path::Path;

#[test]
fn the_reference_page_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    let page = std::fs::read_to_string(&path).expect("docs/config.md");
    assert!(
        page == reference(),
        "docs/config.md is stale: regenerate it with `nanopu schema --markdown > docs/config.md`"
    );
}

/// Every property of every object in `v`, with its path, lacking a description.
fn undescribed(v: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(props) = v["properties"].as_object() {
        for (k, p) in props {
            if p["description"].as_str().is_none_or(str::is_empty) {
                out.push(format!("{path}{k}"));
            }
        }
    }
    if let Some(defs) = v["$defs"].as_object() {
        defs.iter().for_each(|(name, d)| undescribed(d, &format!("{name}."), out));
    }
}

#[test]
fn every_key_has_a_description() {
    for (name, kind) in ConfigKind::ALL {
        let mut missing = Vec::new();
        undescribed(&schema(kind), "", &mut missing);
        assert!(missing.is_empty(), "{name} keys without a doc comment: {missing:?}");
    }
}

#[test]
fn unknown_keys_are_refused_by_the_schema_as_by_the_parser() {
    let s = schema(ConfigKind::Cluster);
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["$defs"]["TopologyFile"]["additionalProperties"], false);
    assert!(s["required"].as_array().unwrap().contains(&"topology".into()));
}
