//! Shared helpers: the `ant` binary, small synthetic data sets and tensors.
#![allow(dead_code)]

use ant::loss::Target;
use ant::modules::Repr;
use ant::{AntParams, Preset};
use ant::{Dataset, Targets};
use burn::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Runs `ant` with the words of `line` (options without spaces) and then `more` (paths):
/// `ant_with("train --preset mnist-c --epochs-node 2", &["--data", s(&dir)])`.
pub fn ant_with(line: &str, more: &[&str]) -> std::process::Output {
    let mut args: Vec<&str> = line.split_whitespace().collect();
    args.extend_from_slice(more);
    ant(&args)
}

/// Runs the `ant` binary with `args` and waits for its output.
pub fn ant(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(args)
        .output()
        .expect("runs")
}

/// `n` points uniform in [-1,1]^d.
pub fn uniform(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n * d).map(|_| r.random_range(-1.0f32..1.0)).collect()
}

/// Regression data set from inputs and a function of each row.
pub fn regression(x: Vec<f32>, d: usize, f: impl Fn(&[f32]) -> f32) -> Dataset {
    let values: Vec<f32> = x.chunks(d).map(&f).collect();
    Dataset::new(x, vec![d], Targets::Values { values, dim: 1 }).unwrap()
}

/// Classification data set from inputs and a labelling of each row.
pub fn classification(x: Vec<f32>, d: usize, classes: usize, f: impl Fn(&[f32]) -> u32) -> Dataset {
    let labels: Vec<u32> = x.chunks(d).map(&f).collect();
    let targets = Targets::Classes {
        labels,
        n_classes: classes,
    };
    Dataset::new(x, vec![d], targets).unwrap()
}

pub fn flat(x: Vec<f32>, n: usize, d: usize, dev: &Device) -> Repr {
    Repr::Flat(Tensor::from_data(TensorData::new(x, [n, d]), dev))
}

pub fn classes(labels: Vec<i64>, dev: &Device) -> Target {
    let n = labels.len();
    Target::Classes(Tensor::from_data(TensorData::new(labels, [n, 1]), dev))
}

pub fn values(v: Vec<f32>, n: usize, d: usize, dev: &Device) -> Target {
    Target::Values(Tensor::from_data(TensorData::new(v, [n, d]), dev))
}

pub fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

/// burn's CPU backend has one global random generator, and the tests of a file run in
/// parallel threads: a test that seeds it and then draws from it (initial weights)
/// holds this lock, so no other test can reseed or draw in between.
pub fn rng_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A path as the `&str` an argument list takes (test paths are UTF-8).
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2, one `error` line mentioning every needle, no panic.
pub fn assert_clean_error(o: &std::process::Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "one error line expected: {e}");
    for n in needles {
        assert!(errors[0].contains(n), "error should mention {n:?}: {e}");
    }
}

/// Four quadrants, labelled so that one linear solver cannot separate them but a router
/// at x = 0 and two linear solvers can.
pub fn quadrants() -> Dataset {
    classification(uniform(600, 2, 11), 2, 3, |p| {
        match (p[0] > 0.0, p[1] > 0.0) {
            (true, true) => 0,
            (false, false) => 1,
            _ => 2,
        }
    })
}

pub fn small_params() -> AntParams {
    AntParams::new(Preset::Tabular)
        .with_width(16)
        .with_epochs_node(12)
        .with_patience(Some(4))
        .with_refine_epochs(Some(6))
        .with_max_depth(2)
        .with_batch_size(64)
        .with_seed(5)
}

/// Runs the `ant` binary with `args` under a 4 GiB address-space limit (`ulimit -v`),
/// killed after `secs` seconds (then this panics): for inputs that once made it read
/// or loop without end, so that a regression fails the test instead of the machine.
pub fn ant_bounded(args: &[&str], secs: u64) -> std::process::Output {
    use std::io::Read;
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_ant"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let ereader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > std::time::Duration::from_secs(secs) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("ant {args:?} ran past {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: ereader.join().unwrap(),
    }
}
