#![no_main]

// A cluster configuration file: parsed, validated and built (nanopu_harness::fuzzing).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nanopu_harness::fuzzing::cluster_config(data);
});
