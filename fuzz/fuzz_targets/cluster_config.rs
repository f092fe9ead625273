#![no_main]

// A cluster configuration file: parsed, validated and built (nanopu_cluster::fuzzing).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nanopu_cluster::fuzzing::cluster_config(data);
});
