//! Fixed-architecture baselines (`--baseline linear|mlp-K|cnn`): their trees, their
//! training (early stopping, best on validation), and that they are ordinary models.

use std::path::Path;

mod common;

use ant::Dataset;
use ant::data::idx::load_idx_dir;
use ant::observe::{Collect, Phase};
use ant::{Ant, AntParams, Augment, Baseline, Inference, Preset};
use burn::prelude::*;
use common::*;

/// `n` points in [-1,1]^d, labelled by the side of a fixed hyperplane, those within
/// `margin` of it dropped: linearly separable.
fn separable(n: usize, d: usize, margin: f32, seed: u64) -> Dataset {
    let w: Vec<f32> = (0..d).map(|i| 1.0 - 0.3 * i as f32).collect();
    let side = |p: &[f32]| p.iter().zip(&w).map(|(a, b)| a * b).sum::<f32>() - 0.1;
    let x: Vec<f32> = uniform(n, d, seed)
        .chunks(d)
        .filter(|p| side(p).abs() > margin)
        .flatten()
        .copied()
        .collect();
    classification(x, d, 2, |p| u32::from(side(p) > 0.0))
}

/// The same rows as a CSV file with a header `x0,...,y`.
fn write_csv(data: &Dataset, path: &Path) {
    let d = data.sample_shape()[0];
    let labels = match data.targets() {
        ant::Targets::Classes { labels, .. } => labels,
        _ => unreachable!(),
    };
    let mut text: String = (0..d).map(|i| format!("x{i},")).collect::<String>() + "y\n";
    for (row, y) in data.x().chunks(d).zip(labels) {
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        text.push_str(&format!("{},{y}\n", cells.join(",")));
    }
    std::fs::write(path, text).unwrap();
}

fn error_percent(model: &Ant, data: &Dataset) -> f64 {
    model.evaluate(data).unwrap().multi_path
}

#[test]
fn mlp_2_has_the_expected_tree_and_stops_early_keeping_the_best_epoch() {
    // Random labels: nothing to learn, so validation NLL soon stops improving.
    let (d, k) = (6, 3);
    let x = uniform(400, d, 1);
    // A label hashed from the row's bits: unrelated to where the row lies.
    let noise = classification(x, d, k, |p| {
        (p[0].to_bits().wrapping_mul(2_654_435_761) >> 16) % k as u32
    });
    let cap = 200;
    let params = AntParams::new(Preset::Tabular)
        .with_baseline(Some(Baseline::Mlp { layers: 2 }))
        .with_refine_epochs(Some(cap))
        .with_patience(Some(3))
        .with_batch_size(16)
        .with_lr(0.01);
    let mut obs = Collect::default();
    let model = Ant::fit(params, &noise, &Device::flex(), &mut obs).unwrap();

    // K hidden layers of 256 tanh units on the root edge, then a linear solver.
    let t = model.topology();
    assert_eq!((t.nodes.len(), t.routers(), t.transformers()), (1, 0, 2));
    let w = 256;
    assert_eq!(t.num_params(), (d * w + w) + (w * w + w) + (w * k + k));
    assert_eq!(
        model.meta().config.baseline(),
        Some(Baseline::Mlp { layers: 2 })
    );
    assert!(model.meta().decisions.is_empty());

    // No growth: one optimisation, stopped `patience` epochs after its best one, well
    // before the cap; the model kept is that best epoch.
    assert!(obs.epochs.iter().all(|r| r.phase == Phase::Refine));
    let losses: Vec<f64> = obs.epochs.iter().map(|r| r.valid_loss).collect();
    let (best, best_loss) =
        losses.iter().enumerate().fold(
            (0, f64::INFINITY),
            |b, (i, &l)| if l < b.1 { (i, l) } else { b },
        );
    assert!(losses.len() < cap, "{} epochs: no early stop", losses.len());
    assert_eq!(losses.len(), best + 1 + 3, "{losses:?}");
    assert_eq!(model.meta().valid_nll, best_loss);
}

#[test]
fn linear_separates_separable_data() {
    let train = separable(600, 5, 0.1, 2);
    let test = separable(400, 5, 0.1, 3);
    let params = AntParams::new(Preset::Tabular)
        .with_baseline(Some(Baseline::Linear))
        .with_refine_epochs(Some(100))
        .with_patience(Some(10))
        .with_batch_size(32)
        .with_lr(0.05);
    let model = Ant::fit(params, &train, &Device::flex(), &mut Collect::default()).unwrap();
    let t = model.topology();
    assert_eq!(
        (t.nodes.len(), t.transformers(), t.num_params()),
        (1, 0, 5 * 2 + 2)
    );
    let err = error_percent(&model, &test);
    assert!(
        err <= 1.0,
        "linear baseline: {err}% test error on separable data"
    );
}

