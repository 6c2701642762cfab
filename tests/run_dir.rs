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
    let weights = weights_file(tmp.path());
    let files = ["tree.json", &weights, "records.jsonl"];
    let before: Vec<Vec<u8>> = files
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
    assert!(
        !tmp.path().join("run.lock").exists(),
        "a refused run leaves no lock file"
    );
    for (f, b) in files.iter().zip(&before) {
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
    // Deleting run.lock does not let a second writer in: the lock is the directory's.
    std::fs::remove_file(tmp.path().join("run.lock")).unwrap();
    let resumed = common::ant_bounded(&["train", "--resume", &out], 60);
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(second.status.code(), Some(2));
    let e = stderr(&second);
    assert!(e.contains("another run is using this directory"), "{e}");
    let e = stderr(&resumed);
    assert_eq!(resumed.status.code(), Some(2), "{e}");
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
        &["--epochs-node", "2", "--lr", "1e30"],
    ));
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    let e = stderr(&r);
    assert!(e.contains("diverged"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(!tmp.path().join("tree.json").exists());
    assert!(!tmp.path().join("checkpoint").exists());
    assert!(!tmp.path().join("run.lock").exists());
    // Over a model (--force): the model stays, and so do its records and report.
    let r = ant(&train_args(&data, &out, &["--epochs-node", "2"]));
    assert!(r.status.success(), "{}", stderr(&r));
    let files = ["tree.json", "records.jsonl", "report.json"];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(tmp.path().join(f)).unwrap())
        .collect();
    let r = ant(&train_args(
        &data,
        &out,
        &["--epochs-node", "2", "--lr", "1e30", "--force"],
    ));
    assert!(stderr(&r).contains("diverged"), "{}", stderr(&r));
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(tmp.path().join(f)).unwrap(), b, "{f}");
    }
    assert!(!tmp.path().join("checkpoint").exists());
}

/// The weights file the tree.json in `dir` names.
fn weights_file(dir: &Path) -> String {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("tree.json")).unwrap()).unwrap();
    v["weights"]["file"].as_str().unwrap().to_string()
}

/// Copies the model in `from` to a fresh directory with `edit` applied to its tree.json.
fn edited_copy(from: &Path, edit: impl Fn(&mut serde_json::Value)) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    for f in ["tree.json".to_string(), weights_file(from)] {
        std::fs::copy(from.join(&f), to.path().join(&f)).unwrap();
    }
    let p = to.path().join("tree.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    to
}

#[test]
fn a_model_file_that_cannot_be_right_is_one_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, out) = (sarcos(), tmp.path().to_str().unwrap().to_string());
    let r = ant(&train_args(
        &data,
        &out,
        &["--epochs-node", "2", "--test-fraction", "0.2"],
    ));
    assert!(r.status.success(), "{}", stderr(&r));
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 8] = [
        ("empty x_mean", |v| {
            v["normalisation"]["x_mean"] = serde_json::json!([])
        }),
        ("empty y_std", |v| {
            v["normalisation"]["y_std"] = serde_json::json!([])
        }),
        ("output count", |v| v["task"]["dim"] = serde_json::json!(3)),
        ("test fraction", |v| {
            v["provenance"]["test_split"]["fraction"] = serde_json::json!(1.5)
        }),
        ("validation fraction", |v| {
            v["config"]["valid_fraction"] = serde_json::json!(5)
        }),
        ("orphaned subtree", |v| {
            v["topology"]["nodes"][0]["children"] = serde_json::json!([0, 0]);
            v["topology"]["nodes"][0]["router"] = v["topology"]["nodes"][0]["solver"].clone();
            v["topology"]["nodes"][0]["solver"] = serde_json::Value::Null;
        }),
        // A layer of 2^40 units: refused before any shape arithmetic can overflow.
        ("sizes beyond any model", |v| {
            let huge =
                serde_json::json!({"layers": [{"op": "linear", "d_in": 21, "d_out": 1u64 << 40}]});
            v["topology"]["nodes"][0]["edge"]
                .as_array_mut()
                .unwrap()
                .insert(0, huge);
        }),
        // 350M weights in a file of 0.5 MB: refused before they are allocated.
        ("more weights than the file holds", |v| {
            let wide = serde_json::json!([
                {"layers": [{"op": "linear", "d_in": 21, "d_out": 1 << 23}, {"op": "tanh"}]},
                {"layers": [{"op": "linear", "d_in": 1 << 23, "d_out": 21}]}
            ]);
            let edge = v["topology"]["nodes"][0]["edge"].as_array_mut().unwrap();
            edge.splice(0..0, wide.as_array().unwrap().clone());
        }),
    ];
    for (what, edit) in edits {
        let bad = edited_copy(tmp.path(), edit);
        let m = bad.path().to_str().unwrap();
        let pruned = format!("{m}-pruned");
        for cmd in [
            vec!["eval", "--model", m, "--data", &data],
            vec![
                "prune",
                "--model",
                m,
                "--data",
                &data,
                "--min-reach",
                "0.1",
                "--out",
                &pruned,
            ],
        ] {
            let r = ant(&cmd);
            let e = stderr(&r);
            assert_eq!(r.status.code(), Some(2), "{what}: {e}");
            assert!(
                e.contains("tree.json") && !e.contains("panicked"),
                "{what}: {e}"
            );
            assert_eq!(e.trim().lines().count(), 1, "{what}: {e}");
        }
    }
}

