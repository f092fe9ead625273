//! `nanopu schema`: the configuration files' JSON Schemas and reference page
//! (`nanopu_harness::schema`; docs/config.md).

use clap::Args;
use nanopu_harness::schema::{reference, schema, ConfigKind};
use std::process::ExitCode;

#[derive(Args)]
pub struct SchemaArgs {
    /// Which file's JSON Schema to print.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(ConfigKind::ALL.map(|(n, _)| n)), required_unless_present = "markdown")]
    kind: Option<String>,
    /// Print the reference page of every key of every kind of file (docs/config.md) instead.
    #[arg(long, conflicts_with = "kind")]
    markdown: bool,
}

pub fn main(a: SchemaArgs) -> Result<ExitCode, String> {
    if a.markdown {
        print!("{}", reference());
        return Ok(ExitCode::SUCCESS);
    }
    let name = a.kind.expect("clap requires a kind without --markdown");
    let kind = ConfigKind::ALL.iter().find(|(n, _)| *n == name).expect("clap checked the name").1;
    let text = serde_json::to_string_pretty(&schema(kind)).map_err(|e| e.to_string())?;
    println!("{text}");
    Ok(ExitCode::SUCCESS)
}
