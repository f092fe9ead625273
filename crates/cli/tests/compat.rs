//! Programs written the way the nanoPU prototype's are (`sw/compat`: their own start code,
//! argv from the HTIF `getmainvars` call, cores 1.. parked in an endless loop, exit from
//! core 0 through `tohost`, no `__nanopu_abi` symbol) run unmodified: x30/x31 are the
//! network registers because the program uses the LNIC CSRs, the first exit ends the node,
//! and `exit(-1)` is reported as -1 (docs/abi.md).

use std::process::{Command, Output};

fn nanopu(args: &[&str]) -> Output {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    Command::new(env!("CARGO_BIN_EXE_nanopu")).args(args).current_dir(root).output().expect("runs")
}

fn json(o: &Output) -> serde_json::Value {
    let err = String::from_utf8_lossy(&o.stderr);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

const ECHO: &str = "sw/build/compat/echo.elf";

#[test]
fn a_prototype_style_echo_server_answers_and_its_first_exit_ends_the_node() {
    let o = nanopu(&["run", ECHO, "--send", "1000:0:5,6", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    assert_eq!(j["host_received"][0]["words"], serde_json::json!(["0x6", "0x7"]), "netRX/netTX work");
    assert_eq!(j["cores"][0]["console"], "compat echo on 10.0.0.2\n", "argv from getmainvars");
    assert_eq!(j["cores"][0]["exit_code"], 0, "argv was program, MAC, IP");
    for c in 1..4 {
        assert!(j["cores"][c]["state"].as_str().unwrap().starts_with("stopped: core 0 exited first"), "{j}");
    }
    assert!(j["simulated_ns"].as_f64().unwrap() < 2000.0, "the run ends with core 0: {}", j["simulated_ns"]);
}

#[test]
fn with_each_hart_exiting_on_its_own_the_parked_cores_never_end() {
    let o = nanopu(&["run", ECHO, "--send", "1000:0:5,6", "--exit", "hart", "--max-cycles", "100000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("time limit"));
}

#[test]
fn as_a_plain_program_x30_and_x31_are_ordinary_registers() {
    let o = nanopu(&["run", ECHO, "--cores", "1", "--send", "1000:0:5,6", "--abi", "plain", "--json"]);
    let j = json(&o);
    assert_eq!(j["host_received"], serde_json::json!([]), "nothing was sent: {j}");
}

#[test]
fn exit_minus_one_is_reported_as_minus_one() {
    let o = nanopu(&["run", "sw/build/compat/exit_minus_one.elf", "--json"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(json(&o)["cores"][0]["exit_code"], -1);
}
