//! The ISA conformance suite and the nanoPU interface tests of `sw/tests`: every program
//! checks itself and exits 0 on every core.

use crate::common;

use common::*;
use nanopu_cluster::Outcome;

fn check(path: &std::path::Path, cores: usize) -> Result<(), String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let elf = std::fs::read(path).unwrap();
    let (outcome, s) = run(&elf, cfg(cores)).map_err(|e| format!("{name}: {e}"))?;
    let failed: Vec<_> = s.cores.iter().filter(|c| c.exit_code != Some(0)).collect();
    if outcome != Outcome::AllExited || !failed.is_empty() {
        return Err(format!("{name}: {}", s.text()));
    }
    Ok(())
}

/// Programs in sw/build/tests whose name starts with `prefix`, run on `cores` cores.
fn suite(filter: impl Fn(&str) -> bool, cores: usize) {
    let progs: Vec<_> =
        elfs_in("tests").into_iter().filter(|p| filter(&p.file_name().unwrap().to_string_lossy())).collect();
    assert!(!progs.is_empty(), "no test programs found");
    let errors: Vec<String> = progs.iter().filter_map(|p| check(p, cores).err()).collect();
    assert!(errors.is_empty(), "{} of {} failed:\n{}", errors.len(), progs.len(), errors.join("\n"));
}

#[test]
fn isa_programs_pass_on_one_core() {
    suite(|n| !n.starts_with("nic_") && !n.starts_with("err_"), 1);
}

#[test]
fn nic_programs_pass_on_four_cores() {
    suite(|n| n.starts_with("nic_") && !n.contains("bad"), 4);
}
