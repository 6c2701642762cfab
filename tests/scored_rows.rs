//! Which rows a score is on: `eval` of a model's own training file scores its held-out
//! rows, however its bytes are written (CRLF, another reading); other rows are scored
//! whole, and said so; scores on the rows a model was trained on (all of them, most of
//! them, in another order, a `--train-limit`'s) come with a warning, at training and
//! after, for an ensemble and its members too.

use std::path::{Path, PathBuf};

mod common;

use common::*;

/// 90 rows `a,b,y` (features times `scale`, labels from `labels` in turn), headed.
fn two_feature_table(dir: &Path, name: &str, labels: &[&str], scale: f64) -> PathBuf {
    let rows: Vec<String> = uniform(90, 2, 3)
        .chunks(2)
        .enumerate()
        .map(|(i, r)| {
            let (a, b) = (f64::from(r[0]) * scale, f64::from(r[1]) * scale);
            format!("{a:e},{b:e},{}", labels[i % labels.len()])
        })
        .collect();
    write(dir, name, format!("a,b,y\n{}\n", rows.join("\n")))
}

#[test]
fn scores_on_the_training_rows_come_with_a_warning() {
    let t = tempfile::tempdir().unwrap();
    let data = two_feature_table(t.path(), "tr.csv", &["0", "1"], 1.0);
    let test = two_feature_table(t.path(), "te.csv", &["1", "0"], 2.0);
    let m = t.path().join("m");
    trained_quick(&data, &m, &["--target", "y", "--test-data", s(&test)]);
    let warned = |data: &Path| {
        let o = ant(&["eval", "--model", s(&m), "--data", s(data)]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o).contains("the rows the model was trained on")
    };
    assert!(warned(&data));
    assert!(!warned(&test));
}

/// The same rows in another order are the training rows, at training and after: not
/// scored as new data without a word.
#[test]
fn the_training_rows_in_another_order_are_said_at_training_and_after() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", Some("a,b,y"));
    let text = std::fs::read_to_string(&data).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1..].reverse();
    let reordered = write(t.path(), "reordered.csv", lines.join("\n") + "\n");
    let m = t.path().join("r");
    let o = trained_quick(&data, &m, &["--target", "y", "--test-data", s(&reordered)]);
    assert!(
        stderr(&o).contains("reordered.csv: these are the rows the model was trained on"),
        "{}",
        stderr(&o)
    );
    let o = ant(&["eval", "--model", s(&m), "--data", s(&reordered)]);
    assert!(
        stderr(&o).contains("reordered.csv: these are the rows the model was trained on"),
        "{}",
        stderr(&o)
    );
}

