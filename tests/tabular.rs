//! `ant train --preset tabular --target ...` on scikit-learn's bundled data sets (real
//! data, reshaped here into the layouts a user would bring), then `ant eval` and
//! `ant predict`: each must clearly beat a constant predictor.

use std::io::Read;
use std::path::{Path, PathBuf};

use ant::Targets;
use ant::TaskKind;
use ant::data::source::load_source;
use ant::data::tabular::{Separator, TargetSpec};

mod common;
use common::ant;

/// scikit-learn's bundled tables, shipped in `data/small`.
fn small(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/small")
        .join(name)
}

fn read_text(p: &Path) -> String {
    let raw = std::fs::read(p).unwrap();
    let mut s = String::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(raw.as_slice())
            .read_to_string(&mut s)
            .unwrap();
    } else {
        s = String::from_utf8(raw).unwrap();
    }
    s
}

/// Quick schedule: each training run takes a few seconds.
const QUICK: [&str; 10] = [
    "--width",
    "32",
    "--epochs-node",
    "30",
    "--refine-epochs",
    "30",
    "--max-depth",
    "2",
    "--batch-size",
    "64",
];

/// Trains with `extra` flags, evaluates with `eval --json`, and returns the JSON.
fn train_and_eval(data: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let mut args = vec!["train", "--preset", "tabular", "--data", d, "--out", o];
    args.extend_from_slice(extra);
    args.extend_from_slice(&QUICK);
    let r = ant(&args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let e = ant(&["eval", "--model", o, "--data", d, "--json"]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    serde_json::from_slice(&e.stdout).unwrap()
}

/// Test error (%) of always predicting the training split's majority class, or the
/// test MSE of predicting the training mean: what the model must clearly beat.
fn constant_baseline(data: &Path, spec: &TargetSpec) -> f64 {
    let s = load_source(data, None, 0.2, 0, Some(spec), None).unwrap();
    match (s.train.targets(), s.test.targets()) {
        (
            Targets::Classes {
                labels, n_classes, ..
            },
            Targets::Classes { labels: test, .. },
        ) => {
            let mut count = vec![0usize; *n_classes];
            labels.iter().for_each(|&l| count[l as usize] += 1);
            let major = (0..*n_classes).max_by_key(|&c| count[c]).unwrap() as u32;
            100.0 * test.iter().filter(|&&l| l != major).count() as f64 / test.len() as f64
        }
        (Targets::Values { values, .. }, Targets::Values { values: test, .. }) => {
            let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
            test.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / test.len() as f64
        }
        _ => unreachable!(),
    }
}

fn spec(column: &str, task: TaskKind, delimiter: Option<Separator>, skip: usize) -> TargetSpec {
    let mut spec = TargetSpec::new(column, task);
    spec.delimiter = delimiter;
    spec.skip_rows = skip;
    spec
}

#[test]
fn iris_with_a_header_and_text_labels_then_predict() {
    let dir = tempfile::tempdir().unwrap();
    // Header row, species names instead of 0/1/2, label in the first column.
    let text = read_text(&small("iris.csv"));
    let mut lines = text.lines();
    let meta: Vec<&str> = lines.next().unwrap().split(',').collect();
    let names = &meta[2..5];
    let mut csv = String::from("species,sepal length,sepal width,petal length,petal width\n");
    let mut features_only = String::from("sepal length,sepal width,petal length,petal width\n");
    let mut truth = vec![];
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let name = names[f[4].parse::<usize>().unwrap()];
        csv.push_str(&format!("{name},{}\n", f[..4].join(",")));
        features_only.push_str(&format!("{}\n", f[..4].join(",")));
        truth.push(name.to_string());
    }
    let data = dir.path().join("iris.csv");
    std::fs::write(&data, csv).unwrap();
    let out = dir.path().join("model");
    let args = ["--target", "species", "--task", "classification"];
    let v = train_and_eval(&data, &out, &args);
    let base = constant_baseline(&data, &spec("species", TaskKind::Classification, None, 0));
    let err = v["multi_path_error"].as_f64().unwrap();
    assert_eq!(v["test_samples"], 30);
    eprintln!("iris: error {err}% vs constant {base}%");
    assert!(
        base > 50.0 && err < 15.0,
        "iris: error {err}% vs constant {base}%"
    );

    // The class names are saved in the model.
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tree.json")).unwrap()).unwrap();
    assert_eq!(
        tree["class_names"],
        serde_json::json!(["setosa", "versicolor", "virginica"])
    );

    // predict: rows without the target column, JSON lines, class names out.
    let feats = dir.path().join("new.csv");
    std::fs::write(&feats, features_only).unwrap();
    let jl = dir.path().join("p.jsonl");
    let o = out.to_str().unwrap();
    let r = ant(&[
        "predict",
        "--model",
        o,
        "--input",
        feats.to_str().unwrap(),
        "--output",
        jl.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&jl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 150);
    let right = lines
        .iter()
        .zip(&truth)
        .filter(|(p, t)| p["prediction"] == t.as_str())
        .count();
    assert!(right >= 130, "{right}/150 right");
    for p in &lines {
        let probs: Vec<f64> = p["probabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(probs.len(), 3);
        assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-4);
        assert!(p["leaf"].is_u64() && p["row"].is_u64());
    }

    // predict on the training file itself (target column present), CSV on stdout,
    // single path: same row count, header names the classes.
    let r = ant(&[
        "predict",
        "--model",
        o,
        "--input",
        data.to_str().unwrap(),
        "--single-path",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let csv = String::from_utf8(r.stdout).unwrap();
    let mut csv_lines = csv.lines();
    assert_eq!(
        csv_lines.next().unwrap(),
        "row,prediction,p_setosa,p_versicolor,p_virginica,leaf"
    );
    let rows: Vec<&str> = csv_lines.collect();
    assert_eq!(rows.len(), 150);
    assert!(rows[0].starts_with("0,setosa,"), "{}", rows[0]);
}

#[test]
fn wine_semicolons_and_a_column_index() {
    let dir = tempfile::tempdir().unwrap();
    let text = read_text(&small("wine_data.csv"));
    let body: String = text
        .lines()
        .skip(1)
        .map(|l| l.replace(',', ";") + "\n")
        .collect();
    let data = dir.path().join("wine.csv");
    std::fs::write(&data, body).unwrap();
    let args = [
        "--target",
        "13",
        "--task",
        "classification",
        "--delimiter",
        ";",
    ];
    let v = train_and_eval(&data, &dir.path().join("m"), &args);
    let base = constant_baseline(
        &data,
        &spec(
            "13",
            TaskKind::Classification,
            Some(Separator::Semicolon),
            0,
        ),
    );
    let err = v["multi_path_error"].as_f64().unwrap();
    eprintln!("wine: error {err}% vs constant {base}%");
    assert!(
        base > 50.0 && err < 15.0,
        "wine: error {err}% vs constant {base}%"
    );
}

#[test]
fn breast_cancer_as_shipped_with_skip_rows() {
    let dir = tempfile::tempdir().unwrap();
    let data = small("breast_cancer.csv");
    let args = [
        "--target",
        "30",
        "--task",
        "classification",
        "--skip-rows",
        "1",
    ];
    let v = train_and_eval(&data, &dir.path().join("m"), &args);
    let base = constant_baseline(&data, &spec("30", TaskKind::Classification, None, 1));
    let err = v["multi_path_error"].as_f64().unwrap();
    eprintln!("cancer: error {err}% vs constant {base}%");
    assert!(
        base > 30.0 && err < 10.0,
        "cancer: error {err}% vs constant {base}%"
    );
}

#[test]
fn digits_64_features_from_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let data = small("digits.csv.gz");
    let args = ["--target", "64", "--task", "classification"];
    let v = train_and_eval(&data, &dir.path().join("m"), &args);
    let base = constant_baseline(&data, &spec("64", TaskKind::Classification, None, 0));
    let err = v["multi_path_error"].as_f64().unwrap();
    assert_eq!(v["test_samples"], 359);
    eprintln!("digits: error {err}% vs constant {base}%");
    assert!(
        base > 80.0 && err < 15.0,
        "digits: error {err}% vs constant {base}%"
    );
}

#[test]
fn diabetes_regression_space_separated() {
    let dir = tempfile::tempdir().unwrap();
    // Paste the target (second file) onto the ten features, blank-separated.
    let x = read_text(&small("diabetes_data_raw.csv.gz"));
    let y = read_text(&small("diabetes_target.csv.gz"));
    let body: String = x
        .lines()
        .zip(y.lines())
        .map(|(a, b)| format!("{a}   {b}\n"))
        .collect();
    let data = dir.path().join("diabetes.txt");
    std::fs::write(&data, body).unwrap();
    let args = [
        "--target",
        "10",
        "--task",
        "regression",
        "--delimiter",
        "space",
    ];
    let out = dir.path().join("m");
    let v = train_and_eval(&data, &out, &args);
    let base = constant_baseline(
        &data,
        &spec("10", TaskKind::Regression, Some(Separator::Space), 0),
    );
    let mse = v["multi_path_mse"].as_f64().unwrap();
    eprintln!("diabetes: MSE {mse} vs constant {base}");
    assert!(mse < 0.7 * base, "diabetes: MSE {mse} vs constant {base}");

    // predict: regression values in original units, CSV file.
    let p = dir.path().join("p.csv");
    let r = ant(&[
        "predict",
        "--model",
        out.to_str().unwrap(),
        "--input",
        data.to_str().unwrap(),
        "--output",
        p.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = std::fs::read_to_string(&p).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), "row,prediction,leaf");
    let preds: Vec<f64> = lines
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(preds.len(), 442);
    let mean = preds.iter().sum::<f64>() / 442.0;
    assert!((100.0..200.0).contains(&mean), "mean prediction {mean}");
}

/// scikit-learn's iris file is sorted by class: its last rows are all virginica. The
/// validation rows are drawn with the seed, per class, so they hold every class; the
/// model records the rule, and `prune` rebuilds exactly those rows.
#[test]
fn iris_sorted_by_class_gets_every_class_in_validation() {
    use ant::ValidSplit;
    use ant::{AntParams, Preset};
    let data = small("iris.csv");
    let target = spec("4", TaskKind::Classification, None, 0);
    let train = load_source(&data, None, 0.2, 0, Some(&target), None)
        .unwrap()
        .train;
    let classes = |d: &ant::Dataset| match d.targets() {
        Targets::Classes { labels, .. } => {
            let mut n = [0usize; 3];
            labels.iter().for_each(|&l| n[l as usize] += 1);
            n
        }
        Targets::Values { .. } => unreachable!(),
    };
    // The last 10% would be one class.
    assert_eq!(classes(&train.split_tail(0.1).1), [0, 0, 12]);
    let cfg = AntParams::new(Preset::Tabular).check().unwrap();
    let rule = ValidSplit::for_training(cfg.valid_rows(), cfg.valid_fraction(), cfg.seed(), &train);
    let (_, valid) = rule.apply(&train);
    let n = classes(&valid);
    assert!(n.iter().all(|&k| (3..=5).contains(&k)), "{n:?}");
    assert_eq!(n.iter().sum::<usize>(), 12);

    // End to end: recorded in tree.json, no class missing, and prune's validation rows are
    // the ones training scored (same validation error).
    let dir = tempfile::tempdir().unwrap();
    let (d, o) = (data.to_str().unwrap(), dir.path().join("m"));
    let o = o.to_str().unwrap();
    let mut args = vec!["train", "--preset", "tabular", "--data", d, "--out", o];
    args.extend_from_slice(&["--target", "4", "--task", "classification"]);
    args.extend_from_slice(&QUICK);
    let r = ant(&args);
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{e}");
    // No class missing from validation (scikit-learn's header also names column 1 '4',
    // which a warning says: about the target, not the rows).
    assert!(!e.contains("no samples of class"), "{e}");
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("m/tree.json")).unwrap()).unwrap();
    assert_eq!(
        tree["provenance"]["valid_split"],
        serde_json::json!({"kind": "stratified", "fraction": 0.1, "seed": 0})
    );
    let pruned = dir.path().join("p");
    let r = ant(&[
        "prune",
        "--model",
        o,
        "--data",
        d,
        "--min-reach",
        "0",
        "--out",
        pruned.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let p: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let (trained, rebuilt) = (
        tree["valid_metric"].as_f64().unwrap(),
        p["valid_multi_path_before"].as_f64().unwrap(),
    );
    assert!((trained - rebuilt).abs() < 1e-9, "{trained} vs {rebuilt}");
}

/// A class too small to be in every set is warned about, naming it.
#[test]
fn a_set_without_some_classes_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    // iris with one virginica row: it cannot be in both training and validation.
    let text = read_text(&small("iris.csv"));
    let lines: Vec<&str> = text.lines().collect();
    let mut csv: Vec<&str> = lines[..101].to_vec();
    csv.push(lines[120]);
    let data = dir.path().join("one-virginica.csv");
    std::fs::write(&data, csv.join("\n") + "\n").unwrap();
    let o = dir.path().join("m");
    let r = ant(&[
        "train",
        "--preset",
        "tabular",
        "--data",
        data.to_str().unwrap(),
        "--target",
        "4",
        "--task",
        "classification",
        "--test-data",
        small("iris.csv").to_str().unwrap(),
        "--width",
        "8",
        "--epochs-node",
        "2",
        "--refine-epochs",
        "0",
        "--max-depth",
        "0",
        "--out",
        o.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{e}");
    let warning = e
        .lines()
        .find(|l| l.starts_with("warning: the validation set"))
        .unwrap_or_else(|| panic!("{e}"));
    // By the class's label, not its index.
    assert!(warning.contains("class '2'"), "{e}");
    assert!(!e.contains("warning: the test set"), "{e}");
}

/// A model trained with a test fraction, given another file (or its file changed):
/// `eval` says loudly that it scores every row; `prune` cannot rebuild the validation
/// rows from it and refuses.
#[test]
fn eval_and_prune_on_a_changed_file_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let text = read_text(&small("iris.csv"));
    let data = dir.path().join("iris.csv");
    std::fs::write(&data, &text).unwrap();
    let (d, o) = (data.to_str().unwrap(), dir.path().join("m"));
    let o = o.to_str().unwrap();
    let r = ant(&[
        "train",
        "--preset",
        "tabular",
        "--data",
        d,
        "--out",
        o,
        "--target",
        "4",
        "--task",
        "classification",
        "--width",
        "8",
        "--epochs-node",
        "3",
        "--refine-epochs",
        "0",
        "--max-depth",
        "0",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let eval = || {
        let r = ant(&["eval", "--model", o, "--data", d, "--json"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        (v, String::from_utf8_lossy(&r.stderr).into_owned())
    };
    let (v, e) = eval();
    assert_eq!(v["test_samples"], 30);
    assert!(!e.contains("warning"), "{e}");

    std::fs::write(&data, text.replacen("5.1,3.5", "5.2,3.5", 1)).unwrap();
    let (v, e) = eval();
    assert_eq!(v["test_samples"], 150);
    assert!(
        e.contains("warning: ")
            && e.contains(d)
            && e.contains("not the file the model was trained on")
            && e.contains("scoring all its 150 rows"),
        "{e}"
    );
    let r = ant(&[
        "prune",
        "--model",
        o,
        "--data",
        d,
        "--min-reach",
        "0.1",
        "--out",
        dir.path().join("p").to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains(d) && e.contains("not the data the model was trained on"),
        "{e}"
    );
}

/// Matching a header's names must not take time quadratic in the column count (8,000
/// columns would take 20 s to predict 12 rows; 100,000, over 11 minutes).
/// A table of 100,000 named columns (16 rows) trains, evaluates and predicts (each run is killed
/// after 120 s, which only a regression reaches).
#[test]
fn a_table_of_100000_named_columns_is_read_in_linear_time() {
    let t = tempfile::tempdir().unwrap();
    let n = 100_000;
    let mut text: String = (0..n).map(|j| format!("c{j},")).collect();
    text.push_str("y\n");
    for r in 0..16 {
        let row: String = (0..n).map(|j| format!("{},", (j + r) % 3)).collect();
        text.push_str(&format!("{row}{}\n", r % 2));
    }
    let data = t.path().join("wide.csv");
    std::fs::write(&data, text).unwrap();
    let model = t.path().join("m");
    let (d, m) = (data.to_str().unwrap(), model.to_str().unwrap());
    let runs: [Vec<&str>; 3] = [
        vec![
            "train",
            "--preset",
            "tabular",
            "--target",
            "y",
            "--task",
            "classification",
            "--width",
            "4",
            "--epochs-node",
            "1",
            "--refine-epochs",
            "1",
            "--max-depth",
            "1",
            "--test-fraction",
            "0.25",
            "--data",
            d,
            "--out",
            m,
        ],
        vec!["eval", "--model", m, "--data", d],
        vec!["predict", "--model", m, "--input", d],
    ];
    for args in runs {
        let o = common::ant_bounded(&args, 120);
        assert!(
            o.status.success(),
            "ant {}: {}",
            args[0],
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Labels 'café' typed composed and decomposed are one class (not two, with `ant
/// predict` heading two columns 'p_café'): labels compare in NFC, as column names do.
#[test]
fn labels_equal_in_nfc_are_one_class() {
    let t = tempfile::tempdir().unwrap();
    let rows: String = (0..40)
        .map(|i| {
            let label = match i % 3 {
                0 => "caf\u{e9}",
                1 => "cafe\u{301}",
                _ => "x",
            };
            format!("{},{},{label}\n", i % 5, i % 3)
        })
        .collect();
    let data = t.path().join("l.csv");
    std::fs::write(&data, format!("a,b,y\n{rows}")).unwrap();
    let spec = TargetSpec::new("y", TaskKind::Classification);
    let src = load_source(&data, None, 0.2, 0, Some(&spec), None).unwrap();
    assert_eq!(
        src.class_names.as_deref(),
        Some(&["caf\u{e9}".to_string(), "x".to_string()][..])
    );
}
