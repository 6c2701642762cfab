#![no_main]
//! IDX parser: any bytes give Ok or a clean error, never a panic or a huge allocation.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ant::data::idx::parse_idx(data.to_vec(), std::path::Path::new("fuzz.idx"));
});
