#![no_main]

// A pcap file: read, and written back if accepted (nanopu_net::fuzzing).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nanopu_net::fuzzing::pcap(data);
});
