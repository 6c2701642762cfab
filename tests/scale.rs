//! Arithmetic that holds at any scale: the units of the features and of the targets
//! change nothing but the units of the predictions.
//!
//! Scaling by a power of two is exact in f32, so a model trained on X·s (or y·s) must
//! make bit for bit the predictions of the one trained on X (s times them), whatever
//! tree it grew. Decimal scales round: there the tolerance is stated.
//!
//! From the command line: a column in units f32 cannot hold (every value below its
//! normal range, or a spread finer than its steps) is refused with the factor or offset
//! that rescues it; targets of 1e-30 to 1e30 train and every number shown keeps its digits, a test MSE of 1e-9 prints as it is, and a
//! model file's normalisation that no division can use is refused when it loads.

use std::path::{Path, PathBuf};
use std::process::Output;

use ant::{Ant, AntParams, Dataset, Inference, Preset, Targets};

mod common;
use common::{ant, ant_with, assert_clean_error, cls_csv, s, stderr, uniform};

/// 300 points in the plane; two classes by a wavy boundary, or a smooth target.
fn points() -> Vec<f32> {
    (0..600)
        .map(|i| ((i * 7919 + 13) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

/// The points' classes (by a wavy boundary) with the features scaled by `s`.
fn classes(x: Vec<f32>, s: f64) -> Dataset {
    let labels = x
        .chunks(2)
        .map(|p| u32::from(p[1] > (3.0 * p[0]).sin() * 0.5))
        .collect();
    Dataset::new(
        scaled(&x, s),
        vec![2],
        Targets::Classes {
            labels,
            n_classes: 2,
        },
    )
    .unwrap()
}

fn values(x: Vec<f32>, y_scale: f64) -> Dataset {
    let values = x
        .chunks(2)
        .map(|p| ((p[0] * 2.0).sin() as f64 + p[1] as f64 * p[0] as f64) * y_scale)
        .map(|v| v as f32)
        .collect();
    Dataset::new(x, vec![2], Targets::Values { values, dim: 1 }).unwrap()
}

fn fit_predict(data: &Dataset, test: &Dataset) -> Vec<f32> {
    let params = AntParams::new(Preset::Tabular)
        .with_width(8)
        .with_epochs_node(3)
        .with_refine_epochs(Some(2))
        .with_max_depth(2)
        .with_batch_size(64);
    let m = Ant::fit(
        params,
        data,
        &ant::default_device(),
        &mut ant::observe::Silent,
    )
    .unwrap();
    m.predict(test, Inference::MultiPath).unwrap().values
}

fn scaled(x: &[f32], s: f64) -> Vec<f32> {
    x.iter().map(|&v| (v as f64 * s) as f32).collect()
}

/// Powers of two from 2^-100 (about 8e-31) to 2^100 (about 1.3e30).
const EXACT: [i32; 7] = [-100, -60, -30, 0, 30, 60, 100];

#[test]
fn features_in_any_units_give_the_same_predictions() {
    let x = points();
    let reference = fit_predict(&classes(x.clone(), 1.0), &classes(x.clone(), 1.0));
    for e in EXACT {
        let s = 2f64.powi(e);
        let got = fit_predict(&classes(x.clone(), s), &classes(x.clone(), s));
        assert_eq!(got, reference, "features times 2^{e}");
    }
    for s in [1e-30, 1e-10, 1e10, 1e30] {
        let got = fit_predict(&classes(x.clone(), s), &classes(x.clone(), s));
        let worst = got
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        // Rounding the inputs (one part in 1e7) moves no probability by more than this.
        assert!(
            worst < 0.05,
            "features times {s}: probabilities moved by {worst}"
        );
    }
}

#[test]
fn targets_in_any_units_give_predictions_in_those_units() {
    let x = points();
    let reference = fit_predict(&values(x.clone(), 1.0), &values(x.clone(), 1.0));
    for e in EXACT {
        let s = 2f64.powi(e);
        let got = fit_predict(&values(x.clone(), s), &values(x.clone(), 1.0));
        let want: Vec<f32> = reference.iter().map(|&v| (v as f64 * s) as f32).collect();
        assert_eq!(got, want, "targets times 2^{e}");
    }
    for s in [1e-30, 1e-10, 1e10, 1e30] {
        let got = fit_predict(&values(x.clone(), s), &values(x.clone(), 1.0));
        let spread = 1.0f64; // the reference targets' order of magnitude
        for (a, b) in got.iter().zip(&reference) {
            let (a, b) = (*a as f64 / s, *b as f64);
            assert!(
                (a - b).abs() < 0.05 * spread,
                "targets times {s}: {a} against {b}"
            );
        }
    }
}

/// A prediction that is not finite (inputs near the f32 maximum through an identity
/// edge) is never a class or a number: the rows are named.
#[test]
fn predictions_that_are_not_finite_are_refused_by_row() {
    let x = points();
    let params = AntParams::new(Preset::Tabular)
        .with_baseline(Some(ant::Baseline::Linear))
        .with_refine_epochs(Some(2))
        .with_batch_size(64);
    let data = classes(x.clone(), 1.0);
    let m = Ant::fit(
        params,
        &data,
        &ant::default_device(),
        &mut ant::observe::Silent,
    )
    .unwrap();
    let mut huge = x[..20].to_vec();
    huge[6] = 3.0e38;
    huge[7] = -3.0e38;
    huge[14] = f32::MAX;
    let test = classes(huge, 1.0);
    for mode in [Inference::MultiPath, Inference::SinglePath] {
        let e = m.predict(&test, mode).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ant::AntError::NotFinite { .. }), "{e:?}");
        assert!(msg.contains("3, 7"), "{msg}");
    }
    assert!(m.evaluate(&test).is_err(), "eval scores no such row");
    // Finite rows alone are predicted as before.
    assert!(
        m.predict(&classes(x[..20].to_vec(), 1.0), Inference::MultiPath)
            .is_ok()
    );
}

// The same from the command line: values in units f32 cannot hold, targets of any size,
// and a model file's normalisation.

/// A table of `rows` (text after the header) in `dir`.
fn csv(dir: &Path, name: &str, header: &str, rows: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
    p
}

/// 90 rows `a,b,LABEL`, the features times `scale`, the labels `0` and `1` in turn.
fn rows_times(scale: f64) -> Vec<String> {
    uniform(90, 2, 3)
        .chunks(2)
        .enumerate()
        .map(|(i, r)| {
            let (a, b) = (f64::from(r[0]) * scale, f64::from(r[1]) * scale);
            format!("{a:e},{b:e},{}", ["0", "1"][i % 2])
        })
        .collect()
}

/// `ant train` of a quick tree of depth 1 on `data` into `out`.
fn train_cli(data: &Path, out: &Path, target: &str, task: &str) -> Output {
    ant_with(
        "train --preset tabular --epochs-node 2 --refine-epochs 1 --max-depth 1",
        &[
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

#[test]
fn columns_below_f32s_normal_range_are_refused_values_are_not() {
    let t = tempfile::tempdir().unwrap();
    for scale in [1e-40, 1e-50] {
        let data = csv(t.path(), "tiny.csv", "a,b,y", &rows_times(scale));
        let o = train_cli(&data, &t.path().join("m"), "y", "classification");
        assert_clean_error(&o, &["tiny.csv", "column 0 ('a')", "every value is below"]);
    }
    // A target in such units too; zero itself is a value like any.
    let r: Vec<String> = (0..60)
        .map(|i| format!("{i},0,{:e}", f64::from(i) * 1e-45))
        .collect();
    let data = csv(t.path(), "ty.csv", "a,b,y", &r);
    let o = train_cli(&data, &t.path().join("m"), "y", "regression");
    assert_clean_error(
        &o,
        &["ty.csv", "column 2 ('y')", "multiply the column by 1e44"],
    );
    // A p-value of 1e-300 among others is a 0 like any, in training and prediction.
    let mut r = rows_times(1.0);
    r[7] = format!("1e-300,{}", r[7].split_once(',').unwrap().1);
    let data = csv(t.path(), "p.csv", "a,b,y", &r);
    let m = t.path().join("pm");
    let o = train_cli(&data, &m, "y", "classification");
    assert!(o.status.success(), "{}", stderr(&o));
    let one = csv(t.path(), "one.csv", "a,b", &["1e-300,0.5".to_string()]);
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A column of Unix times (1.7e9 plus a few tens), or a target 1e9 + 10x, becomes a
/// handful of f32 values 128 apart: taken for a constant, it would train on nothing
/// (60% error; a test MSE of 0 printed). Such columns are refused with the offset that
/// rescues them; f64 noise around a constant is not.
#[test]
fn columns_whose_spread_f32_cannot_hold_are_refused_noise_is_not() {
    let t = tempfile::tempdir().unwrap();
    let times = |spread: i64| -> Vec<String> {
        (0..80)
            .map(|i| {
                format!(
                    "{},{},{}",
                    1_700_000_000 + (i % 2) * spread + 9 * (i % 7),
                    i % 3,
                    i % 2
                )
            })
            .collect()
    };
    // Times a few hundred apart become values 128 apart in f32: refused.
    let data = csv(t.path(), "times.csv", "t,b,y", &times(400));
    let o = train_cli(&data, &t.path().join("m"), "y", "classification");
    assert_clean_error(
        &o,
        &[
            "times.csv",
            "column 0 ('t')",
            "finer than f32",
            "offset such as 1700000000",
        ],
    );
    // A few tens apart they are all one f32 value: refused all the same.
    let data = csv(t.path(), "close.csv", "t,b,y", &times(4));
    let o = train_cli(&data, &t.path().join("c"), "y", "classification");
    assert_clean_error(
        &o,
        &["close.csv", "column 0 ('t')", "offset such as 1700000000"],
    );
    let r: Vec<String> = (0..80)
        .map(|i| format!("{},{},{}", i % 5, i % 3, 1e9 + 100.0 * f64::from(i % 9)))
        .collect();
    let data = csv(t.path(), "y.csv", "a,b,y", &r);
    let o = train_cli(&data, &t.path().join("m"), "y", "regression");
    assert_clean_error(&o, &["y.csv", "column 2 ('y')", "finer than f32"]);
    let r: Vec<String> = (0..80)
        .map(|i| {
            let noisy = ["0.3", "0.30000000000000004"][i % 2];
            format!("{noisy},{},{}", i % 5, i % 2)
        })
        .collect();
    let data = csv(t.path(), "noise.csv", "a,b,y", &r);
    let o = train_cli(&data, &t.path().join("m"), "y", "classification");
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A test MSE of 9e-10 (targets in small units) is printed as it is, not as
/// `0.0000 MSE`.
#[test]
fn a_small_test_mse_is_printed_as_it_is() {
    let t = tempfile::tempdir().unwrap();
    let r: Vec<String> = (0..80)
        .map(|i| format!("{},{},{:e}", i % 5, i % 3, 1e-5 * f64::from(i % 7)))
        .collect();
    let data = csv(t.path(), "small.csv", "a,b,y", &r);
    let o = train_cli(&data, &t.path().join("m"), "y", "regression");
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    let line = e
        .lines()
        .find(|l| l.starts_with("test: "))
        .expect("a test line");
    assert!(
        line.contains("e-") && !line.contains("0.0000 MSE"),
        "{line}"
    );
}

/// One rule for a column f32 cannot hold, features and targets alike, at every offset:
/// a variation of a few units on an offset where f32's steps are larger is refused with
/// the offset that rescues it, whether it narrows to several f32 values or to one (as
/// a constant target it was scored on nothing: MSE 0). Every scale whose values f32
/// holds trains (iris x1e36 features, x1e37 targets); beyond, or below its normal
/// range, the error gives a finite factor.
#[test]
fn one_rule_at_every_offset_and_every_scale_f32_holds_trains() {
    let t = tempfile::tempdir().unwrap();
    let base = |i: usize| {
        let (a, b, c) = ((i % 7) as f64, (i % 5) as f64, (i % 3) as f64);
        (a, b, c, 2.0 * a - b + 0.5 * c)
    };
    for offset in [3e7, 1e8, 1.7e9, 1e12, 1e15] {
        for (k, column) in ["a", "y"].into_iter().enumerate() {
            let rows: Vec<String> = (0..60)
                .map(|i| {
                    let (a, b, c, y) = base(i);
                    match k {
                        0 => format!("{},{b},{c},{y}", offset + a),
                        _ => format!("{a},{b},{c},{}", offset + y),
                    }
                })
                .collect();
            let data = csv(t.path(), "off.csv", "a,b,c,y", &rows);
            let o = train_cli(&data, &t.path().join("off"), "y", "regression");
            assert_clean_error(
                &o,
                &[
                    "off.csv",
                    &format!("('{column}')"),
                    "subtract an offset such as",
                ],
            );
        }
    }
    let trained = |scale_x: f64, scale_y: f64| {
        let rows: Vec<String> = (0..60)
            .map(|i| {
                let (a, b, c, y) = base(i);
                format!(
                    "{:e},{:e},{:e},{:e}",
                    (a + 1.0) * scale_x,
                    b * scale_x,
                    c * scale_x,
                    (y + 9.0) / 10.0 * scale_y
                )
            })
            .collect();
        let data = csv(t.path(), "scaled.csv", "a,b,c,y", &rows);
        let out = t.path().join(format!("s{scale_x:e}-{scale_y:e}"));
        train_cli(&data, &out, "y", "regression")
    };
    for (x, y) in [(1e36, 1.0), (1.0, 1e37), (1e-30, 1e-30), (1e30, 1e-37)] {
        let o = trained(x, y);
        assert!(o.status.success(), "x{x:e} y{y:e}: {}", stderr(&o));
    }
    let o = trained(1.0, 1.2e38);
    assert_clean_error(
        &o,
        &[
            "cannot be standardised in f32",
            "y_mean",
            "multiply the column by 1e-",
        ],
    );
    let o = trained(1e-310, 1.0);
    assert_clean_error(
        &o,
        &["every value is below", "multiply the column by 1e310"],
    );
}

/// Targets of 1e-30 to 1e30 train (their MSE, 1e-60 to 1e60, is an f64), and every
/// number `ant` then prints, writes or draws keeps its significant digits: the summary's
/// MSE reads back as the report's to four digits, and no output writes a number out
/// without its exponent (Rust's `{}` writes 1e58 with 58 digits, `{:.4}` writes 1e-60
/// as 0.0000).
#[test]
fn numbers_keep_their_digits_at_every_scale() {
    let t = tempfile::tempdir().unwrap();
    // A number written without its exponent: 13 or more digits before the point, or
    // six zeros after `0.` before its first digit.
    let long_number = |text: &str| {
        text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .any(|n| {
                let (whole, fraction) = n.split_once('.').unwrap_or((n, ""));
                let zeros = fraction.len() - fraction.trim_start_matches('0').len();
                whole.len() >= 13
                    || (whole.trim_matches('0').is_empty() && zeros >= 6 && zeros < fraction.len())
            })
    };
    for (k, scale) in [1e-30, 1.0, 1e20, 1e30].into_iter().enumerate() {
        let r = t.path().join(format!("r{k}.csv"));
        let rows: String = uniform(200, 2, 4)
            .chunks(2)
            .map(|p| {
                format!(
                    "{},{},{:e}\n",
                    p[0],
                    p[1],
                    (3.0 + p[0] * p[1].sin()) as f64 * scale
                )
            })
            .collect();
        std::fs::write(&r, format!("a,b,y\n{rows}")).unwrap();
        let m = t.path().join(format!("m{k}"));
        let o = ant_with(
            "train --preset tabular --target y --task regression --epochs-node 2 --refine-epochs 1 --max-depth 1",
            &["--data", s(&r), "--out", s(&m)],
        );
        let said = stderr(&o);
        assert!(o.status.success(), "{said}");
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(m.join("report.json")).unwrap()).unwrap();
        let mse = report["multi_path_mse"].as_f64().unwrap();
        assert!(mse.is_finite() && mse > 0.0, "{report}");
        let summary = said
            .lines()
            .find(|l| l.starts_with("test: "))
            .expect("a summary");
        let shown: f64 = summary["test: multi-path ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            ((shown - mse) / mse).abs() < 5e-4,
            "x{scale:e}: {summary} vs {mse:e}"
        );
        let eval = ant(&["eval", "--model", s(&m), "--data", s(&r)]);
        let p = t.path().join(format!("p{k}.csv"));
        let predict = ant(&[
            "predict",
            "--model",
            s(&m),
            "--input",
            s(&r),
            "--output",
            s(&p),
        ]);
        let mut outputs = vec![
            said.clone(),
            String::from_utf8_lossy(&eval.stdout).into_owned(),
        ];
        for (o, what) in [(&eval, "eval"), (&predict, "predict")] {
            assert!(o.status.success(), "{what}: {}", stderr(o));
        }
        for pic in ["t.svg", "t.dot", "c.svg"] {
            let out = m.join(pic);
            let o = match pic {
                "c.svg" => ant(&["curves", "--run", s(&m), "--out", s(&out)]),
                _ => ant(&["plot", "--model", s(&m), "--data", s(&r), "--out", s(&out)]),
            };
            assert!(o.status.success(), "{pic}: {}", stderr(&o));
            outputs.push(std::fs::read_to_string(&out).unwrap());
        }
        outputs.push(std::fs::read_to_string(&p).unwrap());
        for text in &outputs {
            assert!(!long_number(text), "x{scale:e}: a long number in\n{text}");
        }
    }
}

/// A normalisation no division can use is refused when the model loads.
#[test]
fn model_files_with_unusable_scales_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let m = t.path().join("m");
    let o = ant_with(
        "train --preset tabular --target y --task classification --epochs-node 2 --refine-epochs 1 --max-depth 2",
        &["--data", s(&data), "--out", s(&m)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let tree = std::fs::read_to_string(m.join("tree.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&tree).unwrap();
    for (key, value, needle) in [
        ("x_std", 1e-45, "too small to divide by"),
        ("x_mean", 3e38, "x_mean"),
    ] {
        let mut v = v.clone();
        v["normalisation"][key][0] = serde_json::json!(value);
        std::fs::write(m.join("tree.json"), serde_json::to_string(&v).unwrap()).unwrap();
        let o = ant(&["eval", "--model", s(&m), "--data", s(&data)]);
        assert_clean_error(&o, &["tree.json", needle]);
    }
}
