//! Shared helpers of the command's integration tests: running `nanopu` from the repository's
//! root (where the configurations' relative paths lead) and reading what it said.

#![allow(dead_code)]

use std::process::{Command, Output};

/// `nanopu ARGS` run in the repository's root.
pub fn nanopu(args: &[&str]) -> Output {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    Command::new(env!("CARGO_BIN_EXE_nanopu")).args(args).current_dir(root).output().expect("runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
