//! What reading a table costs: the peak memory of loading it as `ant train` does, beside
//! the f32 matrix it makes (the data guide's cost per row).
//!
//!     cargo run --release --example table_cost -- FILE TARGET classification|regression
use std::path::Path;

fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() -> ant::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, file, target, task] = &args[..] else {
        eprintln!("usage: table_cost FILE TARGET classification|regression");
        std::process::exit(2);
    };
    let task = match task.as_str() {
        "classification" => ant::TaskKind::Classification,
        _ => ant::TaskKind::Regression,
    };
    let before = peak_kib();
    let spec = ant::data::tabular::TargetSpec::new(target, task);
    let source = ant::data::source::load_source(Path::new(file), None, 0.2, 0, Some(&spec), None)?;
    let rows = source.train.len() + source.test.len();
    let features: usize = source.train.sample_shape().iter().product();
    let matrix = rows * (features + 1) * 4;
    let grown = (peak_kib() - before) * 1024;
    println!(
        "{rows} rows, {features} features: f32 matrix {:.1} MB, peak while reading {:.1} MB ({:.0} bytes per row, {:.1}x the matrix)",
        matrix as f64 / 1e6,
        grown as f64 / 1e6,
        grown as f64 / rows as f64,
        grown as f64 / matrix as f64
    );
    Ok(())
}
