//! "Nothing lost", round three: what a hostile pass over the CLI found. `ant` deletes
//! or replaces only what it can tell it wrote, every command that writes a model
//! directory holds its lock, tables are read by their column names, and every value a
//! model file or a flag carries is checked for its use.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::*;

/// A small classification table: 120 rows of two features, three classes.
fn table(dir: &Path) -> PathBuf {
    let p = dir.join("cls.csv");
    let mut text = String::from("a,b,y\n");
    for (i, r) in uniform(120, 2, 7).chunks(2).enumerate() {
        text.push_str(&format!("{},{},{}\n", r[0], r[1], i % 3));
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// `ant train` on that table with a quick schedule, into `out`, then `extra` flags.
fn train(data: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "train",
        "--preset",
        "tabular",
        "--data",
        s(data),
        "--target",
        "y",
        "--task",
        "classification",
        "--epochs-node",
        "2",
        "--refine-epochs",
        "1",
        "--max-depth",
        "2",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    ant(&args)
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// Case 1: a `checkpoint/` folder of the user's is neither used nor deleted.
#[test]
fn a_checkpoint_folder_ant_did_not_make_is_kept() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let out = t.path().join("p");
    std::fs::create_dir_all(out.join("checkpoint")).unwrap();
    std::fs::write(out.join("checkpoint/e.pt"), "mine").unwrap();
    let o = train(&data, &out, &[]);
    assert_clean_error(&o, &["checkpoint", "which ant did not write"]);
    assert_eq!(std::fs::read(out.join("checkpoint/e.pt")).unwrap(), b"mine");
    assert!(!out.join("tree.json").exists());
}

/// Case 2: names that merely end in `.tmp` are the user's.
#[test]
fn the_users_tmp_files_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let out = t.path().join("p");
    std::fs::create_dir_all(out.join(".scratch.tmp")).unwrap();
    std::fs::write(out.join(".scratch.tmp/x"), "mine").unwrap();
    std::fs::write(out.join(".notes.tmp"), "mine").unwrap();
    ok(&train(&data, &out, &[]));
    assert!(out.join("tree.json").is_file());
    assert_eq!(std::fs::read(out.join(".notes.tmp")).unwrap(), b"mine");
    assert_eq!(std::fs::read(out.join(".scratch.tmp/x")).unwrap(), b"mine");
}

/// Case 3: a report, records or pruning summary beside no model is the user's, for
/// `train` and for `prune`.
#[test]
fn descriptions_beside_no_model_are_the_users() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let model = t.path().join("m");
    ok(&train(&data, &model, &[]));
    for name in ["report.json", "records.jsonl", "prune.json"] {
        let out = t.path().join(format!("p-{name}"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(name), "mine").unwrap();
        assert_clean_error(&train(&data, &out, &[]), &[name, "which ant did not write"]);
        let o = ant_with(
            "prune --min-reach 0.5",
            &["--model", s(&model), "--data", s(&data), "--out", s(&out)],
        );
        assert_clean_error(&o, &[name, "which ant did not write"]);
        assert_eq!(std::fs::read(out.join(name)).unwrap(), b"mine", "{name}");
    }
    // A model's own descriptions are replaced with it (--force), as before.
    ok(&train(&data, &model, &["--force"]));
    assert!(model.join("report.json").is_file());
    // Found by session 27's hostile pass: a damaged manifest was one name among many
    // "which ant did not write"; it is named as the cause, and nothing is touched.
    let copy = t.path().join("damaged");
    ok(&train(&data, &copy, &[]));
    std::fs::write(copy.join("ant-files.json"), "{garbage").unwrap();
    let o = train(&data, &copy, &["--force"]);
    assert_clean_error(
        &o,
        &[
            "ant-files.json, which is not the manifest ant writes",
            "tree.json",
        ],
    );
    assert_eq!(
        std::fs::read(copy.join("ant-files.json")).unwrap(),
        b"{garbage"
    );
}

/// Case 4: prunes into one directory run one after the other; the result is whole.
#[test]
fn prunes_into_one_directory_do_not_mix() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let model = t.path().join("m");
    ok(&train(&data, &model, &["--accept", "paper"]));
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

/// Case 5: members started at once with other parameters: the second is refused.
#[test]
fn ensemble_members_must_share_their_parameters() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let out = t.path().join("e");
    let member = |k: &str, lr: &str, n: &str| {
        let data = data.clone();
        let out = out.clone();
        let (k, lr, n) = (k.to_string(), lr.to_string(), n.to_string());
        std::thread::spawn(move || {
            train(
                &data,
                &out,
                &["--ensemble", &n, "--member", &k, "--lr", &lr],
            )
        })
    };
    let (a, b) = (member("0", "0.01", "2"), member("1", "0.002", "2"));
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    assert!(
        a.status.success() != b.status.success(),
        "{}\n{}",
        stderr(&a),
        stderr(&b)
    );
    let refused = if a.status.success() { &b } else { &a };
    assert_clean_error(refused, &["ensemble.json", "members must share it"]);
    // Another size is refused too.
    let c = member("1", "0.01", "3").join().unwrap();
    assert_clean_error(&c, &["ensemble.json", "--ensemble 2, not 3"]);
}

