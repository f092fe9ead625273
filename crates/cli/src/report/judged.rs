//! How the command ends a judged run (`nanopu_cluster::report::judge`): its problems on
//! stderr and its exit status, the same for `run` (one node or a cluster) and `sort`.

use std::process::ExitCode;

/// Every problem on a line of its own (`nanopu: PROBLEM`, as `--json` lists them), and the
/// exit status.
pub fn judged(problems: &[String], status: u8) -> ExitCode {
    problems.iter().for_each(|p| eprintln!("nanopu: {p}"));
    ExitCode::from(status)
}
