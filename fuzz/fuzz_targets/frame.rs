#![no_main]

// A segment-size byte and a frame: every wire parser (nanopu_net::fuzzing).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nanopu_net::fuzzing::frame(data);
});
