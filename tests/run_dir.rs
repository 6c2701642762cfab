//! What `ant train` does to its output directory: a finished model is kept unless
//! replaced on purpose, one run at a time owns a directory, and a diverged run leaves
//! nothing behind.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::ant;

fn sarcos() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/sarcos_inv_test.mat")
        .display()
        .to_string()
}

/// A short SARCOS run into `out`, with `extra` flags.
fn train_args<'a>(data: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "train",
        "--preset",
        "sarcos",
        "--data",
        data,
        "--out",
        out,
        "--width",
        "16",
        "--max-depth",
        "1",
        "--refine-epochs",
        "2",
    ];
    v.extend_from_slice(extra);
    v
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_finished_model_is_kept_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, out) = (sarcos(), tmp.path().to_str().unwrap().to_string());
    let quick = ["--epochs-node", "2"];
    let r = ant(&train_args(&data, &out, &quick));
    assert!(r.status.success(), "{}", stderr(&r));
    let before: Vec<Vec<u8>> = ["tree.json", "model.safetensors", "records.jsonl"]
        .iter()
        .map(|f| std::fs::read(tmp.path().join(f)).unwrap())
        .collect();

    // Another run (other settings) into the same directory is refused: nothing changes.
    let again = ant(&train_args(
        &data,
        &out,
        &["--epochs-node", "3", "--seed", "1"],
    ));
    assert_eq!(again.status.code(), Some(2));
    let e = stderr(&again);
    assert!(
        e.contains("holds a trained model") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    for (f, b) in ["tree.json", "model.safetensors", "records.jsonl"]
        .iter()
        .zip(&before)
    {
        assert_eq!(
            &std::fs::read(tmp.path().join(f)).unwrap(),
            b,
            "{f} changed"
        );
    }

    // With --force it is replaced.
    let forced = ant(&train_args(
        &data,
        &out,
        &["--epochs-node", "3", "--seed", "1", "--force"],
    ));
    assert!(forced.status.success(), "{}", stderr(&forced));
    let records = std::fs::read(tmp.path().join("records.jsonl")).unwrap();
    assert_ne!(records, before[2]);
    assert!(!tmp.path().join("run.lock").exists());
}

#[test]
fn a_directory_in_use_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, out) = (sarcos(), tmp.path().to_str().unwrap().to_string());
    // A run long enough to be caught in progress (patience never stops it).
    let long = ["--epochs-node", "100000", "--patience", "100000"];
    let mut first = Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(train_args(&data, &out, &long))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !tmp.path().join("records.jsonl").exists()
        || std::fs::metadata(tmp.path().join("records.jsonl"))
            .unwrap()
            .len()
            == 0
    {
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first run ended early"
        );
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = ant(&train_args(&data, &out, &["--epochs-node", "2", "--force"]));
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(second.status.code(), Some(2));
    let e = stderr(&second);
    assert!(e.contains("another run is using this directory"), "{e}");
    // The first run's checkpoints were left alone, for `--resume`.
    assert!(tmp.path().join("checkpoint/run.json").exists());
}

#[test]
fn diverged_training_is_an_error_that_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, out) = (sarcos(), tmp.path().to_str().unwrap().to_string());
    let r = ant(&train_args(
        &data,
        &out,
        &["--epochs-node", "2", "--lr", "1e300"],
    ));
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    let e = stderr(&r);
    assert!(e.contains("diverged"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(!tmp.path().join("tree.json").exists());
    assert!(!tmp.path().join("checkpoint").exists());
}
