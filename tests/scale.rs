//! Arithmetic that holds at any scale (issue 41, section 5): the units of the features
//! and of the targets change nothing but the units of the predictions.
//!
//! Scaling by a power of two is exact in f32, so a model trained on X·s (or y·s) must
//! make bit for bit the predictions of the one trained on X (s times them), whatever
//! tree it grew. Decimal scales round: there the tolerance is stated.

use ant::{Ant, AntParams, Dataset, Inference, Preset, Targets};

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

/// Issue 41 (m, n): a prediction that is not finite (inputs near the f32 maximum
/// through an identity edge) is never a class or a number: the rows are named.
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