#[test]
fn weights_that_are_not_finite_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, out) = (sarcos(), tmp.path().to_str().unwrap().to_string());
    let r = ant(&train_args(&data, &out, &["--epochs-node", "2"]));
    assert!(r.status.success(), "{}", stderr(&r));
    // safetensors: an 8-byte header length, the JSON header, then the tensors' bytes.
    let weights = weights_file(tmp.path());
    let mut bytes = std::fs::read(tmp.path().join(&weights)).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    bytes[8 + n..8 + n + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    // tree.json says these are its weights (their checksum), but they are not finite.
    let md5 = ant::store::checksum::md5_hex(&bytes);
    let bad = edited_copy(tmp.path(), |v| v["weights"]["md5"] = serde_json::json!(md5));
    std::fs::write(bad.path().join(&weights), bytes).unwrap();
    let m = bad.path().to_str().unwrap();
    let r = ant(&["eval", "--model", m, "--data", &data]);
    let e = stderr(&r);
    assert_eq!(r.status.code(), Some(2), "{e}");
    assert!(e.contains(&weights) && e.contains("not finite"), "{e}");
}

#[test]
fn an_ensemble_or_a_link_to_nowhere_is_no_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let data = sarcos();
    // An ensemble's directory: a model trained there would be hidden by ensemble.json.
    let ens = tmp.path().join("ens");
    std::fs::create_dir(&ens).unwrap();
    // (of ant's format: one of another is the user's file, refused as such)
    std::fs::write(ens.join("ensemble.json"), r#"{"format": "ant-ensemble-1"}"#).unwrap();
    for force in [&[][..], &["--force"]] {
        let mut extra = vec!["--epochs-node", "1"];
        extra.extend_from_slice(force);
        let r = ant(&train_args(&data, ens.to_str().unwrap(), &extra));
        let e = stderr(&r);
        assert_eq!(r.status.code(), Some(2), "{e}");
        assert!(e.contains("holds an ensemble"), "{e}");
    }
    let left: Vec<_> = std::fs::read_dir(&ens)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["ensemble.json"]);
    // A dangling symbolic link: said so, not "File exists".
    #[cfg(unix)]
    {
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &link).unwrap();
        let r = ant(&train_args(
            &data,
            link.to_str().unwrap(),
            &["--epochs-node", "1"],
        ));
        let e = stderr(&r);
        assert_eq!(r.status.code(), Some(2), "{e}");
        assert!(
            e.contains("symbolic link") && e.contains("leads to nothing"),
            "{e}"
        );
        assert!(!e.contains("os error 17"), "{e}");
    }
}
