//! The names outputs are written under: a name's ending says its kind (in any case),
//! and an output named as another kind is refused, new or not; a name that is only an
//! ending names no file, whatever the format; a number with a unit or a version before
//! the end is no ending, a real format after a digit is; an ensemble's pictures, one a
//! member beside `--out`, replace no file unasked.

use std::path::Path;
use std::process::Output;

mod common;

use common::*;

/// `ant plot` of `model` as DOT into `out`.
fn plot_dot(model: &Path, out: &str) -> Output {
    ant(&["plot", "--model", s(model), "--out", out, "--format", "dot"])
}

/// `ant export` of `model` as ONNX into `out`.
fn export_onnx(model: &Path, out: &Path) -> Output {
    ant(&[
        "export",
        "--model",
        s(model),
        "--format",
        "onnx",
        "--out",
        s(out),
    ])
}

#[test]
fn an_output_named_as_another_kind_is_refused_new_or_not_and_endings_take_any_case() {
    let (t, data, m) = blobs_model();
    let svg = t.path().join("new.svg");
    let o = ant(&[
        "plot",
        "--model",
        s(&m),
        "--data",
        s(&data),
        "--out",
        s(&svg),
        "--format",
        "png",
    ]);
    assert_clean_error(&o, &["new.svg", "ends in .svg", ".png"]);
    assert!(!svg.exists());
    let bin = t.path().join("model.bin");
    let o = export_onnx(&m, &bin);
    assert_clean_error(&o, &["model.bin", ".onnx"]);
    // The same ending in capitals is the format's, and a second run replaces the first.
    let upper = t.path().join("P.CSV");
    for _ in 0..2 {
        let o = ant(&[
            "predict",
            "--model",
            s(&m),
            "--input",
            s(&data),
            "--output",
            s(&upper),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
}

/// A name that is only an ending names no file: `predict --output .csv` (in the
/// current folder) and `plot --out DIR/.dot`.
#[test]
fn a_name_that_is_only_an_ending_names_no_file() {
    let (t, data, m) = blobs_model();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(["predict", "--model", s(&m)])
        .args(["--input", s(&data), "--output", ".csv"])
        .current_dir(t.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_clean_error(&o, &[".csv", "only an ending", "NAME.csv"]);
    let o = ant(&[
        "plot",
        "--model",
        s(&m),
        "--out",
        &format!("{}/.dot", t.path().display()),
    ]);
    assert_clean_error(&o, &[".dot", "only an ending"]);
}

/// A name that is only an ending, whatever says the format.
#[test]
fn a_name_that_is_only_an_ending_is_refused_whatever_the_format() {
    let (t, data, m) = blobs_model();
    let o = export_onnx(&m, &t.path().join(".onnx"));
    assert_clean_error(&o, &["only an ending"]);
    let o = ant(&[
        "predict",
        "--model",
        s(&m),
        "--input",
        s(&data),
        "--output",
        s(&t.path().join(".csv")),
        "--format",
        "csv",
    ]);
    assert_clean_error(&o, &["only an ending"]);
}

/// A common format's ending alone is no name, whatever is written.
#[test]
fn a_common_formats_ending_alone_is_no_name_whatever_is_written() {
    let (t, _data, m) = blobs_model();
    let o = export_onnx(&m, &t.path().join(".csv"));
    assert_clean_error(&o, &["only an ending"]);
}

/// Names ending in a number with a unit or a version are no file kinds.
#[test]
fn names_ending_in_a_number_with_a_unit_or_a_version_are_no_file_kinds() {
    let (t, _data, m) = blobs_model();
    for name in ["tree-width-0.5x", "tree-v2.0rc1"] {
        let o = plot_dot(&m, s(&t.path().join(name)));
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
}

/// A real format after a digit is still a format: the user's archive is kept.
#[test]
fn a_real_format_after_a_digit_is_a_format_and_the_users_file_is_kept() {
    let (t, _data, m) = blobs_model();
    let archive = t.path().join("backup2.7z");
    std::fs::write(&archive, "archive").unwrap();
    let o = plot_dot(&m, s(&archive));
    assert_clean_error(&o, &["ends in .7z"]);
    assert_eq!(std::fs::read_to_string(&archive).unwrap(), "archive");
}

/// A hidden file's name that is no ending of the kind written is a name.
#[test]
fn a_hidden_files_name_that_is_no_ending_of_the_kind_written_is_a_name() {
    let (t, _data, m) = blobs_model();
    let hidden = t.path().join(".tree");
    let o = plot_dot(&m, s(&hidden));
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn an_ensembles_pictures_replace_no_file_unasked() {
    let t = tempfile::tempdir().unwrap();
    let rows: Vec<String> = uniform(90, 2, 3)
        .chunks(2)
        .enumerate()
        .map(|(i, r)| {
            let (a, b) = (f64::from(r[0]), f64::from(r[1]));
            format!("{a:e},{b:e},{}", ["0", "1"][i % 2])
        })
        .collect();
    let data = t.path().join("e.csv");
    std::fs::write(&data, format!("a,b,y\n{}\n", rows.join("\n"))).unwrap();
    let ens = t.path().join("ens");
    let o = ant_with(
        &format!("{QUICK} --ensemble 2 --target y --task classification"),
        &["--data", s(&data), "--out", s(&ens)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mine = t.path().join("pic-member-1.dot");
    std::fs::write(&mine, "my notes").unwrap();
    let out = t.path().join("pic.dot");
    let plot = |extra: &[&str]| {
        let mut args = vec!["plot", "--model", s(&ens), "--out", s(&out)];
        args.extend_from_slice(extra);
        ant(&args)
    };
    assert_clean_error(&plot(&[]), &["pic-member-1.dot", "exists", "--force"]);
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes");
    // Checked before the first is drawn.
    assert!(!t.path().join("pic-member-0.dot").exists());
    let o = plot(&["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .starts_with("digraph")
    );
    // An --out that names a directory names no file to put the members beside.
    for dir_like in [
        format!("{}/", t.path().join("sub").display()),
        "..".to_string(),
    ] {
        let o = plot_dot(&ens, &dir_like);
        assert_clean_error(&o, &["names a directory"]);
    }
}
