#![no_main]
//! CIFAR-10 binary batch parser.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ant::data::cifar::parse_batch(data, std::path::Path::new("fuzz.bin"));
});
