//! What `ant train` refuses before anything is written: an option that does nothing in
//! the run asked for, a float option f32 cannot hold, augmentation of a table, a
//! validation fraction that leaves no rows to validate or to train on, and images of no
//! pixels.

use std::path::Path;

mod common;

use common::*;

#[test]
fn an_option_that_does_nothing_here_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = abc_csv(t.path(), "t.csv", true);
    let m = t.path().join("m");
    let run = |more: &[&str]| {
        let mut args = vec![
            "--data",
            s(&data),
            "--target",
            "y",
            "--task",
            "classification",
        ];
        args.extend(more);
        args.extend(["--out", s(&m), "--force"]);
        ant_with("train --preset tabular --refine-epochs 1", &args)
    };
    for (more, option) in [
        (&["--image-norm", "mean-std"][..], "--image-norm"),
        (&["--pool-rule", "every"], "--pool-rule"),
        (&["--baseline", "linear", "--width", "8"], "--width"),
        (&["--baseline", "mlp-1", "--accept", "z:1"], "--accept"),
        (
            &["--baseline", "mlp-1", "--epochs-node", "3"],
            "--epochs-node",
        ),
        (&["--baseline", "mlp-1", "--max-depth", "3"], "--max-depth"),
        (
            &["--ablation", "no-router", "--router-balance", "1"],
            "--router-balance",
        ),
    ] {
        assert_clean_error(&run(more), &[option, "does nothing here"]);
    }
    // Where they act, or at their defaults, they are taken.
    for more in [
        &["--baseline", "mlp-1", "--width", "8"][..],
        &[
            "--max-depth",
            "2",
            "--epochs-node",
            "2",
            "--router-balance",
            "1",
        ][..],
        &["--baseline", "linear", "--width", "256"][..],
    ] {
        let o = run(more);
        assert!(o.status.success(), "{more:?}: {}", stderr(&o));
    }
}

/// A float option infinite in f32 is refused by name.
#[test]
fn a_float_option_f32_cannot_hold_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let out = t.path().join("x");
    let o = train_cls(&data, &out, &["--router-balance", "1e40"]);
    assert_clean_error(&o, &["--router-balance", "f32"]);
    assert!(!out.exists());
}

/// Augmentation of a table is refused by name.
#[test]
fn augmenting_a_table_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let out = t.path().join("x");
    let o = train_cls(&data, &out, &["--augment", "shift"]);
    assert_clean_error(&o, &["augment", "shift"]);
    assert!(!out.exists());
}

#[test]
fn extreme_validation_fractions_are_refused_for_classes_as_for_values() {
    let t = tempfile::tempdir().unwrap();
    let data = abc_csv(t.path(), "t.csv", true);
    let train = |out: &Path, fraction: &str| {
        ant_with(
            "train --preset tabular --epochs-node 2 --refine-epochs 1 --max-depth 1",
            &[
                "--data",
                s(&data),
                "--out",
                s(out),
                "--task",
                "classification",
                "--target",
                "y",
                "--valid-fraction",
                fraction,
            ],
        )
    };
    for (f, what) in [
        ("0.001", "no validation samples"),
        ("0.99", "too few samples to train on"),
    ] {
        let o = train(&t.path().join(f), f);
        assert_clean_error(&o, &[what, "--valid-fraction"]);
    }
    assert!(train(&t.path().join("ok"), "0.5").status.success());
}

/// Too few rows to train on is one error, before anything is written.
#[test]
fn sets_too_small_to_train_on_are_refused_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("r.csv");
    let rows: String = uniform(40, 2, 9)
        .chunks(2)
        .map(|p| format!("{},{},{}\n", p[0], p[1], p[0] - p[1]))
        .collect();
    std::fs::write(&r, format!("a,b,y\n{rows}")).unwrap();
    for extra in [
        &["--valid-fraction", "0.999"][..],
        &["--valid-fraction", "0.999", "--valid-rows", "last"],
    ] {
        let out = t.path().join("x");
        let mut args = vec![
            "train",
            "--preset",
            "tabular",
            "--data",
            s(&r),
            "--target",
            "y",
            "--task",
            "regression",
            "--epochs-node",
            "2",
            "--refine-epochs",
            "1",
            "--max-depth",
            "2",
            "--out",
            s(&out),
        ];
        args.extend_from_slice(extra);
        assert_clean_error(&ant(&args), &["too few samples to train on"]);
        assert!(!out.exists(), "nothing is written");
    }
}

/// Images of no pixels are one error, before anything is written.
#[test]
fn images_of_no_pixels_are_refused_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let idx = t.path().join("idx");
    std::fs::create_dir(&idx).unwrap();
    let write = |name: &str, dims: &[u32], data: &[u8]| {
        let mut b = vec![0, 0, 0x08, dims.len() as u8];
        dims.iter().for_each(|d| b.extend(d.to_be_bytes()));
        b.extend_from_slice(data);
        std::fs::write(idx.join(name), b).unwrap();
    };
    write("train-images-idx3-ubyte", &[20, 0, 0], &[]);
    write("train-labels-idx1-ubyte", &[20], &[0, 1].repeat(10));
    write("t10k-images-idx3-ubyte", &[2, 0, 0], &[]);
    write("t10k-labels-idx1-ubyte", &[2], &[0, 1]);
    let out = t.path().join("y");
    let o = ant_with(
        "train --preset mnist-c --epochs-node 2 --refine-epochs 1 --max-depth 2",
        &["--data", s(&idx), "--out", s(&out)],
    );
    assert_clean_error(&o, &["train-images-idx3-ubyte", "0x0 pixels"]);
    assert!(!out.exists());
}
