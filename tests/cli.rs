//! The `ant` binary end to end: training on SARCOS, eval's JSON, and clear errors.

use std::path::Path;
use std::process::Output;

mod common;
use common::ant;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

#[test]
fn sarcos_trains_with_a_test_fraction_and_eval_reports_json() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let data = repo("data/sarcos_inv_test.mat");
    let r = ant(&[
        "train",
        "--preset",
        "sarcos",
        "--data",
        &data,
        "--out",
        o,
        "--test-fraction",
        "0.2",
        "--epochs-node",
        "15",
        "--refine-epochs",
        "5",
        "--max-depth",
        "1",
        "--width",
        "32",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    for f in ["tree.json", "records.jsonl", "report.json"] {
        assert!(out.path().join(f).exists(), "{f} missing");
    }
    // The weights file tree.json names, and no other.
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("tree.json")).unwrap()).unwrap();
    let weights = tree["weights"]["file"].as_str().unwrap();
    assert!(out.path().join(weights).exists(), "{weights} missing");
    let safetensors = std::fs::read_dir(out.path())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".safetensors")
        })
        .count();
    assert_eq!(safetensors, 1);
    let e = ant(&["eval", "--model", o, "--data", &data, "--json"]);
    assert!(e.status.success(), "{}", stderr(&e));
    let v: serde_json::Value =
        serde_json::from_slice(&e.stdout).expect("stdout is one JSON object");
    for k in [
        "multi_path_mse",
        "single_path_mse",
        "params_total",
        "nodes",
        "leaves",
        "routers",
        "transformers",
        "depth",
        "test_samples",
    ] {
        assert!(v[k].is_number(), "{k} missing in {v}");
    }
    assert_eq!(v["task"], "regression");
    // only the held-out 20% of the 4,449 rows are scored
    assert_eq!(v["test_samples"], 890);
    // predicting each torque's mean scores about 133 (the mean variance): far better
    let mse = v["multi_path_mse"].as_f64().unwrap();
    assert!(mse < 40.0, "mse {mse}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(report["multi_path_mse"], v["multi_path_mse"]);
    // each records line is one JSON object with the documented fields
    let recs = std::fs::read_to_string(out.path().join("records.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(recs.lines().next().unwrap()).unwrap();
    for k in [
        "phase",
        "node",
        "candidate",
        "train_loss",
        "valid_loss",
        "valid_metric",
        "seconds",
    ] {
        assert!(first.get(k).is_some(), "{k} missing in records");
    }
}

fn assert_clean_error(o: &Output, needle: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains(needle), "error should mention {needle:?}: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_input_gives_one_clear_error_and_exit_code_2() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("out");
    let o = o.to_str().unwrap();
    // missing data
    assert_clean_error(
        &ant(&[
            "train",
            "--preset",
            "mnist-c",
            "--data",
            "/no/such/dir",
            "--out",
            o,
        ]),
        "/no/such/dir",
    );
    // an IDX directory with a corrupt image file
    let bad = d.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    for f in [
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    ] {
        std::fs::write(bad.join(f), [0u8, 0, 8, 3, 0, 0, 0, 9]).unwrap();
    }
    assert_clean_error(
        &ant(&[
            "train",
            "--preset",
            "mnist-c",
            "--data",
            bad.to_str().unwrap(),
            "--out",
            o,
        ]),
        "train-images",
    );
    // a CSV with a NaN
    let csv = d.path().join("s.csv");
    let row: Vec<String> = (0..28)
        .map(|i| if i == 5 { "nan".into() } else { i.to_string() })
        .collect();
    std::fs::write(&csv, format!("{}\n", row.join(","))).unwrap();
    assert_clean_error(
        &ant(&[
            "train",
            "--preset",
            "sarcos",
            "--data",
            csv.to_str().unwrap(),
            "--out",
            o,
        ]),
        "s.csv",
    );
    // a preset that does not fit the data
    assert_clean_error(
        &ant(&[
            "train",
            "--preset",
            "sarcos",
            "--data",
            &repo("data/mnist"),
            "--out",
            o,
        ]),
        "sarcos",
    );
    // nonsense flags
    assert_eq!(
        ant(&["train", "--preset", "nope", "--data", "x", "--out", o])
            .status
            .code(),
        Some(2)
    );
    assert_clean_error(
        &ant(&[
            "train",
            "--preset",
            "sarcos",
            "--data",
            &repo("data/sarcos_inv_test.mat"),
            "--out",
            o,
            "--lr=-1",
        ]),
        "--lr",
    );
    // a model that does not exist
    assert_clean_error(
        &ant(&[
            "eval",
            "--model",
            "/no/model",
            "--data",
            &repo("data/mnist"),
        ]),
        "/no/model",
    );
}

/// `--image-norm mean-std` divides images by their standard deviation (MNIST's is about
/// 0.308) and the default only subtracts the mean; both settings, and `--select`, are
/// recorded in the model's config.
#[test]
fn image_scaling_selection_and_validation_rows_are_chosen_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let tree = |name: &str, extra: &[&str]| -> serde_json::Value {
        let out = dir.path().join(name);
        let data = repo("data/mnist");
        let mut args = vec![
            "train",
            "--preset",
            "mnist-c",
            "--data",
            &data,
            "--train-limit",
            "300",
            "--epochs-node",
            "1",
            "--refine-epochs",
            "2",
            "--max-depth",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = ant(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(out.join("tree.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let std_of = |t: &serde_json::Value| t["normalisation"]["x_std"][0].as_f64().unwrap();
    let paper = tree("paper", &[]);
    assert_eq!(std_of(&paper), 1.0);
    assert_eq!(paper["config"]["image_norm"], "mean");
    assert_eq!(paper["config"]["select"], "metric");
    assert_eq!(paper["provenance"]["valid_split"]["kind"], "stratified");
    let scaled = tree(
        "scaled",
        &[
            "--image-norm",
            "mean-std",
            "--select",
            "nll",
            "--valid-rows",
            "last",
        ],
    );
    assert!(
        (std_of(&scaled) - 0.308).abs() < 0.02,
        "{}",
        std_of(&scaled)
    );
    assert_eq!(scaled["config"]["image_norm"], "mean-std");
    assert_eq!(scaled["config"]["select"], "nll");
    assert_eq!(scaled["config"]["valid_rows"], "last");
    assert_eq!(scaled["provenance"]["valid_split"]["kind"], "tail");
}
