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

/// `ant curves` with several `--run`s draws them on one picture, each labelled by the
/// settings that differ between the runs, spelled as flags (a study of `--patience`).
#[test]
fn curves_draw_several_runs_labelled_by_what_differs() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("r.csv");
    let rows: String = (0..120)
        .map(|i| format!("{},{},{}\n", (i * 7) % 11, (i * 3) % 5, i % 3))
        .collect();
    std::fs::write(&data, format!("a,b,y\n{rows}")).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let mut runs = vec![];
    for p in ["1", "2"] {
        let out = t.path().join(format!("p{p}"));
        let o = train_small(&data, &out, &["--patience", p]);
        assert!(o.status.success(), "{}", stderr(&o));
        runs.push(out);
    }
    let svg = t.path().join("both.svg");
    let curves = |a: &Path, b: &Path, out: &Path| {
        ant(&["curves", "--run", &s(a), "--run", &s(b), "--out", &s(out)])
    };
    let o = curves(&runs[0], &runs[1], &svg);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for label in [
        "--patience 1",
        "--patience 2",
        "2 runs: validation over growth and refinement",
    ] {
        assert!(texts.contains(&label), "{label} missing from {texts:?}");
    }
    // Two runs of the same settings: nothing differs, so the directories name them.
    let same = t.path().join("same");
    assert!(
        train_small(&data, &same, &["--patience", "1"])
            .status
            .success()
    );
    let o = curves(&runs[0], &same, &svg);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains(&s(&same)), "the directory labels the run");
    // A run still training (no tree.json yet) is drawn beside a finished one.
    let cut = t.path().join("cut");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args([
            "train",
            "--preset",
            "tabular",
            "--target",
            "y",
            "--task",
            "classification",
        ])
        .args([
            "--epochs-node",
            "3",
            "--refine-epochs",
            "4",
            "--max-depth",
            "2",
        ])
        .args(["--data", &s(&data), "--out", &s(&cut)])
        .env("ANT_FAULT_AFTER_WRITES", "12")
        .output()
        .unwrap();
    assert!(!o.status.success() && !cut.join("tree.json").exists());
    let o = curves(&runs[0], &cut, &svg);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("valid error %")
    );
    // The same run twice is named once.
    let twice = ant(&[
        "curves",
        "--run",
        &s(&runs[0]),
        "--run",
        &s(&runs[0]),
        "--out",
        &s(&svg),
    ]);
    assert_eq!(twice.status.code(), Some(2), "{}", stderr(&twice));
    assert!(stderr(&twice).contains("given twice"), "{}", stderr(&twice));
    // An output that is one of the runs' files is refused, whichever run it is in.
    let o = curves(&runs[0], &runs[1], &runs[1].join("report.json"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// A run keeps the model as growth left it (OUT/grown, an ordinary model directory)
/// beside the refined one, and `ant plot --stage grown` draws it (the paper's Fig. 3);
/// a baseline grows nothing, and says so.
#[test]
fn a_run_keeps_its_grown_model_and_plot_draws_it() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("r.csv");
    let rows: String = (0..150)
        .map(|i| {
            format!(
                "{},{},{}\n",
                (i * 7) % 11,
                (i * 3) % 5,
                usize::from((i * 7) % 11 > 5)
            )
        })
        .collect();
    std::fs::write(&data, format!("a,b,y\n{rows}")).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let out = t.path().join("run");
    let train = |extra: &[&str], out: &Path| train_small(&data, out, extra);
    let o = train(&[], &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let dev = burn::prelude::Device::flex();
    let final_model = ant::Ant::load(&out, &dev).unwrap();
    let grown = ant::Ant::load(out.join("grown"), &dev).unwrap();
    // Refinement trains the grown tree's weights; it never changes its shape.
    assert_eq!(grown.topology(), final_model.topology());
    assert_eq!(grown.meta().decisions, final_model.meta().decisions);
    let tree = |d: &Path| std::fs::read_to_string(d.join("tree.json")).unwrap();
    let svg = t.path().join("g.svg");
    let o = ant(&[
        "plot",
        "--model",
        &s(&out),
        "--stage",
        "grown",
        "--data",
        &s(&data),
        "--out",
        &s(&svg),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    // A file of the user's in grown/ is never deleted with it: a run that would replace
    // the directory is refused before it trains, and the old model stays whole.
    let before = tree(&out.join("grown"));
    assert!(before.contains("ant-model-1"));
    std::fs::write(out.join("grown").join("notes.txt"), "mine").unwrap();
    // A baseline (no growth options: they would do nothing) trained over the run.
    let baseline_over = || {
        let paths = [common::s(&data), common::s(&out)];
        let more = [
            "--data",
            paths[0],
            "--out",
            paths[1],
            "--baseline",
            "linear",
            "--force",
        ];
        common::ant_with(
            "train --preset tabular --target y --task classification --refine-epochs 4",
            &more,
        )
    };
    let o = baseline_over();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));
    assert_eq!(tree(&out.join("grown")), before);
    assert!(ant::Ant::load(&out, &dev).is_ok());
    std::fs::remove_file(out.join("grown").join("notes.txt")).unwrap();
    // A baseline replacing the run (--force) leaves no grown model of another run.
    let o = baseline_over();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !out.join("grown").exists(),
        "the old run's grown model went with it"
    );
    let o = ant(&[
        "plot",
        "--model",
        &s(&out),
        "--stage",
        "grown",
        "--data",
        &s(&data),
        "--out",
        &s(&svg),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("holds no grown model"),
        "{}",
        stderr(&o)
    );
}

/// The iris table with the header `header` (`sl,sw,pl,pw,species`), in `dir`.
fn iris_with_header(dir: &Path, name: &str, header: &str) -> String {
    let body = std::fs::read_to_string(repo("data/small/iris.csv")).unwrap();
    let rows: Vec<String> = body
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let class =
                ["setosa", "versicolor", "virginica"][c[4].trim().parse::<usize>().unwrap()];
            format!("{},{},{},{},{class}", c[0], c[1], c[2], c[3])
        })
        .collect();
    let p = dir.join(name);
    let text = match header {
        "" => format!("{}\n", rows.join("\n")),
        h => format!("{h}\n{}\n", rows.join("\n")),
    };
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const TINY: &str =
    "--epochs-node 2 --refine-epochs 1 --max-depth 2 --target species --task classification";

/// A training header must name each column once (in NFC); names
/// that differ only by Unicode normalisation are the same name; a file without a
/// header is told so, whatever its target column holds.
#[test]
fn column_names_are_unique_compared_in_nfc_and_a_missing_header_is_named() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("m");
    let o_s = out.to_str().unwrap();
    // (p) Duplicate names are refused at training, naming both columns.
    let dup = iris_with_header(t.path(), "dup.csv", "a,a,pl,pw,species");
    let o = common::ant_with(
        &format!("train --preset tabular {TINY}"),
        &["--data", &dup, "--out", o_s],
    );
    assert_clean_error(&o, "'a' twice (columns 0 and 1");
    assert!(!out.exists(), "nothing written");
    // Also when the names differ only by their Unicode form.
    let nfd = "cafe\u{301}";
    let dup = iris_with_header(
        t.path(),
        "dup2.csv",
        &format!("caf\u{e9},{nfd},pl,pw,species"),
    );
    let o = common::ant_with(
        &format!("train --preset tabular {TINY}"),
        &["--data", &dup, "--out", o_s],
    );
    assert_clean_error(&o, "twice");
    // (q) Trained on NFC "café", a table headed with NFD "café" is the same columns.
    let nfc = iris_with_header(t.path(), "nfc.csv", "caf\u{e9},sw,pl,pw,species");
    let o = common::ant_with(
        &format!("train --preset tabular {TINY}"),
        &["--data", &nfc, "--out", o_s],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let decomposed = iris_with_header(t.path(), "nfd.csv", &format!("{nfd},sw,pl,pw,species"));
    let o = ant(&["eval", "--model", o_s, "--data", &decomposed]);
    assert!(o.status.success(), "{}", stderr(&o));
    // (s) A file without its header: eval says so, as predict does.
    let bare = iris_with_header(t.path(), "bare.csv", "");
    let o = ant(&["eval", "--model", o_s, "--data", &bare]);
    assert_clean_error(&o, "has no header row");
}

/// A table given as a pipe (`<(cat iris.csv)`) is read once, and its checksum is that
/// of the bytes read (not the MD5 of nothing, d41d8cd9..., with which `eval` would not
/// know the file and would score every row, training rows included).
#[test]
fn a_piped_table_is_read_once_and_known_by_its_bytes() {
    let t = tempfile::tempdir().unwrap();
    let iris = iris_with_header(t.path(), "iris.csv", "sl,sw,pl,pw,species");
    let out = t.path().join("m");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec \"$0\" train --preset tabular {TINY} --data <(cat '{iris}') --out '{}'",
            out.display()
        ))
        .arg(env!("CARGO_BIN_EXE_ant"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tree.json")).unwrap()).unwrap();
    let md5 = tree["provenance"]["test_split"]["file_md5"]
        .as_str()
        .map(str::to_string);
    let want = ant::store::checksum::md5_hex(&std::fs::read(&iris).unwrap());
    assert_eq!(
        md5.as_deref(),
        Some(want.as_str()),
        "{}",
        tree["provenance"]
    );
    // eval on the file itself scores the held-out rows only, without a warning.
    let o = ant(&[
        "eval",
        "--model",
        out.to_str().unwrap(),
        "--data",
        &iris,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not the file"), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["test_samples"], 30, "{report}");
}

/// `ant train` of the table `data` (target `y`, classification) on a quick schedule into
/// `out`, then `extra` flags.
fn train_small(data: &Path, out: &Path, extra: &[&str]) -> Output {
    let paths = [data.to_str().unwrap(), out.to_str().unwrap()];
    let mut more = vec!["--data", paths[0], "--out", paths[1]];
    more.extend_from_slice(extra);
    common::ant_with(
        "train --preset tabular --target y --task classification --width 8 --epochs-node 3 --refine-epochs 4 --max-depth 2",
        &more,
    )
}
