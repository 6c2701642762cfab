#![no_main]
//! MATLAB level-5 parser (including zlib-compressed elements).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ant::data::mat::parse_mat(data, std::path::Path::new("fuzz.mat"));
});
