//! The same trees on every device. Built with the `torch` feature, growth, refinement and
//! inference on `cpu` (burn-flex) are compared with `torch` (LibTorch's CPU kernels), and
//! models cross between them; `ANT_TEST_CUDA=1` adds `cuda` to the comparison on a machine
//! with a GPU. Without the feature, asking for LibTorch is one clear error.
//!
//! Tolerance: both backends compute in f32 but sum in different orders, so values drift
//! apart by float rounding (about 1e-6 per step) that a few hundred Adam steps amplify.
//! Growth decisions and single-path leaves must be identical; probabilities and
//! regression values must agree to 1e-3 (relative for regression).

mod common;

use ant::observe::Silent;
use ant::{Ablation, Ant, ComputeDevice, Dataset, Inference};
use common::*;

fn fit_on(device: ComputeDevice, data: &Dataset) -> Ant {
    let dev = device.burn().expect("device usable in this build");
    // Classification without transformers: only splits can help, so routers are tested.
    let params = match data.targets() {
        ant::Targets::Classes { .. } => small_params().with_ablation(Ablation::NoTransformer),
        ant::Targets::Values { .. } => small_params(),
    };
    Ant::fit(params, data, &dev, &mut Silent).expect("fits")
}

#[cfg(feature = "torch")]
mod torch {
    use super::*;

    fn wave() -> Dataset {
        regression(uniform(500, 3, 12), 3, |p| (3.0 * p[0]).sin() + p[1] * p[2])
    }

    /// Largest difference between two prediction tables, relative to the larger magnitude
    /// when `relative`.
    fn max_diff(a: &[f32], b: &[f32], relative: bool) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                let d = (x - y).abs();
                if relative {
                    d / x.abs().max(y.abs()).max(1.0)
                } else {
                    d
                }
            })
            .fold(0.0, f32::max)
    }

    /// Fits on `cpu` and `other` and checks that they grew the same tree and agree.
    fn assert_same_tree(other: ComputeDevice, data: &Dataset, relative: bool) {
        let a = fit_on(ComputeDevice::Cpu, data);
        let b = fit_on(other, data);
        assert_eq!(
            a.topology().outline(),
            b.topology().outline(),
            "cpu and {other} grew different trees"
        );
        for (x, y) in a.meta().decisions.iter().zip(&b.meta().decisions) {
            assert_eq!((x.node, x.action), (y.node, y.action), "{x:?} vs {y:?}");
            assert!(
                (x.valid_after - y.valid_after).abs() <= 1e-4,
                "{x:?} vs {y:?}"
            );
        }
        for mode in [Inference::MultiPath, Inference::SinglePath] {
            let (pa, pb) = (
                a.predict(data, mode).unwrap(),
                b.predict(data, mode).unwrap(),
            );
            assert_eq!(pa.leaf, pb.leaf, "{mode:?}: single-path leaves differ");
            let d = max_diff(&pa.values, &pb.values, relative);
            assert!(d <= 1e-3, "{mode:?}: cpu and {other} differ by {d}");
        }
    }

    /// The devices to compare with `cpu`: `torch`, and `cuda` when asked for.
    fn others() -> Vec<ComputeDevice> {
        let mut v = vec![ComputeDevice::Torch];
        if std::env::var_os("ANT_TEST_CUDA").is_some() {
            v.push(ComputeDevice::Cuda(0));
        }
        v
    }

    #[test]
    fn classification_trees_grow_the_same_on_every_device() {
        let data = quadrants();
        let a = fit_on(ComputeDevice::Cpu, &data);
        assert!(
            a.topology().leaves().len() > 1,
            "the data must make growth split: {}",
            a.topology().outline()
        );
        for d in others() {
            assert_same_tree(d, &data, false);
        }
    }

    #[test]
    fn regression_trees_grow_the_same_on_every_device() {
        for d in others() {
            assert_same_tree(d, &wave(), true);
        }
    }

    #[test]
    fn a_model_saved_on_one_device_predicts_the_same_on_another() {
        let data = quadrants();
        let dir = tempfile::tempdir().unwrap();
        for (from, to) in [
            (ComputeDevice::Cpu, ComputeDevice::Torch),
            (ComputeDevice::Torch, ComputeDevice::Cpu),
        ] {
            let trained = fit_on(from, &data);
            let path = dir.path().join(format!("{from}"));
            trained.save(&path).unwrap();
            let loaded = Ant::load(&path, &to.burn().unwrap()).unwrap();
            for mode in [Inference::MultiPath, Inference::SinglePath] {
                let (p, q) = (
                    trained.predict(&data, mode).unwrap(),
                    loaded.predict(&data, mode).unwrap(),
                );
                assert_eq!(p.leaf, q.leaf);
                let d = max_diff(&p.values, &q.values, false);
                assert!(d <= 1e-5, "{from} -> {to} {mode:?}: {d}");
            }
        }
    }

    #[test]
    fn a_missing_gpu_is_one_clear_error() {
        assert_device_refused("cuda:99", &["cuda:99", "no such CUDA GPU"]);
    }
}

#[cfg(not(feature = "torch"))]
#[test]
fn libtorch_without_the_feature_is_one_clear_error() {
    for device in ["torch", "cuda", "cuda:1"] {
        assert_device_refused(device, &[device, "--features torch"]);
    }
}

/// `ant train` on iris with `--device device` is refused: one error line naming every
/// needle, exit 2, nothing written.
fn assert_device_refused(device: &str, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("m");
    let out = ant(&[
        "train",
        "--preset",
        "tabular",
        "--data",
        "data/small/iris.csv",
        "--target",
        "4",
        "--skip-rows",
        "1",
        "--task",
        "classification",
        "--out",
        s(&out_dir),
        "--device",
        device,
    ]);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_clean_error(&out, needles);
    assert!(!out_dir.exists(), "nothing is written");
}

#[test]
fn an_unknown_device_is_refused_by_every_computing_command() {
    for cmd in ["train", "eval", "predict", "prune", "plot"] {
        let out = ant(&[cmd, "--device", "gpu"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains("cpu, torch, cuda, cuda:N"), "{cmd}: {err}");
    }
}

#[test]
fn cpu_trees_are_reproducible() {
    // The host draws every initial weight: the same seed, the same tree and predictions.
    let data = quadrants();
    let (a, b) = (
        fit_on(ComputeDevice::Cpu, &data),
        fit_on(ComputeDevice::Cpu, &data),
    );
    assert_eq!(a.meta().decisions, b.meta().decisions);
    let mode = Inference::MultiPath;
    assert_eq!(
        a.predict(&data, mode).unwrap(),
        b.predict(&data, mode).unwrap()
    );
}
