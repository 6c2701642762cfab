//! What a data file is taken for: a table needs `--target` (without one it is read as
//! SARCOS only under `--preset sarcos`), a MAT-file is SARCOS's, JSON is said to be JSON
//! (Python's `json.dump` with a NaN, pretty or cut short included) while a header whose
//! first cell looks like JSON is still a header, and a table given to a model of images
//! is named as a table.

use std::path::{Path, PathBuf};

mod common;

use common::*;

const QUICK: &str = "train --preset tabular --epochs-node 2 --refine-epochs 1";

/// `ant train` of a quick classifier of the blobs' `label` on `data` into `out`.
fn train(data: &Path, out: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "--data",
        s(data),
        "--out",
        s(out),
        "--target",
        "label",
        "--task",
        "classification",
    ];
    args.extend(more);
    ant_with(QUICK, &args)
}

/// The blobs' rows after another header line.
fn blobs_headed(dir: &Path, name: &str, header: &str) -> PathBuf {
    let text = std::fs::read_to_string(blobs_csv(dir)).unwrap();
    let body: Vec<&str> = text.lines().skip(1).collect();
    let p = dir.join(name);
    std::fs::write(&p, format!("{header}\n{}\n", body.join("\n"))).unwrap();
    p
}

#[test]
fn a_table_without_target_is_sarcos_only_under_its_preset() {
    let t = tempfile::tempdir().unwrap();
    let data = abc_csv(t.path(), "t.csv", true);
    let quick = format!("{QUICK} --max-depth 1");
    let o = ant_with(
        &quick,
        &["--data", s(&data), "--out", s(&t.path().join("m"))],
    );
    assert_clean_error(
        &o,
        &["t.csv", "read as SARCOS", "--preset tabular", "--target"],
    );
    assert!(!t.path().join("m").exists());
    // Under --preset sarcos, the width is named with what a table needs.
    let o = ant(&[
        "train",
        "--preset",
        "sarcos",
        "--data",
        s(&data),
        "--out",
        s(&t.path().join("s")),
    ]);
    assert_clean_error(&o, &["found 4 columns, expected SARCOS's 28", "--target"]);
    // A MAT-file is SARCOS's whatever --target says; a missing file is missing: neither
    // is told to add --target.
    let mat = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sarcos_inv_test.mat");
    let o = ant_with(
        &quick,
        &["--data", s(&mat), "--out", s(&t.path().join("x"))],
    );
    assert_clean_error(&o, &["is a MAT-file", "--preset sarcos"]);
    let gone = t.path().join("gone.csv");
    let o = ant_with(
        &quick,
        &["--data", s(&gone), "--out", s(&t.path().join("x"))],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("--target"), "{}", stderr(&o));
}

/// JSON is said to be JSON, not a quote error.
#[test]
fn json_is_said_to_be_json() {
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("in.jsonl");
    std::fs::write(&json, "{\"x\": 1, \"y\": 2}\n").unwrap();
    let j = t.path().join("j");
    let o = ant_with(
        QUICK,
        &[
            "--data",
            s(&json),
            "--out",
            s(&j),
            "--target",
            "y",
            "--task",
            "regression",
        ],
    );
    assert_clean_error(&o, &["in.jsonl", "holds JSON", "CSV"]);
}

/// Python's json.dump, with a NaN, pretty or cut short, is JSON.
#[test]
fn json_with_a_nan_pretty_or_cut_short_is_json() {
    let t = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("nan.json", "[{\"x\": NaN, \"y\": 1, \"label\": 0}]"),
        ("pretty.json", "[\n  {\n    \"x\": 1,"),
    ] {
        let p = t.path().join(name);
        std::fs::write(&p, text).unwrap();
        assert_clean_error(&train(&p, &t.path().join("j"), &[]), &[name, "holds JSON"]);
    }
}

/// A header whose first cell is a JSON value is still a header.
#[test]
fn a_header_whose_first_cell_is_a_json_value_is_a_header() {
    let t = tempfile::tempdir().unwrap();
    let brackets = blobs_headed(t.path(), "brackets.csv", "[1],{},label");
    assert!(
        train(&brackets, &t.path().join("b"), &["--max-depth", "1"])
            .status
            .success()
    );
}

/// A header whose first cell is a JSON array of a string is a header.
#[test]
fn a_header_whose_first_cell_is_a_json_array_of_a_string_is_a_header() {
    let t = tempfile::tempdir().unwrap();
    let quoted = blobs_headed(t.path(), "quoted.csv", "[\"a\"],y,label");
    assert!(
        train(&quoted, &t.path().join("q"), &["--max-depth", "1"])
            .status
            .success()
    );
}

/// The error says what the model wants and what was given.
#[test]
fn a_table_given_to_a_model_of_images_is_named_as_a_table() {
    let t = tempfile::tempdir().unwrap();
    let mnist = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let m = t.path().join("m");
    let o = ant_with(
        "train --preset mnist-c --train-limit 200 --epochs-node 1 --refine-epochs 1 --max-depth 1",
        &["--data", s(&mnist), "--out", s(&m)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let data = iris_like_csv(t.path());
    let o = ant(&["eval", "--model", s(&m), "--data", s(&data)]);
    assert_clean_error(&o, &["named.csv", "holds a table", "1x28x28 images"]);
}
