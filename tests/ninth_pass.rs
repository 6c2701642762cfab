//! What session 29's hostile pass found, kept found: a pruned model reporting the
//! unpruned one's validation scores; `plot --out -` of an ensemble writing `--member-K`
//! files; a model saved into a part of an ensemble or a run; the same rows in other
//! bytes scored whole by `eval`; JSON read as CSV; a first data row listed as column
//! names; a pandas index trained as a feature; a constant regression target trained
//! without a word; a closed stdin read as `/dev/null`; names that are only an ending.

use std::path::{Path, PathBuf};

mod common;

use common::*;

const QUICK: &str = "train --preset tabular --epochs-node 2 --refine-epochs 1";

/// 120 rows of two features and a class named by words (`x,y,label`): two blobs.
fn blobs(dir: &Path) -> PathBuf {
    let x = uniform(120, 2, 3);
    let mut text = String::from("x,y,label\n");
    for (i, r) in x.chunks(2).enumerate() {
        let (c, shift) = if i % 2 == 0 {
            ("left", 0.0)
        } else {
            ("right", 3.0)
        };
        text.push_str(&format!("{},{},{c}\n", r[0] + shift, r[1]));
    }
    let p = dir.join("blobs.csv");
    std::fs::write(&p, text).unwrap();
    p
}

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

fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_pruned_model_reports_its_own_validation_scores() {
    let t = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/small/iris.csv");
    // The hostile pass's tree: iris grows routers on seed 1 (machine B); the first seed
    // whose pruning cuts a branch, wherever a seed's tree differs.
    let (m, p, summary) = (1..=6)
        .find_map(|seed| {
            let (m, p) = (
                t.path().join(format!("m{seed}")),
                t.path().join(format!("p{seed}")),
            );
            let seed = seed.to_string();
            let o = ant(&[
                "train",
                "--preset",
                "tabular",
                "--data",
                s(&data),
                "--target",
                "4",
                "--task",
                "classification",
                "--width",
                "4",
                "--epochs-node",
                "20",
                "--refine-epochs",
                "20",
                "--batch-size",
                "16",
                "--lr",
                "0.01",
                "--seed",
                &seed,
                "--router-balance",
                "1",
                "--router-confidence",
                "0.2",
                "--out",
                s(&m),
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            let o = ant(&[
                "prune",
                "--model",
                s(&m),
                "--data",
                s(&data),
                "--min-reach",
                "0.5",
                "--out",
                s(&p),
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            let summary: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(p.join("prune.json")).unwrap())
                    .unwrap();
            (summary["nodes_removed"].as_u64().unwrap() > 0).then_some((m, p, summary))
        })
        .expect("a seed whose tree prunes");
    let eval = json_of(&ant(&[
        "eval",
        "--model",
        s(&p),
        "--data",
        s(&data),
        "--json",
    ]));
    let before = json_of(&ant(&[
        "eval",
        "--model",
        s(&m),
        "--data",
        s(&data),
        "--json",
    ]));
    let after = summary["valid_multi_path_after"].as_f64().unwrap();
    assert!(
        (eval["valid_metric"].as_f64().unwrap() - after).abs() < 1e-9,
        "{eval} {summary}"
    );
    assert_ne!(
        eval["valid_nll"], before["valid_nll"],
        "the pruned tree's own NLL"
    );
}

#[test]
fn an_ensembles_pictures_never_go_to_standard_output() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let e = t.path().join("e");
    assert!(
        train(&data, &e, &["--ensemble", "2", "--max-depth", "1"])
            .status
            .success()
    );
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

#[test]
fn no_model_is_saved_into_a_part_of_an_ensemble_or_a_run() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let e = t.path().join("e");
    assert!(
        train(&data, &e, &["--ensemble", "2", "--max-depth", "1"])
            .status
            .success()
    );
    let member = e.join("member-0");
    let before = std::fs::read(member.join("tree.json")).unwrap();
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    for out in [member.clone(), e.join("member-5"), m.join("grown")] {
        let o = train(&data, &out, &["--max-depth", "1", "--force"]);
        assert_clean_error(&o, &["is part of the ant directory"]);
    }
    assert_eq!(std::fs::read(member.join("tree.json")).unwrap(), before);
    assert!(!e.join("member-5").exists());
    // A member replaced by hand is said not to be the ensemble's by `inspect`, as `eval`
    // refuses it.
    let other = t.path().join("other");
    assert!(
        train(&data, &other, &["--max-depth", "1", "--seed", "7"])
            .status
            .success()
    );
    std::fs::remove_dir_all(&member).unwrap();
    std::fs::rename(&other, &member).unwrap();
    let o = ant(&["inspect", "--model", s(&e)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("not this ensemble's member"), "{text}");
}

#[test]
fn the_same_rows_in_other_bytes_are_scored_on_the_held_out_rows() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
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
fn tables_that_are_not_what_they_seem_are_named_so() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    // JSON is said to be JSON, not a quote error.
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
    // A file without a header: its first row is not listed as the columns' names.
    let bare = t.path().join("bare.csv");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(&bare, text.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
    let o = train(&bare, &t.path().join("b"), &[]);
    assert_clean_error(&o, &["bare.csv", "no header row", "0-based column index"]);
    // pandas' index column (an empty name) is refused, not trained on.
    let indexed = t.path().join("indexed.csv");
    let rows: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => format!(",{l}"),
            _ => format!("{},{l}", i - 1),
        })
        .collect();
    std::fs::write(&indexed, rows.join("\n")).unwrap();
    let o = train(&indexed, &t.path().join("i"), &[]);
    assert_clean_error(&o, &["indexed.csv", "column 0", "no name", "index=False"]);
    assert!(!t.path().join("i").exists());
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
    // Once for an ensemble too, not once a member (the third attack).
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

#[test]
fn predict_reads_and_writes_the_standard_streams_as_said() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    let predict = |more: &[&str], stdin: std::process::Stdio| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
            .args(["predict", "--model", s(&m)])
            .args(more)
            .current_dir(t.path())
            .stdin(stdin)
            .output()
            .unwrap()
    };
    // `--output -` is standard output, in the format asked.
    let o = predict(
        &["--input", s(&data), "--output", "-", "--format", "jsonl"],
        std::process::Stdio::null(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 120);
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
    // A name that is only an ending names no file.
    let o = predict(
        &["--input", s(&data), "--output", ".csv"],
        std::process::Stdio::null(),
    );
    assert_clean_error(&o, &[".csv", "only an ending", "NAME.csv"]);
    let o = ant(&[
        "plot",
        "--model",
        s(&m),
        "--out",
        &format!("{}/.dot", t.path().display()),
    ]);
    assert_clean_error(&o, &[".dot", "only an ending"]);
    // A closed standard input is said to be closed (`<&-`).
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

#[test]
fn a_value_far_beyond_training_is_said_in_one_row() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    let one = t.path().join("one.csv");
    std::fs::write(&one, "x,y\n1e30,0.5\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("another scale") && e.contains("reaches 1e30..1e30"),
        "{e}"
    );
    // A row inside the training range says nothing.
    std::fs::write(&one, "x,y\n1,0.5\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(!stderr(&o).contains("another scale"), "{}", stderr(&o));
}

/// The attack on this session's fixes: other routes into an ensemble's or a run's parts,
/// a user's own folders taken for ant's, and checks too broad or too narrow.
#[test]
fn parts_of_ant_directories_are_refused_by_every_route_and_only_theirs() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let e = t.path().join("e");
    assert!(
        train(
            &data,
            &e,
            &["--ensemble", "3", "--member", "0", "--max-depth", "1"]
        )
        .status
        .success()
    );
    // Another ensemble into the missing member 2's slot, and its own member 2 still trains.
    let o = train(
        &data,
        &e.join("member-2"),
        &["--ensemble", "2", "--max-depth", "1"],
    );
    assert_clean_error(&o, &["is part of the ant directory"]);
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    // Below a part, not only at it; a web export as a prune.
    let deep = e.join("checkpoint").join("x");
    let o = ant(&[
        "prune",
        "--model",
        s(&m),
        "--data",
        s(&data),
        "--min-reach",
        "0",
        "--out",
        s(&deep),
    ]);
    assert_clean_error(&o, &["is part of the ant directory", "checkpoint"]);
    let o = ant(&[
        "export",
        "--model",
        s(&m),
        "--format",
        "web",
        "--out",
        s(&m.join("checkpoint")),
    ]);
    assert_clean_error(&o, &["is part of the ant directory"]);
    assert!(!m.join("checkpoint").exists() && !e.join("checkpoint").exists());
    assert!(
        train(
            &data,
            &e,
            &["--ensemble", "3", "--member", "2", "--max-depth", "1"]
        )
        .status
        .success()
    );
    // A user's folder with a checkpoint/ of its own (PyTorch's) or another tree.json is no
    // ant directory: `grown` and `member-3` there are ordinary names.
    let proj = t.path().join("proj");
    std::fs::create_dir_all(proj.join("checkpoint")).unwrap();
    std::fs::write(proj.join("checkpoint").join("epoch10.pt"), "weights").unwrap();
    std::fs::write(proj.join("tree.json"), "{\"name\": \"phylo\"}").unwrap();
    for name in ["grown", "member-3"] {
        let o = train(&data, &proj.join(name), &["--max-depth", "1"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
}

#[test]
fn checks_of_tables_and_names_are_neither_too_broad_nor_too_narrow() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let text = std::fs::read_to_string(&data).unwrap();
    let body: Vec<&str> = text.lines().skip(1).collect();
    let with_header = |name: &str, header: &str| {
        let p = t.path().join(name);
        std::fs::write(&p, format!("{header}\n{}\n", body.join("\n"))).unwrap();
        p
    };
    // A header whose first cell is a JSON value is still a header.
    let brackets = with_header("brackets.csv", "[1],{},label");
    assert!(
        train(&brackets, &t.path().join("b"), &["--max-depth", "1"])
            .status
            .success()
    );
    // pandas' name for an unnamed column read back, as the empty name.
    let rows: Vec<String> = body
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{i},{l}"))
        .collect();
    let p = t.path().join("unnamed.csv");
    std::fs::write(&p, format!("Unnamed: 0,x,y,label\n{}\n", rows.join("\n"))).unwrap();
    assert_clean_error(
        &train(&p, &t.path().join("u"), &[]),
        &["column 0", "no name", "index=False"],
    );
    // A table of words with a wrong target name lists its columns.
    let words = t.path().join("words.csv");
    std::fs::write(&words, "color,size,kind\nred,big,a\nblue,small,b\n").unwrap();
    let o = ant_with(
        QUICK,
        &[
            "--data",
            s(&words),
            "--out",
            s(&t.path().join("w")),
            "--target",
            "Label",
            "--task",
            "classification",
        ],
    );
    assert_clean_error(
        &o,
        &[
            "no column named 'Label'",
            "columns are: 'color', 'size', 'kind'",
        ],
    );
    // Names ending in a number with a unit or a version are no file kinds.
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    for name in ["tree-width-0.5x", "tree-v2.0rc1"] {
        let o = ant(&[
            "plot",
            "--model",
            s(&m),
            "--out",
            s(&t.path().join(name)),
            "--format",
            "dot",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
    // A name that is only an ending, whatever says the format.
    let o = ant(&[
        "export",
        "--model",
        s(&m),
        "--format",
        "onnx",
        "--out",
        s(&t.path().join(".onnx")),
    ]);
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

#[test]
fn a_rare_value_of_a_feature_almost_always_one_value_is_no_other_scale() {
    let t = tempfile::tempdir().unwrap();
    let x = uniform(1000, 2, 9);
    let mut text = String::from("a,edge,label\n");
    for (i, r) in x.chunks(2).enumerate() {
        // `edge` is 0 but twice in 1,000 rows, as a pixel at the border of digits.
        let edge = u8::from(i == 17 || i == 501);
        text.push_str(&format!(
            "{},{edge},{}\n",
            r[0],
            ["p", "q"][usize::from(r[1] > 0.5)]
        ));
    }
    let data = t.path().join("edge.csv");
    std::fs::write(&data, text).unwrap();
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    let one = t.path().join("one.csv");
    std::fs::write(&one, "a,edge\n0.5,110\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("another scale"), "{}", stderr(&o));
    std::fs::write(&one, "a,edge\n110,0\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(
        stderr(&o).contains("feature 0 reaches 110..110"),
        "{}",
        stderr(&o)
    );
}

/// The third attack on this session's fixes.
#[test]
fn the_third_attack_on_outputs_tables_and_scales() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    let plot = |out: &Path| ant(&["plot", "--model", s(&m), "--out", s(out), "--format", "dot"]);
    // A real format after a digit is still a format: the user's archive is kept.
    let archive = t.path().join("backup2.7z");
    std::fs::write(&archive, "archive").unwrap();
    assert_clean_error(&plot(&archive), &["ends in .7z"]);
    assert_eq!(std::fs::read_to_string(&archive).unwrap(), "archive");
    // A hidden file's name that is no ending of the kind written is a name.
    assert!(plot(&t.path().join(".tree")).status.success());
    // A file under a member's name in a real ensemble, new or not, is refused.
    let e = t.path().join("e");
    assert!(
        train(
            &data,
            &e,
            &["--ensemble", "3", "--member", "0", "--max-depth", "1"]
        )
        .status
        .success()
    );
    assert_clean_error(
        &plot(&e.join("member-2")),
        &["is part of the ant directory"],
    );
    // ... and a user's folder with a checkpoint/ of its own is not ant's.
    let proj = t.path().join("proj");
    std::fs::create_dir_all(proj.join("checkpoint")).unwrap();
    let records = proj.join("records.jsonl");
    let o = ant(&[
        "predict",
        "--model",
        s(&m),
        "--input",
        s(&data),
        "--output",
        s(&records),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Python's json.dump, with a NaN, pretty or cut short, is JSON.
    for (name, text) in [
        ("nan.json", "[{\"x\": NaN, \"y\": 1, \"label\": 0}]"),
        ("pretty.json", "[\n  {\n    \"x\": 1,"),
    ] {
        let p = t.path().join(name);
        std::fs::write(&p, text).unwrap();
        assert_clean_error(&train(&p, &t.path().join("j"), &[]), &[name, "holds JSON"]);
    }
    // pandas' header of column numbers is listed, as `--target 2` reads it.
    let numbered = t.path().join("numbered.csv");
    let text = std::fs::read_to_string(&data).unwrap();
    let body: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&numbered, format!("0,1,2\n{}\n", body.join("\n"))).unwrap();
    assert_clean_error(
        &train(&numbered, &t.path().join("n"), &[]),
        &["columns are: '0', '1', '2'"],
    );
    // A what-if sweep of one feature inside the training range is on its scale.
    let sweep = t.path().join("sweep.csv");
    let rows: Vec<String> = (0..10).map(|k| format!("1.5,0.{k}01")).collect();
    std::fs::write(&sweep, format!("x,y\n{}\n", rows.join("\n"))).unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&sweep)]);
    assert!(
        o.status.success() && !stderr(&o).contains("another scale"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_outlier_in_training_does_not_hide_another_scale() {
    let t = tempfile::tempdir().unwrap();
    let x = uniform(400, 2, 11);
    let mut text = String::from("income,age,label\n");
    for (i, r) in x.chunks(2).enumerate() {
        let income = if i == 0 {
            5e6
        } else {
            2e4 + 8e4 * f64::from(r[0])
        };
        text.push_str(&format!(
            "{income:.0},{},{}\n",
            20.0 + 50.0 * r[1],
            u8::from(income > 6e4)
        ));
    }
    let data = t.path().join("income.csv");
    std::fs::write(&data, text).unwrap();
    let m = t.path().join("m");
    let o = ant_with(
        QUICK,
        &[
            "--data",
            s(&data),
            "--out",
            s(&m),
            "--target",
            "label",
            "--task",
            "classification",
            "--max-depth",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let one = t.path().join("one.csv");
    std::fs::write(&one, "income,age\n5000000000,40\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(
        stderr(&o).contains("feature 0 reaches 5e9..5e9"),
        "{}",
        stderr(&o)
    );
}

/// The fourth attack: what the third round's revisions refused or missed.
#[test]
fn the_fourth_attack_on_parts_json_names_and_scales() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs(t.path());
    let e = t.path().join("e");
    assert!(
        train(&data, &e, &["--ensemble", "2", "--max-depth", "1"])
            .status
            .success()
    );
    // A folder inside a member harms nothing.
    let inside = e.join("member-0").join("pruned");
    let o = ant(&[
        "prune",
        "--model",
        s(&e.join("member-0")),
        "--data",
        s(&data),
        "--min-reach",
        "0",
        "--out",
        s(&inside),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(ant(&["inspect", "--model", s(&e)]).status.success());
    // A header whose first cell is a JSON array of a string is a header.
    let text = std::fs::read_to_string(&data).unwrap();
    let body: Vec<&str> = text.lines().skip(1).collect();
    let quoted = t.path().join("quoted.csv");
    std::fs::write(&quoted, format!("[\"a\"],y,label\n{}\n", body.join("\n"))).unwrap();
    assert!(
        train(&quoted, &t.path().join("q"), &["--max-depth", "1"])
            .status
            .success()
    );
    // A common format's ending alone is no name, whatever is written.
    let m = t.path().join("m");
    assert!(train(&data, &m, &["--max-depth", "1"]).status.success());
    let o = ant(&[
        "export",
        "--model",
        s(&m),
        "--format",
        "onnx",
        "--out",
        s(&t.path().join(".csv")),
    ]);
    assert_clean_error(&o, &["only an ending"]);
    // Copies of one row with a little noise are on the training scale ...
    let rows: Vec<String> = (0..50)
        .map(|k| {
            format!(
                "{},{}",
                1.5 + 0.0001 * f64::from(k % 7),
                0.5 + 0.0001 * f64::from(k % 5)
            )
        })
        .collect();
    let near = t.path().join("near.csv");
    std::fs::write(&near, format!("x,y\n{}\n", rows.join("\n"))).unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&near)]);
    assert!(
        o.status.success() && !stderr(&o).contains("another scale"),
        "{}",
        stderr(&o)
    );
    // ... while one feature away from zero, given 100 times smaller, is not: petal
    // lengths in 1..6.9 cm given in metres lie inside 10 ranges and not a range outside.
    let x = uniform(300, 2, 13);
    let petal = |u: f32| 1.0 + 5.9 * (u + 1.0) / 2.0; // uniform() is in -1..1
    let rows: Vec<String> = x
        .chunks(2)
        .map(|r| {
            format!(
                "{},{},{}",
                petal(r[0]),
                r[1],
                ["p", "q"][usize::from(r[1] > 0.5)]
            )
        })
        .collect();
    let petals = t.path().join("petals.csv");
    std::fs::write(
        &petals,
        format!("length,width,label\n{}\n", rows.join("\n")),
    )
    .unwrap();
    let pm = t.path().join("pm");
    let o = ant_with(
        QUICK,
        &[
            "--data",
            s(&petals),
            "--out",
            s(&pm),
            "--target",
            "label",
            "--task",
            "classification",
            "--max-depth",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let metres: Vec<String> = x
        .chunks(2)
        .take(40)
        .map(|r| format!("{},{}", petal(r[0]) / 100.0, r[1]))
        .collect();
    let input = t.path().join("metres.csv");
    std::fs::write(&input, format!("length,width\n{}\n", metres.join("\n"))).unwrap();
    let o = ant(&["predict", "--model", s(&pm), "--input", s(&input)]);
    assert!(stderr(&o).contains("feature 0 varies"), "{}", stderr(&o));
}
