#![no_main]
//! CSV reader (delimiter and header detection) and the numeric conversion after it.
use ant::data::csv::{CsvOptions, parse_f64, parse_table};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let path = std::path::Path::new("fuzz.csv");
        if let Ok(t) = parse_table(text, path, &CsvOptions::default()) {
            let _ = parse_f64(&t, path);
        }
    }
});
