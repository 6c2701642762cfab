//! The standard streams and pipes: `predict` reads standard input and writes standard
//! output for `-`, a closed standard input is said to be closed, an ensemble's pictures
//! never go to standard output, and an ensemble's members cannot share one read of a
//! pipe. On standard error, an error is one line (a line break in a name included) and
//! the library's warnings reach the command line, one line each, whatever `RUST_LOG`
//! names besides `ant`.

mod common;

use common::*;

#[test]
fn predict_reads_standard_input_for_a_dash() {
    use std::io::Write;
    let (_t, data, m) = blobs_model();
    let from_file = ant(&["predict", "--model", s(&m), "--input", s(&data)]);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(["predict", "--model", s(&m), "--input", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let rows = std::fs::read(&data).unwrap();
    child.stdin.take().unwrap().write_all(&rows).unwrap();
    let piped = child.wait_with_output().unwrap();
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert_eq!(piped.stdout, from_file.stdout);
}

/// `--output -` is standard output, in the format asked.
#[test]
fn predict_writes_standard_output_for_a_dash_in_the_format_asked() {
    let (t, data, m) = blobs_model();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(["predict", "--model", s(&m)])
        .args(["--input", s(&data), "--output", "-", "--format", "jsonl"])
        .current_dir(t.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 120);
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
}

/// A closed standard input (`<&-`) is said to be closed, not read as `/dev/null`.
#[test]
fn a_closed_standard_input_is_said_to_be_closed() {
    let (_t, _data, m) = blobs_model();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec \"$0\" predict --model '{}' --input - <&-",
            m.display()
        ))
        .arg(env!("CARGO_BIN_EXE_ant"))
        .output()
        .unwrap();
    assert_clean_error(&o, &["<stdin>", "is closed"]);
}

/// `plot --out -` of an ensemble is refused: its members' pictures would be files.
#[test]
fn an_ensembles_pictures_never_go_to_standard_output() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let e = t.path().join("e");
    ok(&train_blobs(&data, &e, &["--ensemble", "2"]));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args([
            "plot",
            "--model",
            s(&e),
            "--data",
            s(&data),
            "--out",
            "-",
            "--format",
            "svg",
        ])
        .current_dir(t.path())
        .output()
        .unwrap();
    assert_clean_error(&o, &["standard output", "member"]);
    let names: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("member")), "{names:?}");
}

/// Two members from a pipe: refused before the first trains.
#[test]
fn ensemble_members_cannot_share_one_read_of_a_pipe() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let ens = t.path().join("ens");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec \"$0\" train --preset tabular --target y --task classification --epochs-node 2 \
             --refine-epochs 1 --max-depth 2 --ensemble 2 --data <(cat '{}') --out '{}'",
            data.display(),
            ens.display()
        ))
        .arg(env!("CARGO_BIN_EXE_ant"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("not a regular file"), "{e}");
    assert!(!ens.join("member-0").join("tree.json").exists());
}

#[test]
fn a_line_break_in_a_name_stays_in_one_error_line() {
    let t = tempfile::tempdir().unwrap();
    let odd = t.path().join("evil\nerror: other.csv");
    std::fs::write(&odd, "a,b\n1,x\n").unwrap();
    let o = ant_with(
        QUICK,
        &[
            "--data",
            s(&odd),
            "--target",
            "b",
            "--task",
            "classification",
            "--out",
            s(&t.path().join("m")),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("evil\\nerror: other.csv"), "{e}");
}

/// The library's warnings (here of the data reader: scores on the training rows, from
/// training itself) reach the command line, one line each, as the command's own.
#[test]
fn the_librarys_warnings_reach_the_command_line_one_line_each() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", Some("a,b,y"));
    let copy = t.path().join("copy.csv");
    std::fs::copy(&data, &copy).unwrap();
    let o = ant_with(
        QUICK,
        &[
            "--data",
            s(&data),
            "--out",
            s(&t.path().join("m")),
            "--task",
            "classification",
            "--target",
            "y",
            "--test-data",
            s(&copy),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: ")
            && err.contains("copy.csv: these are the rows the model was trained on"),
        "{err}"
    );
    // One line per warning, as the command's own (no timestamps, no module paths).
    assert!(!err.contains("WARN") && !err.contains("ant::data"), "{err}");
}

#[test]
fn warnings_stay_when_the_log_filter_names_other_crates() {
    let t = tempfile::tempdir().unwrap();
    let data = three_class_csv(t.path(), "d.csv", Some("a,b,y"));
    let copy = t.path().join("copy.csv");
    std::fs::copy(&data, &copy).unwrap();
    let model = t.path().join("m");
    let args = ["--data", s(&data), "--out", s(&model), "--target", "y"];
    let run = |log: &str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ant"));
        c.args(QUICK.split_whitespace())
            .args(args)
            .args(["--task", "classification", "--force"]);
        c.args(["--test-data", s(&copy)]).env("RUST_LOG", log);
        stderr(&c.output().unwrap())
    };
    for log in ["", "wgpu_core=off", "hyper=info"] {
        assert!(
            run(log).contains("these are the rows the model was trained on"),
            "RUST_LOG={log}"
        );
    }
    assert!(
        !run("ant=error").contains("warning"),
        "RUST_LOG=ant=error hides them"
    );
}

/// A run whose data comes from a pipe cannot read it again to resume: it says so at the
/// start, rather than promising `--resume`; a run of a file promises it.
#[test]
fn a_run_fed_from_a_pipe_says_it_cannot_be_resumed() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let out = t.path().join("piped");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args([
            "train",
            "--preset",
            "tabular",
            "--data",
            "/dev/stdin",
            "--target",
            "y",
        ])
        .args([
            "--task",
            "classification",
            "--epochs-node",
            "1",
            "--refine-epochs",
            "1",
        ])
        .args(["--max-depth", "1", "--out", s(&out)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let rows = std::fs::read(&data).unwrap();
    child.stdin.take().unwrap().write_all(&rows).unwrap();
    let piped = child.wait_with_output().unwrap();
    let e = stderr(&piped);
    assert!(piped.status.success(), "{e}");
    assert!(
        e.contains("cannot be resumed") && !e.contains("--resume"),
        "{e}"
    );
    let o = train_cls(&data, &t.path().join("file"), &[]);
    assert!(
        stderr(&o).contains("continue with `ant train --resume"),
        "{}",
        stderr(&o)
    );
}