/// Most of the training rows among others: said with their share, at training and
/// after, not only a file of all of them.
#[test]
fn most_of_the_training_rows_among_others_are_said_with_their_share() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", Some("a,b,y"));
    let text = std::fs::read_to_string(&data).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1..].reverse();
    let mut most: Vec<&str> = lines.clone();
    most.truncate(lines.len() - 3);
    let overlap = write(t.path(), "overlap.csv", most.join("\n") + "\n");
    let m = t.path().join("o");
    let o = trained_quick(&data, &m, &["--target", "y", "--test-data", s(&overlap)]);
    assert!(
        stderr(&o)
            .contains("overlap.csv: about 100% of its rows are rows the model was trained on"),
        "{}",
        stderr(&o)
    );
    let o = ant(&["eval", "--model", s(&m), "--data", s(&overlap)]);
    assert!(
        stderr(&o)
            .contains("overlap.csv: about 100% of its rows are rows the model was trained on"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_ensemble_scored_on_its_training_rows_says_so() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", Some("a,b,y"));
    let test = three_class_csv(t.path(), "t.csv", Some("a,b,y"));
    let ens = t.path().join("ens");
    trained_quick(
        &data,
        &ens,
        &["--target", "y", "--ensemble", "2", "--test-data", s(&test)],
    );
    for model in [ens.clone(), ens.join("member-1")] {
        let o = ant(&["eval", "--model", s(&model), "--data", s(&data)]);
        assert!(
            stderr(&o).contains("these are the rows the model was trained on"),
            "{}",
            stderr(&o)
        );
    }
}

/// A test file of the limited training rows (`--train-limit`) is the training rows.
#[test]
fn a_test_file_of_the_limited_training_rows_is_the_training_rows() {
    let t = tempfile::tempdir().unwrap();
    let plain = three_class_csv(t.path(), "plain.csv", None);
    let first: String = std::fs::read_to_string(&plain)
        .unwrap()
        .lines()
        .take(100)
        .map(|l| format!("{l}\n"))
        .collect();
    let first = write(t.path(), "first.csv", first);
    let o = trained_quick(
        &plain,
        &t.path().join("l"),
        &[
            "--target",
            "2",
            "--train-limit",
            "100",
            "--test-data",
            s(&first),
        ],
    );
    assert!(
        stderr(&o).contains("these are the rows the model was trained on"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_same_rows_in_other_bytes_are_scored_on_the_held_out_rows() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let m = t.path().join("m");
    trained_quick(&data, &m, &["--target", "label"]);
    let crlf = t.path().join("crlf.csv");
    let text = std::fs::read_to_string(&data)
        .unwrap()
        .replace('\n', "\r\n");
    std::fs::write(&crlf, text).unwrap();
    let own = json_of(&ant(&[
        "eval",
        "--model",
        s(&m),
        "--data",
        s(&data),
        "--json",
    ]));
    let o = ant(&["eval", "--model", s(&m), "--data", s(&crlf), "--json"]);
    let other = json_of(&o);
    assert!(!stderr(&o).contains("scoring all"), "{}", stderr(&o));
    assert_eq!(own["test_samples"], other["test_samples"]);
    assert_eq!(own["multi_path_error"], other["multi_path_error"]);
    // Other rows are still scored whole, and said so.
    let fewer = t.path().join("fewer.csv");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(
        &fewer,
        text.lines().take(100).collect::<Vec<_>>().join("\n"),
    )
    .unwrap();
    let o = ant(&["eval", "--model", s(&m), "--data", s(&fewer)]);
    assert!(
        stderr(&o).contains("scoring all its 99 rows"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_same_bytes_read_into_other_rows_are_not_split_as_the_training_file() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", None);
    let model = t.path().join("m");
    trained_quick(&data, &model, &["--target", "2"]);
    let eval = |more: &[&str]| {
        let mut args = vec!["eval", "--model", s(&model), "--data", s(&data), "--json"];
        args.extend_from_slice(more);
        let o = ant(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["test_samples"].as_u64().unwrap(), stderr(&o))
    };
    let (held_out, err) = eval(&[]);
    assert_eq!(held_out, 36, "{err}");
    assert!(!err.contains("warning"), "{err}");
    // A row fewer: no longer the model's split, so every row is scored, and said.
    let (all, err) = eval(&["--skip-rows", "1"]);
    assert_eq!(all, 179, "{err}");
    assert!(
        err.contains("read into other rows than its training's"),
        "{err}"
    );
}

#[test]
fn a_models_own_test_file_is_read_as_training_read_it() {
    let t = tempfile::tempdir().unwrap();
    let plain = three_class_csv(t.path(), "plain.csv", None);
    let pandas = three_class_csv(t.path(), "pandas.csv", Some("0,1,2"));
    let m = t.path().join("m");
    trained_quick(&plain, &m, &["--target", "2", "--test-data", s(&pandas)]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(m.join("report.json")).unwrap()).unwrap();
    let o = ant(&["eval", "--model", s(&m), "--data", s(&pandas), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["test_samples"], report["test_samples"]);
    assert_eq!(v["multi_path_error"], report["multi_path_error"]);
}