/// The iris-like table of cases 6 and 7: named columns, a text label.
fn named(dir: &Path) -> PathBuf {
    let p = dir.join("named.csv");
    let mut text = String::from("sl,sw,pl,pw,species\n");
    for (i, r) in uniform(150, 4, 3).chunks(4).enumerate() {
        let k = i % 3;
        let cells: Vec<String> = r.iter().map(|v| (v + k as f32).to_string()).collect();
        text.push_str(&format!(
            "{},{}\n",
            cells.join(","),
            ["setosa", "versicolor", "virginica"][k]
        ));
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// `text` with its columns taken in `order` (by index), lines as they are.
fn reorder(text: &str, order: &[usize]) -> String {
    text.lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            order
                .iter()
                .map(|&j| cells[j])
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect()
}

/// Cases 6 and 7: columns are matched by the names the model saved.
#[test]
fn tables_are_read_by_column_name() {
    let t = tempfile::tempdir().unwrap();
    let data = named(t.path());
    let m = t.path().join("m");
    let o = ant_with(
        "train --preset tabular --target species --task classification --epochs-node 5 --refine-epochs 2 --max-depth 1",
        &["--data", s(&data), "--out", s(&m)],
    );
    ok(&o);
    let text = std::fs::read_to_string(&data).unwrap();
    let same = t.path().join("same.csv");
    std::fs::write(&same, reorder(&text, &[1, 0, 3, 2, 4])).unwrap();
    let shuffled = t.path().join("shuffled.csv");
    std::fs::write(&shuffled, reorder(&text, &[3, 2, 1, 0, 4])).unwrap();
    let json = |p: &Path| {
        let o = ant(&["eval", "--model", s(&m), "--data", s(p), "--json"]);
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["multi_path_error"].clone()
    };
    // The same rows with their columns in two other orders score the same (all rows:
    // neither file is the training file byte for byte).
    assert_eq!(json(&shuffled), json(&same));
    let predict = |p: &Path| ant(&["predict", "--model", s(&m), "--input", s(p)]);
    let features = t.path().join("features.csv");
    std::fs::write(&features, reorder(&text, &[0, 1, 2, 3])).unwrap();
    let features_shuffled = t.path().join("features_shuffled.csv");
    std::fs::write(&features_shuffled, reorder(&text, &[2, 0, 3, 1])).unwrap();
    let (a, b) = (predict(&features), predict(&features_shuffled));
    ok(&a);
    assert_eq!(a.stdout, b.stdout);
    // An extra column (an id) and a missing one are named, not read as features.
    let with_id = t.path().join("id.csv");
    let id: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let cells: Vec<&str> = l.split(',').collect();
            let id = if i == 0 {
                "id".to_string()
            } else {
                i.to_string()
            };
            format!("{id},{}\n", cells[..4].join(","))
        })
        .collect();
    std::fs::write(&with_id, id).unwrap();
    assert_clean_error(&predict(&with_id), &["id.csv", "not the model's: 'id'"]);
    let three = t.path().join("three.csv");
    std::fs::write(&three, reorder(&text, &[0, 1, 2])).unwrap();
    assert_clean_error(&predict(&three), &["three.csv", "missing 'pw'"]);
}

/// A header of numeric names is a header when they are the model's names.
#[test]
fn numeric_column_names_are_read_as_a_header() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("n.csv");
    let mut text = String::from("1,2,label\n");
    for (i, r) in uniform(90, 2, 5).chunks(2).enumerate() {
        text.push_str(&format!(
            "{},{},{}\n",
            r[0] + (i % 2) as f32,
            r[1],
            ["x", "y"][i % 2]
        ));
    }
    std::fs::write(&p, &text).unwrap();
    let m = t.path().join("m");
    ok(&ant_with(
        "train --preset tabular --target label --task classification --epochs-node 2 --refine-epochs 1 --max-depth 1",
        &["--data", s(&p), "--out", s(&m)],
    ));
    let input = t.path().join("in.csv");
    std::fs::write(&input, "2,1\n0.5,0.1\n0.2,0.3\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&input)]);
    ok(&o);
    // Two rows predicted: the header was not read as a row.
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(out.lines().count(), 3, "{out}");
}

