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

/// The N-th file write of a prune fails as on a full disk, for every N: the prune exits
/// 2, and the directory holds no model (it was empty before), or the pruned model with
/// its `prune.json`; a second prune then needs no `--force`. The same for an ensemble,
/// member by member.
#[test]
fn a_prune_that_fails_at_any_write_leaves_no_half_model() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let single = t.path().join("m");
    ok(&train_cls(&data, &single, &[]));
    let ens = t.path().join("e");
    ok(&train_cls(&data, &ens, &["--ensemble", "2"]));
    for (model, trees) in [
        (&single, vec![String::new()]),
        (&ens, vec!["member-0/".into(), "member-1/".into()]),
    ] {
        for n in 1.. {
            let out = t.path().join(format!(
                "p{n}-{}",
                model.file_name().unwrap().to_str().unwrap()
            ));
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
                .args(["prune", "--model", s(model), "--data", s(&data)])
                .args(["--min-reach", "0.2", "--out", s(&out)])
                .env("ANT_FAULT_FAIL_WRITE", n.to_string())
                .output()
                .unwrap();
            for tree in &trees {
                let (model_there, summary) = (
                    out.join(format!("{tree}tree.json")).exists(),
                    out.join(format!("{tree}prune.json")).exists(),
                );
                assert_eq!(model_there, summary, "write {n}, {tree}: {}", stderr(&o));
            }
            if o.status.success() {
                assert!(n > 5, "only {} writes", n - 1);
                break;
            }
            assert_clean_error(&o, &["No space left on device"]);
            // A whole tree left where one failed to save is a member of a prune that
            // failed: the rerun replaces it (prune's own files) without --force.
            let again = ant_with(
                "prune --min-reach 0.2",
                &["--model", s(model), "--data", s(&data), "--out", s(&out)],
            );
            if !again.status.success() {
                assert_clean_error(&again, &["--force"]);
                ok(&ant_with(
                    "prune --min-reach 0.2 --force",
                    &["--model", s(model), "--data", s(&data), "--out", s(&out)],
                ));
            }
        }
    }
}

/// A model tested on a file of its own (`train --test-data`) is pruned from any
/// directory (the file is recorded by its absolute path); when the file moved, or was a
/// pipe of the training command, the prune warns and leaves the test scores null, and
/// `prune --test-data` scores them on the file given.
#[test]
fn a_model_with_its_own_test_file_is_pruned_from_anywhere() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let test = t.path().join("test.csv");
    std::fs::copy(&data, &test).unwrap();
    let m = t.path().join("m");
    // Given relative to the training directory.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .current_dir(t.path())
        .args([
            "train",
            "--preset",
            "tabular",
            "--data",
            "cls.csv",
            "--test-data",
            "test.csv",
        ])
        .args([
            "--target",
            "y",
            "--task",
            "classification",
            "--epochs-node",
            "2",
        ])
        .args(["--refine-epochs", "1", "--max-depth", "2", "--out", "m"])
        .output()
        .unwrap();
    ok(&o);
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let prune = |out: &str, extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
            .current_dir(&elsewhere)
            .args([
                "prune",
                "--model",
                s(&m),
                "--data",
                s(&data),
                "--min-reach",
                "0.1",
            ])
            .args(["--out", out])
            .args(extra)
            .output()
            .unwrap()
    };
    let scored = |o: &std::process::Output| json_of(o)["test_multi_path_before"].as_f64();
    let o = prune("p1", &[]);
    ok(&o);
    let first = scored(&o).expect("test scores");
    std::fs::rename(&test, t.path().join("moved.csv")).unwrap();
    let o = prune("p2", &[]);
    ok(&o);
    assert_eq!(scored(&o), None);
    let e = stderr(&o);
    assert!(
        e.contains("warning: ") && e.contains("test.csv") && e.contains("--test-data"),
        "{e}"
    );
    let o = prune("p3", &["--test-data", "../moved.csv"]);
    ok(&o);
    assert_eq!(scored(&o), Some(first));
    // A model tested on a held-out fraction has no test file to give.
    let f = t.path().join("f");
    ok(&train_cls(&data, &f, &[]));
    let o = ant(&[
        "prune",
        "--model",
        s(&f),
        "--data",
        s(&data),
        "--min-reach",
        "0.1",
    ]
    .into_iter()
    .chain(["--out", s(&t.path().join("p4")), "--test-data", s(&data)])
    .collect::<Vec<_>>());
    assert_clean_error(&o, &["--test-data", "a held-out fraction of --data"]);
    // A pipe as the test file: gone once training ends.
    let piped = t.path().join("piped");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args([
            "train",
            "--preset",
            "tabular",
            "--data",
            s(&data),
            "--test-data",
            "/dev/stdin",
        ])
        .args([
            "--target",
            "y",
            "--task",
            "classification",
            "--epochs-node",
            "2",
        ])
        .args([
            "--refine-epochs",
            "1",
            "--max-depth",
            "2",
            "--out",
            s(&piped),
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let rows = std::fs::read(&data).unwrap();
    child.stdin.take().unwrap().write_all(&rows).unwrap();
    ok(&child.wait_with_output().unwrap());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args([
            "prune",
            "--model",
            s(&piped),
            "--data",
            s(&data),
            "--min-reach",
            "0.1",
        ])
        .args(["--out", s(&t.path().join("p5"))])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(scored(&o), None, "{}", stderr(&o));
}
