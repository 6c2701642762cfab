//! `ant plot` and `ant curves` from the command line: class names with control
//! characters drawn visibly, records with non-finite losses drawn, an ensemble's curves
//! sent to its members, and pictures too large for the memory this process may have
//! refused before they are drawn.

use std::path::Path;

mod common;

use common::*;

#[test]
fn class_names_with_control_characters_are_drawn_visibly() {
    let t = tempfile::tempdir().unwrap();
    let mut text = String::from("a,b,y\n");
    for r in uniform(180, 2, 3).chunks(2) {
        let y = u32::from(r[0] > 0.0) + u32::from(r[1] > 0.5);
        text += &format!("{},{},{y}\n", r[0], r[1]);
    }
    let data = t.path().join("bel.csv");
    std::fs::write(&data, text.replace(",1\n", ",on\u{7}e\n")).unwrap();
    let model = t.path().join("m");
    ok(&train_quick(&data, &model, &["--target", "y"]));
    let plot = |out: &Path| {
        let o = ant(&[
            "plot",
            "--model",
            s(&model),
            "--data",
            s(&data),
            "--out",
            s(out),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let svg = t.path().join("t.svg");
    plot(&svg);
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(!drawn.contains('\u{7}') && drawn.contains("on\\u{7}e"));
    plot(&t.path().join("t.png"));
}

/// A run whose losses went non-finite writes them as `null`; `ant curves` draws its
/// records.
#[test]
fn curves_draw_records_with_non_finite_losses() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("r.csv");
    let rows: String = (0..80)
        .map(|i| format!("{},{},{}\n", i % 7, i % 3, 1 + i % 3))
        .collect();
    std::fs::write(&data, format!("a,b,y\n{rows}")).unwrap();
    let out = t.path().join("x");
    let o = ant_with(
        "train --preset tabular --target y --task regression --width 8 --lr 1e30 --epochs-node 2 --refine-epochs 1 --max-depth 2",
        &["--data", s(&data), "--out", s(&out)],
    );
    assert_clean_error(&o, &["diverged"]);
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert!(records.contains("null"), "{records}");
    let svg = t.path().join("c.svg");
    ok(&ant(&["curves", "--run", s(&out), "--out", s(&svg)]));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

/// An ensemble's curves are its members': the error names one.
#[test]
fn curves_of_an_ensemble_are_its_members() {
    let t = tempfile::tempdir().unwrap();
    let e = t.path().join("e");
    ok(&train_cls(&cls_csv(t.path()), &e, &["--ensemble", "2"]));
    let o = ant_with(
        "curves",
        &["--run", s(&e), "--out", s(&t.path().join("c.svg"))],
    );
    assert_clean_error(&o, &["is an ensemble", "member-0"]);
}

/// A picture's pixels are counted before they are allocated: one past the memory this
/// process may have (the machine's, or `ulimit -v`'s) is one error that names
/// `--width`, not an abort or the kernel's kill.
#[cfg(target_os = "linux")]
#[test]
fn pictures_too_large_for_memory_are_refused_before_they_are_drawn() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let run = t.path().join("run");
    ok(&train_cls(&data, &run, &[]));
    let png = t.path().join("c.png");
    let tries: [(&str, Vec<&str>); 3] = [
        (
            "",
            vec![
                "curves",
                "--run",
                s(&run),
                "--width",
                "100000",
                "--out",
                s(&png),
            ],
        ),
        (
            "ulimit -v 3000000; ",
            vec![
                "curves",
                "--run",
                s(&run),
                "--width",
                "40000",
                "--out",
                s(&png),
            ],
        ),
        (
            "",
            vec![
                "plot",
                "--model",
                s(&run),
                "--data",
                s(&data),
                "--width",
                "30000000",
                "--out",
                s(&png),
            ],
        ),
    ];
    for (limit, args) in tries {
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("{limit}exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_ant"))
            .args(&args)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{limit}{args:?}: {e}");
        assert!(
            e.contains("--width") && e.contains("MiB"),
            "{limit}{args:?}: {e}"
        );
        assert!(!png.exists(), "nothing written");
    }
}
