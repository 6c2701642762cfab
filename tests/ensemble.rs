//! Ensembles (`--ensemble N`, `--member K`): members trained in separate processes make
//! the same ensemble as one sequential run, the ensemble predicts with the mean of its
//! members' predictions, members started at once must share their parameters, `--resume`
//! says what there is to resume, and bad input is one clear error.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ant::data::source::load_test_for;
use ant::ensemble::Ensemble;
use ant::{Ant, Inference};

mod common;
use common::{ant, assert_clean_error, cls_csv, s, stderr, train_cls};

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

fn iris() -> String {
    repo("data/small/iris.csv")
}

/// `ant train` on iris with a tiny schedule, into `out`, with `extra` flags.
fn train_args<'a>(data: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "train",
        "--preset",
        "tabular",
        "--data",
        data,
        "--target",
        "4",
        "--skip-rows",
        "1",
        "--task",
        "classification",
        "--out",
        out,
        "--epochs-node",
        "20",
        "--refine-epochs",
        "3",
        "--lr",
        "0.01",
        "--max-depth",
        "2",
        "--batch-size",
        "32",
        // Split-only trees that keep any gain: members have routers, so single-path
        // differs from multi-path.
        "--ablation",
        "no-transformer",
        "--accept",
        "paper",
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    args
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ant-ensemble-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An ensemble of 2 trained by one sequential `--ensemble 2` run, once for all tests.
fn sequential() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("sequential").join("ens");
        let data = iris();
        let r = ant(&train_args(&data, s(&dir), &["--ensemble", "2"]));
        assert!(r.status.success(), "{}", stderr(&r));
        dir
    })
}

fn eval_json(model: &Path) -> serde_json::Value {
    let e = ant(&["eval", "--model", s(model), "--data", &iris(), "--json"]);
    assert!(e.status.success(), "{}", stderr(&e));
    serde_json::from_slice(&e.stdout).expect("one JSON object")
}