#[test]
fn cnn_on_mnist_is_the_presets_transformer_along_one_path() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let (train, test) = load_idx_dir(&dir).expect("the repository ships MNIST in data/mnist");
    let (train, test) = (train.take_first(300), test.take_first(200));
    let params = AntParams::new(Preset::MnistC)
        .with_baseline(Some(Baseline::Cnn))
        // unshifted images: 8 epochs on 300 of them must show learning
        .with_augment(Some(Augment::None))
        .with_refine_epochs(Some(8))
        .with_batch_size(64)
        .with_lr(0.01);
    let model = Ant::fit(params, &train, &Device::flex(), &mut Collect::default()).unwrap();
    let t = model.topology();
    // mnist-c, the authors' pooling: conv5-5 three times (28 -> 24/pool 12 -> 8 ->
    // 4/pool 2; a 2x2 map takes no more), no router, and the preset's linear solver on
    // the 5x2x2 map.
    assert_eq!((t.nodes.len(), t.routers(), t.transformers()), (1, 0, 3));
    let labels: Vec<String> = t.nodes[0].edge.iter().map(|b| b.label()).collect();
    assert_eq!(
        labels,
        ["conv5-5+relu+pool", "conv5-5+relu", "conv5-5+relu+pool"]
    );
    let conv = |c_in: usize| 5 * c_in * 25 + 5;
    assert_eq!(t.num_params(), conv(1) + 2 * conv(5) + (5 * 4 * 10 + 10));
    // It learned something in eight epochs (chance is 90% error).
    let err = error_percent(&model, &test);
    assert!(err < 85.0, "cnn baseline: {err}% test error");
    // Single-path and multi-path agree: there is one path.
    let (m, sp) = (
        model.predict(&test, Inference::MultiPath).unwrap(),
        model.predict(&test, Inference::SinglePath).unwrap(),
    );
    assert_eq!(m.classes(), sp.classes());
}

#[test]
fn a_baseline_trains_saves_evaluates_and_predicts_like_an_ant() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sep.csv");
    let rows = separable(300, 4, 0.1, 4);
    write_csv(&rows, &data);
    let out = dir.path().join("mlp");
    let table = [
        "--data",
        s(&data),
        "--target",
        "y",
        "--task",
        "classification",
    ];
    let schedule = ["--refine-epochs", "20", "--patience", "3", "--width", "16"];
    let mut args = vec!["train", "--preset", "tabular", "--baseline", "mlp-1"];
    args.extend(table);
    args.extend(schedule);
    args.extend(["--out", s(&out)]);
    let r = ant(&args);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(stderr(&r).contains("baseline mlp-1"), "{}", stderr(&r));

    // tree.json records the baseline; the model loads as any other.
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tree.json")).unwrap()).unwrap();
    assert_eq!(tree["config"]["baseline"], "mlp-1");
    let model = Ant::load(&out, &Device::flex()).unwrap();
    assert_eq!(model.topology().num_params(), (4 * 16 + 16) + (16 * 2 + 2));

    let e = ant(&["eval", "--model", s(&out), "--data", s(&data), "--json"]);
    assert!(e.status.success(), "{}", stderr(&e));
    let report: serde_json::Value = serde_json::from_slice(&e.stdout).unwrap();
    assert_eq!(report["baseline"], "mlp-1");
    assert_eq!(
        (report["routers"].as_u64(), report["transformers"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        report["params_total"].as_u64(),
        Some(4 * 16 + 16 + 16 * 2 + 2)
    );
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(saved["multi_path_error"], report["multi_path_error"]);

    let preds = dir.path().join("p.jsonl");
    let p = ant(&[
        "predict",
        "--model",
        s(&out),
        "--input",
        s(&data),
        "--output",
        s(&preds),
    ]);
    assert!(p.status.success(), "{}", stderr(&p));
    let lines = std::fs::read_to_string(&preds).unwrap();
    assert_eq!(lines.lines().count(), rows.len());
    assert!(
        lines.lines().all(|l| l.contains("\"leaf\":0")),
        "one leaf: {lines}"
    );

    let i = ant(&["inspect", "--model", s(&out)]);
    assert!(i.status.success(), "{}", stderr(&i));
    let text = String::from_utf8_lossy(&i.stdout);
    assert!(text.starts_with("baseline mlp-1"), "{text}");

    // An ensemble of baselines: members are ordinary baseline models.
    let ens = dir.path().join("ens");
    let mut args = vec!["train", "--preset", "tabular", "--baseline", "linear"];
    args.extend(table);
    // The schedule but its --width: a linear baseline has no hidden layer to size.
    args.extend(&schedule[..4]);
    args.extend(["--ensemble", "2", "--out", s(&ens)]);
    let r = ant(&args);
    assert!(r.status.success(), "{}", stderr(&r));
    let e = ant(&["eval", "--model", s(&ens), "--data", s(&data), "--json"]);
    assert!(e.status.success(), "{}", stderr(&e));
    let report: serde_json::Value = serde_json::from_slice(&e.stdout).unwrap();
    assert_eq!(report["ensemble_size"], 2);
    assert_eq!(report["baseline"], "linear");
    for m in report["members"].as_array().unwrap() {
        assert_eq!(m["baseline"], "linear");
        assert_eq!(m["params_total"].as_u64(), Some(4 * 2 + 2));
    }
}

#[test]
fn baselines_that_do_not_fit_are_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sep.csv");
    write_csv(&separable(100, 3, 0.1, 5), &data);
    let out = dir.path().join("out");
    let train = |extra: &[&str]| {
        let mut args = vec![
            "train",
            "--preset",
            "tabular",
            "--data",
            s(&data),
            "--target",
            "y",
            "--task",
            "classification",
            "--out",
            s(&out),
        ];
        args.extend(extra);
        ant(&args)
    };
    // A CNN on a table: refused before the run's directory is made.
    assert_clean_error(&train(&["--baseline", "cnn"]), &["cnn needs images"]);
    assert!(!out.exists(), "nothing is written for a refused run");
    for bad in ["resnet", "mlp-0", "mlp", "mlp-x"] {
        assert_clean_error(
            &train(&["--baseline", bad]),
            &["--baseline", "linear, mlp-K"],
        );
    }
    // A baseline does not grow: a growth ablation with it is a contradiction.
    assert_clean_error(
        &train(&["--baseline", "linear", "--ablation", "no-router"]),
        &["--ablation"],
    );
    assert_clean_error(
        &train(&["--baseline", "linear", "--refine-epochs", "0"]),
        &["--refine-epochs"],
    );
}
