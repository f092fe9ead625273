//! The Wireshark dissector (`tools/wireshark/nanopu.lua`) decodes every packet of a capture
//! and agrees with the run's own counters. Needs `tshark`; `.ci/run` installs it, and the
//! test says so loudly where it is missing rather than pass in silence.

use std::process::Command;

fn root() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
}

/// Is tshark missing? Then say so loudly (and fail where CI requires it).
fn tshark_missing() -> bool {
    if Command::new("tshark").arg("--version").output().is_ok() {
        return false;
    }
    eprintln!("SKIPPED: tshark is not installed (apt-get install tshark); .ci/run installs it");
    assert!(std::env::var_os("CI_REQUIRE_TSHARK").is_none(), "CI requires tshark");
    true
}

#[test]
fn the_lua_dissector_decodes_an_incast_capture_as_the_run_counted_it() {
    if tshark_missing() {
        return;
    }
    let pcap = std::env::temp_dir().join(format!("nanopu-dissector-{}.pcap", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_nanopu"))
        .args(["run", "experiments/incast/ndp-trim.toml", "--json", "--pcap", pcap.to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let j: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let t = &j["transport"];
    let lua = format!("lua_script:{}/tools/wireshark/nanopu.lua", root());
    let out = Command::new("tshark")
        .args([
            "-X",
            &lua,
            "-r",
            pcap.to_str().unwrap(),
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "nanopu.flags",
        ])
        .output()
        .unwrap();
    std::fs::remove_file(&pcap).unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 2 && !r[1].is_empty()), "every frame is a nanoPU packet: {text}");
    let count = |flags: &str| rows.iter().filter(|r| r[1] == flags).count() as u64;
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let trimmed = n(&t["trimmed_received"]);
    assert!(trimmed > 0, "the incast trims");
    assert_eq!(count("0x21"), trimmed, "DATA|CHOP");
    assert_eq!(count("0x04"), trimmed, "a NACK per trimmed packet");
    assert_eq!(count("0x08"), n(&t["pulls_sent"]), "PULL");
    assert_eq!(count("0x01"), n(&t["data_packets_sent"]) - trimmed, "DATA that arrived whole");
    assert_eq!(count("0x02"), count("0x01"), "an ACK per whole DATA packet");
    assert_eq!(
        rows.len() as u64,
        count("0x21") + count("0x04") + count("0x08") + count("0x01") + count("0x02")
    );
}

/// `--pcap X.pcapng` writes pcapng: tshark sees the capture point as the interface's name
/// and each packet's direction at node 0 of the incast: data arrives, the receiver's
/// ACKs, NACKs and PULLs leave.
#[test]
fn a_pcapng_capture_names_its_interface_and_each_packets_direction() {
    if tshark_missing() {
        return;
    }
    let pcap = std::env::temp_dir().join(format!("nanopu-dissector-{}.pcapng", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_nanopu"))
        .args(["run", "experiments/incast/ndp-trim.toml", "--pcap", pcap.to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let lua = format!("lua_script:{}/tools/wireshark/nanopu.lua", root());
    let fields = ["frame.interface_name", "frame.packet_flags_direction", "nanopu.flags"];
    let mut args = vec!["-X", &lua, "-r", pcap.to_str().unwrap(), "-T", "fields"];
    fields.iter().for_each(|f| args.extend(["-e", f]));
    let out = Command::new("tshark").args(&args).output().unwrap();
    std::fs::remove_file(&pcap).unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r[0] == "node:0"), "{text}");
    // frame.packet_flags_direction: 1 inbound, 2 outbound (tshark prints it in hex).
    let number = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    for r in &rows {
        let data = r[2] == "0x01" || r[2] == "0x21";
        assert_eq!(number(r[1]), if data { 1 } else { 2 }, "data in, control out: {r:?}");
    }
}