/// `ant predict` of the iris rows (JSON lines), multi-path or single-path.
fn predict_lines(model: &Path, single: bool) -> Vec<serde_json::Value> {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = scratch(&format!("predict-{call}"));
    let file = out.join("p.jsonl");
    let data = iris();
    let mut args = vec![
        "predict",
        "--model",
        s(model),
        "--input",
        &data,
        "--output",
        s(&file),
    ];
    if single {
        args.push("--single-path");
    }
    let r = ant(&args);
    assert!(r.status.success(), "{}", stderr(&r));
    std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn members_trained_in_separate_processes_make_the_same_ensemble() {
    let seq = sequential();
    let dir = scratch("parallel").join("ens");
    let data = iris();
    // Both members at once, each in its own process, into the same directory.
    let spawn = |k: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
            .args(train_args(
                &data,
                s(&dir),
                &["--ensemble", "2", "--member", k],
            ))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("0"), spawn("1"));
    for c in [a, b] {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let read = |d: &Path, f: &str| std::fs::read(d.join(f)).unwrap();
    assert_eq!(read(seq, "ensemble.json"), read(&dir, "ensemble.json"));
    for m in ["member-0", "member-1"] {
        let (x, y) = (seq.join(m), dir.join(m));
        assert_eq!(read(&x, "tree.json"), read(&y, "tree.json"), "{m}");
    }
    // (The weight files are not compared byte for byte: their header's key order
    // varies. The predictions below depend on every weight.)
    for single in [false, true] {
        assert_eq!(predict_lines(seq, single), predict_lines(&dir, single));
    }
    assert_eq!(eval_json(seq), eval_json(&dir));
}

#[test]
fn eval_json_describes_the_ensemble_and_each_member() {
    let v = eval_json(sequential());
    assert_eq!(v["ensemble_size"], 2);
    assert_eq!(v["task"], "classification");
    assert_eq!(v["preset"], "tabular");
    // A seeded 20% of the 150 rows, the same for every member.
    assert_eq!(v["test_samples"], 30);
    for k in [
        "multi_path_error",
        "single_path_error",
        "least_likely_path_error",
        "params_total",
        "params_single_path_avg",
        "flops_multi_path",
        "flops_single_path",
        "nodes",
        "leaves",
        "routers",
        "transformers",
        "depth",
    ] {
        assert!(v[k].is_number(), "{k} missing in {v}");
    }
    let members = v["members"].as_array().expect("members");
    assert_eq!(members.len(), 2);
    let mut params = 0;
    let mut path_params = 0.0;
    for (k, m) in members.iter().enumerate() {
        assert_eq!(m["member"], k);
        assert_eq!(m["test_samples"], 30);
        for key in [
            "multi_path_error",
            "single_path_error",
            "params_total",
            "params_single_path_avg",
        ] {
            assert!(m[key].is_number(), "member {k}: {key} missing in {m}");
        }
        // A member scores as the same model loaded alone.
        let alone = eval_json(&sequential().join(format!("member-{k}")));
        assert_eq!(m["multi_path_error"], alone["multi_path_error"]);
        assert_eq!(m["single_path_error"], alone["single_path_error"]);
        assert_eq!(m["params_total"], alone["params_total"]);
        params += m["params_total"].as_u64().unwrap();
        path_params += m["params_single_path_avg"].as_f64().unwrap();
    }
    // The ensemble's parameters are its members'.
    assert_eq!(v["params_total"].as_u64().unwrap(), params);
    let avg = v["params_single_path_avg"].as_f64().unwrap();
    assert!((avg - path_params).abs() < 1e-9, "{avg} vs {path_params}");
}

#[test]
fn the_ensemble_predicts_the_mean_of_its_members() {
    let dir = sequential();
    let device = ant::default_device();
    let ens = Ensemble::load(dir, &device).unwrap();
    let members: Vec<Ant> = (0..2)
        .map(|k| Ant::load(dir.join(format!("member-{k}")), &device).unwrap())
        .collect();
    // Members differ: their own seeds and validation rows.
    assert_ne!(
        members[0].meta().config.seed(),
        members[1].meta().config.seed()
    );
    assert!(members.iter().all(|m| m.topology().routers() > 0));
    let m0 = &members[0].meta();
    let test = load_test_for(
        Path::new(&iris()),
        &m0.provenance.test_split,
        m0.provenance.target.as_ref(),
        m0.class_names.as_deref(),
    )
    .unwrap();
    for mode in [Inference::MultiPath, Inference::SinglePath] {
        let p = ens.predict(&test, mode).unwrap();
        let q: Vec<_> = members
            .iter()
            .map(|m| m.predict(&test, mode).unwrap())
            .collect();
        assert_ne!(q[0].values, q[1].values, "{mode:?}: members should differ");
        if mode == Inference::SinglePath {
            // Each member's own single-path prediction, not its mixture.
            let multi = members[0].predict(&test, Inference::MultiPath).unwrap();
            assert_ne!(q[0].values, multi.values);
        }
        assert_eq!(p.values.len(), q[0].values.len());
        for (i, v) in p.values.iter().enumerate() {
            let want = (q[0].values[i] + q[1].values[i]) / 2.0;
            assert!((v - want).abs() < 1e-6, "{mode:?} value {i}: {v} vs {want}");
        }
        for row in p.values.chunks(p.k) {
            let total: f32 = row.iter().sum();
            assert!((total - 1.0).abs() < 1e-5, "probabilities sum to {total}");
        }
        assert_eq!(p.member_leaves, vec![q[0].leaf.clone(), q[1].leaf.clone()]);
        // eval's ensemble error is the error of these mean probabilities.
        let ant::Targets::Classes { labels, .. } = test.targets() else {
            unreachable!()
        };
        let wrong = p
            .classes()
            .iter()
            .zip(labels)
            .filter(|(c, l)| **c != **l as usize)
            .count();
        let error = 100.0 * wrong as f64 / labels.len() as f64;
        let ev = ens.evaluate(&test).unwrap().ensemble;
        let got = match mode {
            Inference::MultiPath => ev.multi_path,
            _ => ev.single_path,
        };
        assert!((got - error).abs() < 1e-9, "{mode:?}: {got} vs {error}");
    }
    // The command line: `predict` on the ensemble gives the mean of `predict` on each
    // member loaded as a plain model.
    let p = predict_lines(dir, false);
    let q0 = predict_lines(&dir.join("member-0"), false);
    let q1 = predict_lines(&dir.join("member-1"), false);
    assert_eq!(p.len(), 150);
    for (i, line) in p.iter().enumerate() {
        let probs = line["probabilities"].as_array().unwrap();
        for (j, v) in probs.iter().enumerate() {
            let a = q0[i]["probabilities"][j].as_f64().unwrap();
            let b = q1[i]["probabilities"][j].as_f64().unwrap();
            let v = v.as_f64().unwrap();
            assert!((v - (a + b) / 2.0).abs() < 1e-6, "row {i} class {j}");
        }
        let leaves = &line["leaves"];
        assert_eq!(leaves[0], q0[i]["leaf"], "row {i}");
        assert_eq!(leaves[1], q1[i]["leaf"], "row {i}");
    }
}

#[test]
fn a_missing_member_is_an_error_until_resume_trains_it() {
    let dir = scratch("missing").join("ens");
    let data = iris();
    let r = ant(&train_args(
        &data,
        s(&dir),
        &["--ensemble", "2", "--member", "0"],
    ));
    assert!(r.status.success(), "{}", stderr(&r));
    let e = ant(&["eval", "--model", s(&dir), "--data", &data, "--json"]);
    assert_clean_error(&e, &["member-1", "member 1 of 2 is missing"]);
    let p = ant(&["predict", "--model", s(&dir), "--input", &data]);
    assert_clean_error(&p, &["member-1", "missing"]);
    let i = ant(&["inspect", "--model", s(&dir)]);
    assert!(i.status.success(), "{}", stderr(&i));
    let text = String::from_utf8_lossy(&i.stdout);
    assert!(text.contains("ensemble of 2 members"), "{text}");
    assert!(text.contains("member 0 (seed"), "{text}");
    assert!(text.contains("member-1): missing"), "{text}");
    // `--resume DIR` finishes the ensemble: the same as the sequential run's.
    let r = ant(&["train", "--resume", s(&dir)]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(eval_json(&dir), eval_json(sequential()));
}

/// A file of the user's in member 1's directory is refused before member 0 trains:
/// every member's directory is checked before the first trains.
#[test]
fn a_users_file_in_any_member_is_refused_before_training() {
    let dir = scratch("users-file").join("ens");
    std::fs::create_dir_all(dir.join("member-1")).unwrap();
    std::fs::write(dir.join("member-1/report.json"), "the user's\n").unwrap();
    let data = iris();
    let r = ant(&train_args(&data, s(&dir), &["--ensemble", "2", "--force"]));
    assert_clean_error(&r, &["member-1", "report.json", "did not write"]);
    assert!(!dir.join("member-0").exists(), "member 0 was trained first");
    assert_eq!(
        std::fs::read(dir.join("member-1/report.json")).unwrap(),
        b"the user's\n"
    );
}

#[test]
fn member_flags_out_of_range_or_alone_are_refused() {
    let dir = scratch("flags");
    let data = iris();
    let out = dir.join("ens");
    let r = ant(&train_args(
        &data,
        s(&out),
        &["--ensemble", "2", "--member", "2"],
    ));
    assert_clean_error(&r, &["--member 2", "--ensemble 2"]);
    let r = ant(&train_args(&data, s(&out), &["--member", "0"]));
    assert_clean_error(&r, &["--member", "--ensemble"]);
    let r = ant(&train_args(&data, s(&out), &["--ensemble", "0"]));
    assert_clean_error(&r, &["--ensemble", "at least 1"]);
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn members_of_other_data_or_presets_are_refused() {
    let seq = sequential();
    let data = iris();
    let wine = repo("data/small/wine_data.csv");
    // Training a member on other data into the ensemble's directory.
    let copy = scratch("other-data").join("ens");
    copy_dir(seq, &copy);
    std::fs::remove_dir_all(copy.join("member-1")).unwrap();
    let mut args = train_args(&wine, s(&copy), &["--ensemble", "2", "--member", "1"]);
    args[6] = "13"; // wine's target column
    let r = ant(&args);
    assert_clean_error(&r, &["ensemble.json", "wine_data.csv"]);
    assert!(!copy.join("member-1").exists(), "nothing is written");
    // Another size into the same directory.
    let r = ant(&train_args(
        &data,
        s(&copy),
        &["--ensemble", "3", "--member", "2"],
    ));
    assert_clean_error(&r, &["ensemble.json", "--ensemble 2"]);

    // ensemble.json saying other data or another preset than the members were trained on.
    let json = std::fs::read_to_string(seq.join("ensemble.json")).unwrap();
    let edited = scratch("edited-data").join("ens");
    copy_dir(seq, &edited);
    std::fs::write(
        edited.join("ensemble.json"),
        json.replace("iris.csv", "iris2.csv"),
    )
    .unwrap();
    let e = ant(&["eval", "--model", s(&edited), "--data", &data]);
    assert_clean_error(&e, &["member-0", "iris2.csv", "ensemble.json"]);
    let edited = scratch("edited-preset").join("ens");
    copy_dir(seq, &edited);
    std::fs::write(
        edited.join("ensemble.json"),
        json.replace("\"tabular\"", "\"sarcos\""),
    )
    .unwrap();
    let e = ant(&["predict", "--model", s(&edited), "--input", &data]);
    assert_clean_error(&e, &["member-0", "preset tabular", "sarcos"]);

    // A member of another ensemble (another seed) in a member's place.
    let other = scratch("other-seed").join("ens");
    let mut args = train_args(&data, s(&other), &["--ensemble", "2", "--member", "1"]);
    let seed = args.iter().position(|a| *a == "--seed").unwrap();
    args[seed + 1] = "4";
    let r = ant(&args);
    assert!(r.status.success(), "{}", stderr(&r));
    let mixed = scratch("mixed").join("ens");
    copy_dir(seq, &mixed);
    std::fs::remove_dir_all(mixed.join("member-1")).unwrap();
    copy_dir(&other.join("member-1"), &mixed.join("member-1"));
    let e = ant(&["eval", "--model", s(&mixed), "--data", &data]);
    assert_clean_error(&e, &["member-1", "not trained as member 1"]);
}

#[test]
fn an_ensemble_json_that_does_not_parse_is_one_error() {
    let dir = scratch("garbage").join("ens");
    copy_dir(sequential(), &dir);
    std::fs::write(
        dir.join("ensemble.json"),
        "{\"format\": \"ant-ensemble-1\", ",
    )
    .unwrap();
    let data = iris();
    for args in [
        vec!["eval", "--model", s(&dir), "--data", &data],
        vec!["predict", "--model", s(&dir), "--input", &data],
        vec!["inspect", "--model", s(&dir)],
    ] {
        assert_clean_error(&ant(&args), &["ensemble.json", "not an ensemble file"]);
    }
    let r = ant(&train_args(
        &data,
        s(&dir),
        &["--ensemble", "2", "--member", "1", "--force"],
    ));
    assert_clean_error(&r, &["ensemble.json", "not an ensemble file"]);
}

#[test]
fn plot_and_prune_work_member_by_member() {
    let seq = sequential();
    let dir = scratch("plot");
    let data = iris();
    let out = dir.join("tree.svg");
    let r = ant(&["plot", "--model", s(seq), "--data", &data, "--out", s(&out)]);
    assert!(r.status.success(), "{}", stderr(&r));
    for k in 0..2 {
        let svg = std::fs::read_to_string(dir.join(format!("tree-member-{k}.svg"))).unwrap();
        assert!(svg.contains("id=\"node-0\""), "member {k}");
    }
    assert!(!out.exists());

    let pruned = dir.join("pruned");
    let r = ant(&[
        "prune",
        "--model",
        s(seq),
        "--data",
        &data,
        "--min-reach",
        "0.5",
        "--out",
        s(&pruned),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let summary: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(summary["members"].as_array().unwrap().len(), 2);
    for k in 0..2 {
        let m = pruned.join(format!("member-{k}"));
        assert!(m.join("tree.json").exists() && m.join("prune.json").exists());
    }
    // The pruned ensemble is an ensemble like any other.
    let v = eval_json(&pruned);
    assert_eq!(v["ensemble_size"], 2);
    let before = eval_json(seq);
    let removed: u64 = summary["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["params_removed"].as_u64().unwrap())
        .sum();
    assert_eq!(
        v["params_total"].as_u64().unwrap() + removed,
        before["params_total"].as_u64().unwrap()
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Members started at once with other parameters: the second is refused.
#[test]
fn ensemble_members_must_share_their_parameters() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let out = t.path().join("e");
    let member = |k: &str, lr: &str, n: &str| {
        let data = data.clone();
        let out = out.clone();
        let (k, lr, n) = (k.to_string(), lr.to_string(), n.to_string());
        std::thread::spawn(move || {
            train_cls(
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

/// `--resume` of a finished ensemble has nothing to resume; of one with a member copied
/// in from another ensemble, it names that member.
#[test]
fn resuming_an_ensemble_says_what_there_is_to_resume() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let (ens, other) = (t.path().join("ens"), t.path().join("other"));
    for (out, more) in [(&ens, &[][..]), (&other, &["--seed", "9"][..])] {
        let mut extra = vec!["--ensemble", "2"];
        extra.extend_from_slice(more);
        let o = train_cls(&data, out, &extra);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_clean_error(
        &ant(&["train", "--resume", s(&ens)]),
        &["nothing to resume"],
    );
    let member = ens.join("member-1");
    std::fs::remove_dir_all(&member).unwrap();
    copy_dir(&other.join("member-1"), &member);
    assert_clean_error(
        &ant(&["train", "--resume", s(&ens)]),
        &["member-1", "was not trained as member 1 of this ensemble"],
    );
}
