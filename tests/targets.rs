//! What a target column becomes: classes by their labels' exact values (`1` and `1.0`
//! one class, labels past 2^53 apart), text labels as text even where they read as
//! numbers (`inf`), a label that reads as NaN refused, and a constant target trained
//! and said once. (Python's side: `python/tests/test_bad_input.py`.)

use std::path::{Path, PathBuf};

mod common;

use common::*;

const QUICK: &str = "train --preset tabular --epochs-node 2 --refine-epochs 1";

/// `ant train` of a quick tree of depth 1 on `data` into `out`.
fn train(data: &Path, out: &Path, target: &str, task: &str) -> std::process::Output {
    ant_with(
        QUICK,
        &[
            "--max-depth",
            "1",
            "--data",
            s(data),
            "--out",
            s(out),
            "--target",
            target,
            "--task",
            task,
        ],
    )
}

/// A table of `rows` (text after the header) in `dir`.
fn table(dir: &Path, name: &str, header: &str, rows: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
    p
}

/// 90 rows `a,b,LABEL` with the labels taken in turn from `labels`.
fn rows(labels: &[&str]) -> Vec<String> {
    uniform(90, 2, 3)
        .chunks(2)
        .enumerate()
        .map(|(i, r)| {
            let (a, b) = (f64::from(r[0]), f64::from(r[1]));
            format!("{a:e},{b:e},{}", labels[i % labels.len()])
        })
        .collect()
}

fn class_names(model: &Path) -> Vec<String> {
    let tree: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model.join("tree.json")).unwrap()).unwrap();
    serde_json::from_value(tree["class_names"].clone()).unwrap()
}

#[test]
fn a_label_that_reads_as_nan_is_refused_not_made_a_class() {
    let t = tempfile::tempdir().unwrap();
    let mut r = rows(&["0", "1"]);
    r[5] = r[5]
        .rsplit_once(',')
        .map(|(x, _)| format!("{x},nan"))
        .unwrap();
    let data = table(t.path(), "n.csv", "a,b,y", &r);
    let out = t.path().join("m");
    // numpy's savetxt writes a missing label so; "inf" is no label either.
    assert_clean_error(
        &train(&data, &out, "y", "classification"),
        &["n.csv", "line 7", "not finite"],
    );
    assert!(!out.exists());
}

#[test]
fn labels_are_classes_by_their_exact_value() {
    let t = tempfile::tempdir().unwrap();
    // One f64 (2^53 + 1 rounds to 2^53), two labels; `1` and `1.0` one.
    let labels = ["9007199254740993", "9007199254740992", "1", "1.0"];
    let data = table(t.path(), "b.csv", "a,b,y", &rows(&labels));
    let out = t.path().join("m");
    let o = train(&data, &out, "y", "classification");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        class_names(&out),
        ["1", "9007199254740992", "9007199254740993"]
    );
}

#[test]
fn text_labels_may_read_as_non_finite_numbers() {
    let t = tempfile::tempdir().unwrap();
    // Grades `inf` and `sup` are text: only among numbers is `inf` a missing value.
    let data = table(t.path(), "g.csv", "a,b,grade", &rows(&["sup", "inf"]));
    let m = t.path().join("m");
    let o = train(&data, &m, "grade", "classification");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(class_names(&m), ["inf", "sup"]);
}

#[test]
fn a_constant_target_is_said() {
    let t = tempfile::tempdir().unwrap();
    let x = uniform(60, 2, 5);
    let mut text = String::from("a,b,y\n");
    for r in x.chunks(2) {
        text.push_str(&format!("{},{},5\n", r[0], r[1]));
    }
    let data = t.path().join("flat.csv");
    std::fs::write(&data, text).unwrap();
    let m = t.path().join("m");
    let args = [
        "--data",
        s(&data),
        "--out",
        s(&m),
        "--target",
        "y",
        "--task",
        "regression",
    ];
    let o = ant_with(QUICK, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    // Once for an ensemble too, not once a member.
    let e = t.path().join("e");
    let mut members = args.to_vec();
    members[3] = s(&e);
    members.extend(["--ensemble", "3"]);
    let o2 = ant_with(QUICK, &members);
    assert!(o2.status.success(), "{}", stderr(&o2));
    assert_eq!(
        stderr(&o2).matches("all one value").count(),
        1,
        "{}",
        stderr(&o2)
    );
    let said = stderr(&o)
        .matches("the training targets are all one value (5)")
        .count();
    assert_eq!(said, 1, "{}", stderr(&o));
}
