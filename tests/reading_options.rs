//! How later files are read (`--skip-rows`, `--delimiter`): as the model's training file
//! was read, said where that skips a row, and overridden by the options given; no skip
//! is announced where no row of values is skipped, skips the user asked for are not
//! warned of, and the options are refused where no table is read.

use std::path::Path;

mod common;

use common::*;

/// Asserts that the command succeeded and warned of nothing.
fn assert_quiet(o: &std::process::Output) {
    let e = stderr(o);
    assert!(o.status.success() && !e.contains("warning"), "{e}");
}

#[test]
fn a_training_files_reading_options_are_said_and_can_be_overridden() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", Some("exported by instrument 7"));
    let model = t.path().join("m");
    trained_quick(&data, &model, &["--target", "2", "--skip-rows", "1"]);
    let three: String = first_rows(3, |&(a, b, _)| format!("{a},{b}\n"));
    let new = write(t.path(), "new.csv", three.clone());
    let predict = |input: &Path, more: &[&str]| {
        let mut args = vec!["predict", "--model", s(&model), "--input", s(input)];
        args.extend_from_slice(more);
        predictions(&ant(&args))
    };
    // As the training file was read (the training file itself needs it), not silently.
    let o = ant(&["predict", "--model", s(&model), "--input", s(&new)]);
    assert!(stderr(&o).contains("give --skip-rows 0"), "{}", stderr(&o));
    assert_eq!(predictions(&o).len(), 2);
    let all = predict(&new, &["--skip-rows", "0"]);
    assert_eq!(all.len(), 3);
    let junk = write(
        t.path(),
        "junk.csv",
        format!("exported by instrument 7\n{three}"),
    );
    assert_eq!(predict(&junk, &[]), all);
    let semi = write(t.path(), "semi.csv", three.replace(',', ";"));
    assert_eq!(
        predict(&semi, &["--delimiter", ";", "--skip-rows", "0"]),
        all
    );
}

#[test]
fn reading_options_are_refused_by_a_model_that_reads_no_table() {
    let t = tempfile::tempdir().unwrap();
    let mat = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sarcos_inv_test.mat");
    let model = t.path().join("sarcos");
    let o = ant_with(
        QUICK.replace("tabular", "sarcos").as_str(),
        &[
            "--data",
            s(&mat),
            "--out",
            s(&model),
            "--train-limit",
            "300",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ant(&[
        "eval",
        "--model",
        s(&model),
        "--data",
        s(&mat),
        "--skip-rows",
        "1",
    ]);
    assert_clean_error(&o, &["sarcos", "--delimiter and --skip-rows do not apply"]);
}

#[test]
fn no_skip_is_announced_where_no_row_of_values_is_skipped() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", Some("exported by instrument 7"));
    let model = t.path().join("m");
    trained_quick(&data, &model, &["--target", "2", "--skip-rows", "1"]);
    let o = ant(&["eval", "--model", s(&model), "--data", s(&data)]);
    assert_quiet(&o);
    let onnx = t.path().join("m.onnx");
    let o = ant(&[
        "export",
        "--model",
        s(&model),
        "--format",
        "onnx",
        "--out",
        s(&onnx),
    ]);
    assert_quiet(&o);
    // Where no data file is read, the options would do nothing: refused.
    let o = ant(&[
        "export",
        "--model",
        s(&model),
        "--format",
        "onnx",
        "--out",
        s(&onnx),
        "--skip-rows",
        "0",
    ]);
    assert_clean_error(&o, &["no --data is given"]);
}

#[test]
fn skips_the_user_asked_for_are_not_warned_and_a_header_skipped_is_no_row() {
    let t = tempfile::tempdir().unwrap();
    let pandas = three_class_csv(t.path(), "pandas.csv", Some("0,1,2"));
    let m = t.path().join("m");
    // pandas' header dropped by the training file's skip: its own file reads quietly.
    trained_quick(&pandas, &m, &["--target", "2", "--skip-rows", "1"]);
    let o = ant(&["eval", "--model", s(&m), "--data", s(&pandas)]);
    assert_quiet(&o);
    let plain = three_class_csv(t.path(), "plain.csv", None);
    let o = ant(&[
        "eval",
        "--model",
        s(&m),
        "--data",
        s(&plain),
        "--skip-rows",
        "1",
    ]);
    assert!(
        !stderr(&o).contains("holds values but is skipped"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_header_the_training_files_skip_dropped_is_named_in_the_error() {
    let t = tempfile::tempdir().unwrap();
    let body = std::fs::read_to_string(three_class_csv(t.path(), "d.csv", Some("a,b,y"))).unwrap();
    let junk = write(
        t.path(),
        "junk.csv",
        format!("exported by instrument 7\n{body}"),
    );
    let m = t.path().join("m");
    trained_quick(&junk, &m, &["--target", "y", "--skip-rows", "1"]);
    let headed = three_class_csv(t.path(), "headed.csv", Some("a,b,y"));
    let o = ant(&["eval", "--model", s(&m), "--data", s(&headed)]);
    assert_clean_error(&o, &["headed.csv", "give --skip-rows 0 to read them"]);
    let o = ant(&[
        "eval",
        "--model",
        s(&m),
        "--data",
        s(&headed),
        "--skip-rows",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
