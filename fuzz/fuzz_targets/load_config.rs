#![no_main]

// A load-generator configuration file: parsed and validated (nanopu_cluster::fuzzing).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nanopu_cluster::fuzzing::load_config(data);
});
