#![no_main]

// A load-generator configuration file: parsed and validated (nanopu_harness::fuzzing).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nanopu_harness::fuzzing::load_config(data);
});