/// Case 8: a normalisation no division can use is refused when the model loads.
#[test]
fn model_files_with_unusable_scales_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let m = t.path().join("m");
    ok(&train(&data, &m, &[]));
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

/// Cases 10 and 11: too little to train on is one error, before anything is written.
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
    // Images of no pixels.
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

/// Case 12 and 9: a float flag infinite in f32, and augmentation of a table, are
/// refused by name.
#[test]
fn flags_that_f32_cannot_hold_or_that_do_nothing_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let out = t.path().join("x");
    let o = train(&data, &out, &["--router-balance", "1e40"]);
    assert_clean_error(&o, &["--router-balance", "f32"]);
    let o = train(&data, &out, &["--augment", "shift"]);
    assert_clean_error(&o, &["augment", "shift"]);
    assert!(!out.exists());
}

/// Case 13: targets around 1e20 train; their MSE is finite (f64 holds it).
#[test]
fn huge_regression_targets_train() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("r.csv");
    let rows: String = uniform(200, 2, 4)
        .chunks(2)
        // Targets of about 1e20 whose squares (1e40) f32 cannot hold.
        .map(|p| {
            format!(
                "{},{},{}\n",
                p[0],
                p[1],
                (3.0 + p[0] * p[1].sin()) as f64 * 1e20
            )
        })
        .collect();
    std::fs::write(&r, format!("a,b,y\n{rows}")).unwrap();
    let out = t.path().join("x");
    let o = ant_with(
        "train --preset tabular --target y --task regression --epochs-node 2 --refine-epochs 1 --max-depth 1",
        &["--data", s(&r), "--out", s(&out)],
    );
    ok(&o);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let mse = report["multi_path_mse"].as_f64().unwrap();
    assert!(mse.is_finite() && mse > 0.0, "{report}");
}

/// Cases 14 and 15: the error says what the model wants and what was given.
#[test]
fn errors_name_the_models_kind_of_data() {
    let t = tempfile::tempdir().unwrap();
    let mnist = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let m = t.path().join("m");
    ok(&ant_with(
        "train --preset mnist-c --train-limit 200 --epochs-node 1 --refine-epochs 1 --max-depth 1",
        &["--data", s(&mnist), "--out", s(&m)],
    ));
    let data = named(t.path());
    let o = ant(&["eval", "--model", s(&m), "--data", s(&data)]);
    assert_clean_error(&o, &["named.csv", "holds a table", "1x28x28 images"]);
    // An ensemble's curves are its members'.
    let e = t.path().join("e");
    ok(&train(&table(t.path()), &e, &["--ensemble", "2"]));
    let o = ant_with(
        "curves",
        &["--run", s(&e), "--out", s(&t.path().join("c.svg"))],
    );
    assert_clean_error(&o, &["is an ensemble", "member-0"]);
}

/// Found by the audit: `Ant::save` (the CLI's and Python's) replaced a `tree.json` of
/// the user's and removed any `model-*.safetensors` that its `tree.json` did not name.
#[test]
fn saving_a_model_keeps_the_users_files() {
    use ant::{Ant, observe::Silent};
    let t = tempfile::tempdir().unwrap();
    let model = Ant::fit(
        small_params(),
        &quadrants(),
        &burn::prelude::Device::flex(),
        &mut Silent,
    )
    .unwrap();
    // A tree.json that is not ant's: refused, kept.
    let theirs = t.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("tree.json"), "{\"mine\": true}").unwrap();
    let e = model.save(&theirs).unwrap_err().to_string();
    assert!(
        e.contains("tree.json") && e.contains("which ant did not write"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(theirs.join("tree.json")).unwrap(),
        b"{\"mine\": true}"
    );
    // Beside ant's model, weights ant did not write (its manifest does not name them)
    // are the user's: the save is refused, naming them, and they stay.
    let ours = t.path().join("ours");
    model.save(&ours).unwrap();
    std::fs::write(ours.join("model-final.safetensors"), "mine").unwrap();
    let e = model.save(&ours).unwrap_err().to_string();
    assert!(
        e.contains("model-final.safetensors") && e.contains("did not write"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(ours.join("model-final.safetensors")).unwrap(),
        b"mine"
    );
    assert!(Ant::load(&ours, &burn::prelude::Device::flex()).is_ok());
}

/// Found by the audit (case 12's kind): a run whose losses went non-finite wrote them as
/// `null`, and `ant curves` refused its records ("invalid type: null").
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

/// Issue 41 (g): a weights file is named by its checksum, so one whose bytes do not
/// match its name is the user's: `train --out`, `train --force` and `prune --out`
/// refuse its directory, naming it, and it stays.
#[test]
fn a_users_file_under_a_weights_name_is_never_deleted() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let mine = "model-0123456789abcdef.safetensors";
    let check = |dir: &Path, o: &Output| {
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(mine),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(std::fs::read(dir.join(mine)).unwrap(), b"mine");
    };
    // Into a directory that holds only the user's file.
    let alone = t.path().join("alone");
    std::fs::create_dir(&alone).unwrap();
    std::fs::write(alone.join(mine), "mine").unwrap();
    check(&alone, &train(&data, &alone, &[]));
    // Over a model, with --force.
    let model = t.path().join("model");
    ok(&train(&data, &model, &[]));
    std::fs::write(model.join(mine), "mine").unwrap();
    check(&model, &train(&data, &model, &["--force"]));
    // A prune into it.
    let src = t.path().join("src");
    ok(&train(&data, &src, &[]));
    let o = ant(&[
        "prune",
        "--model",
        s(&src),
        "--data",
        s(&data),
        "--min-reach",
        "0.1",
        "--out",
        s(&alone),
    ]);
    check(&alone, &o);
}

