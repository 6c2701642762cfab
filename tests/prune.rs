//! `ant prune`: the pruned model reports its own validation scores; a model fitted
//! through the library is pruned only on the rows it was fitted on; prunes into one
//! directory run one after the other and leave a whole model; a prune that fails leaves
//! no empty directory.

use std::path::Path;

mod common;

use common::*;

#[test]
fn a_pruned_model_reports_its_own_validation_scores() {
    let t = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/small/iris.csv");
    // Iris grows routers on seed 1 on some machines; the first seed whose pruning cuts a
    // branch is taken, wherever a seed's tree differs.
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
fn pruning_a_fitted_model_takes_only_the_rows_it_was_fitted_on() {
    let t = tempfile::tempdir().unwrap();
    let model = fitted_on_named_columns(t.path());
    let own = t.path().join("own.csv");
    let mut text = String::from("a,b,target\n");
    for (a, b, y) in three_class_rows() {
        text += &format!("{a},{b},{y}\n");
    }
    std::fs::write(&own, text).unwrap();
    let prune = |data: &Path, out: &str| {
        let out = t.path().join(out);
        ant(&[
            "prune",
            "--model",
            s(&model),
            "--data",
            s(data),
            "--min-reach",
            "0.01",
            "--out",
            s(&out),
        ])
    };
    let o = prune(&own, "p");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // No test rows: a model fitted in memory has none.
    assert!(v["test_multi_path_before"].is_null(), "{v}");
    assert!(v["valid_multi_path_before"].as_f64().is_some(), "{v}");
    // Half of its rows are not its rows.
    let text = std::fs::read_to_string(&own).unwrap();
    let half: Vec<&str> = text.lines().take(46).collect();
    let half_file = t.path().join("half.csv");
    std::fs::write(&half_file, half.join("\n") + "\n").unwrap();
    assert_clean_error(
        &prune(&half_file, "q"),
        &["half.csv", "not the data the model was trained on"],
    );
    assert!(!t.path().join("q").exists());
}

/// Prunes into one directory run one after the other; the result is whole.
#[test]
fn prunes_into_one_directory_do_not_mix() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let model = t.path().join("m");
    ok(&train_cls(&data, &model, &["--accept", "paper"]));
    let out = t.path().join("o");
    // While another command holds the directory, prune is refused and writes nothing.
    let held = ant::run::DirLock::take(&out, false).unwrap();
    let o = ant_with(
        "prune --min-reach 0",
        &["--model", s(&model), "--data", s(&data), "--out", s(&out)],
    );
    assert_clean_error(&o, &["another run is using this directory"]);
    assert!(!out.join("tree.json").exists());
    drop(held);
    let prune = |reach: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
            .args(["prune", "--model", s(&model), "--data", s(&data)])
            .args(["--min-reach", reach, "--out", s(&out), "--force"])
            .output()
            .unwrap()
    };
    for _ in 0..4 {
        let (a, b) = std::thread::scope(|sc| {
            let a = sc.spawn(|| prune("0"));
            let b = sc.spawn(|| prune("1"));
            (a.join().unwrap(), b.join().unwrap())
        });
        // One may be refused (the other holds the lock); what is there loads.
        for o in [&a, &b] {
            if !o.status.success() {
                assert_clean_error(o, &["another run is using this directory"]);
            }
        }
        assert!(a.status.success() || b.status.success());
        let e = ant(&["eval", "--model", s(&out), "--data", s(&data)]);
        ok(&e);
        assert!(!out.join("run.lock").exists());
    }
}

/// A prune that fails (its data is not the model's) leaves no empty directory where it
/// was to write.
#[test]
fn a_failed_prune_leaves_no_empty_directory() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let a = t.path().join("a");
    ok(&train_cls(&data, &a, &[]));
    let other = t.path().join("other.csv");
    std::fs::write(&other, "x,z\n1,2\n3,4\n").unwrap();
    let p = t.path().join("pruned");
    let o = ant(&[
        "prune",
        "--model",
        s(&a),
        "--data",
        s(&other),
        "--min-reach",
        "0.1",
        "--out",
        s(&p),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!p.exists(), "an empty {} is left", p.display());
}