/// Issue 41 (d): an interrupted run (checkpoints, no model yet) given where a model is
/// read says what it holds and how to go on, not "tree.json: No such file".
#[test]
fn an_interrupted_run_read_as_a_model_says_how_to_resume() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let run = t.path().join("run");
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
            "2",
            "--max-depth",
            "2",
        ])
        .args(["--data", s(&data), "--out", s(&run)])
        .env("ANT_FAULT_AFTER_WRITES", "4")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(run.join("checkpoint").is_dir() && !run.join("tree.json").exists());
    let onnx = t.path().join("m.onnx");
    let tries: [&[&str]; 4] = [
        &["eval", "--model", s(&run), "--data", s(&data)],
        &["inspect", "--model", s(&run)],
        &["predict", "--model", s(&run), "--input", s(&data)],
        &[
            "export",
            "--model",
            s(&run),
            "--format",
            "onnx",
            "--out",
            s(&onnx),
        ],
    ];
    for args in tries {
        let o = ant(args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("holds an interrupted run") && e.contains("--resume"),
            "{args:?}: {e}"
        );
    }
    let o = train(&data, &t.path().join("b"), &["--init-from", s(&run)]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("holds an interrupted run"), "--init-from: {e}");
}

/// Issue 41 (j): a picture's pixels are counted before they are allocated: one past the
/// memory this process may have (the machine's, or `ulimit -v`'s) is one error that
/// names `--width`, not an abort or the kernel's kill.
#[cfg(target_os = "linux")]
#[test]
fn pictures_too_large_for_memory_are_refused_before_they_are_drawn() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let run = t.path().join("run");
    ok(&train(&data, &run, &[]));
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

/// The hostile pass of session 18: outputs never replace another run's files, nor the
/// data a model was trained on; a run's output never holds the model it starts from;
/// an ensemble's members cannot share one read of a pipe.
#[test]
fn outputs_never_replace_what_ant_or_the_model_owns() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path());
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    ok(&train(&data, &a, &[]));
    ok(&train(&data, &b, &[]));
    let records = std::fs::read(b.join("records.jsonl")).unwrap();
    let table_bytes = std::fs::read(&data).unwrap();
    for out in [b.join("records.jsonl"), data.clone()] {
        let o = ant(&[
            "predict",
            "--model",
            s(&a),
            "--input",
            s(&data),
            "--output",
            s(&out),
        ]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {e}", out.display());
    }
    assert_eq!(std::fs::read(b.join("records.jsonl")).unwrap(), records);
    assert_eq!(std::fs::read(&data).unwrap(), table_bytes);
    // --init-from OUT/grown --out OUT: the start would be replaced under the run.
    let grown = b.join("grown");
    let before = std::fs::read(grown.join("tree.json")).unwrap();
    let o = train(&data, &b, &["--init-from", s(&grown), "--force"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("holds the input"), "{e}");
    assert_eq!(std::fs::read(grown.join("tree.json")).unwrap(), before);
    // Two members from a pipe: refused before the first trains.
    let ens = t.path().join("ens");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec \"$0\" train --preset tabular --target y --task classification --epochs-node 2 \
             --refine-epochs 1 --max-depth 2 --ensemble 2 --data <(cat '{}') --out '{}'",
            data.display(),
            ens.display()
        ))
        .arg(env!("CARGO_BIN_EXE_ant"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("not a regular file"), "{e}");
    assert!(!ens.join("member-0").join("tree.json").exists());
    // A prune that fails leaves no empty directory where it was to write.
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
