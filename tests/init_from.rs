//! The pretrained start (`--init-from DIR`, the paper's `*` rows): an ANT whose modules
//! start from a trained single-path CNN.

use std::path::Path;

mod common;

use ant::Dataset;
use ant::data::idx::load_idx_dir;
use ant::{Ablation, Accept, Ant, AntParams, Augment, Baseline, Inference, Preset};
use burn::prelude::Device;
use common::*;

/// 400 training and 100 test MNIST images from the repository.
fn mnist() -> (Dataset, Dataset) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let (train, test) = load_idx_dir(&dir).expect("the repository ships MNIST in data/mnist");
    (train.take_first(400), test.take_first(100))
}

/// mnist-c's settings for a small, quick run: two transformers at most on a path.
fn quick() -> AntParams {
    AntParams::new(Preset::MnistC)
        .with_augment(Some(Augment::None))
        .with_max_depth(2)
        .with_batch_size(64)
        .with_patience(Some(2))
        .with_seed(3)
}

/// A CNN baseline of two transformers trained a few epochs, saved in `dir`.
fn cnn(dir: &Path, train: &Dataset) -> Ant {
    let p = quick()
        .with_baseline(Some(Baseline::Cnn))
        .with_refine_epochs(Some(4));
    let cnn = Ant::fit(p, train, &Device::flex(), &mut ant::observe::Silent).unwrap();
    assert_eq!(
        cnn.topology().transformers(),
        2,
        "the CNN has two transformers"
    );
    cnn.save(dir).unwrap();
    cnn
}

fn probabilities(model: &Ant, data: &Dataset) -> Vec<f32> {
    model.predict(data, Inference::MultiPath).unwrap().values
}

#[test]
fn a_one_path_tree_as_deep_as_the_cnn_starts_as_the_cnn() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = mnist();
    let dir = tmp.path().join("cnn");
    let cnn = cnn(&dir, &train);
    // Only deepening, one level: the root starts from the CNN's first transformer, the
    // deepen candidate from its second and its head, i.e. the CNN itself. A learning rate
    // of 1e-30 leaves every weight as it started (no f32 weight moves by 1e-30).
    let p = quick()
        .with_ablation(Ablation::NoRouter)
        .with_max_depth(1)
        .with_epochs_node(1)
        .with_refine_epochs(Some(0))
        .with_lr(1e-30)
        .with_accept(Accept::Paper)
        .with_init_from(Some(dir.clone().into()));
    let ant = Ant::fit(p, &train, &Device::flex(), &mut ant::observe::Silent).unwrap();
    assert_eq!(
        ant.topology(),
        cnn.topology(),
        "the grown tree is the CNN's"
    );
    assert_eq!(probabilities(&ant, &test), probabilities(&cnn, &test));
    // The saved model records what it started from.
    assert_eq!(ant.meta().config.init_from(), Some(dir.as_path()));

    // Fresh modules give other predictions (the start is what made them equal).
    let fresh = quick()
        .with_ablation(Ablation::NoRouter)
        .with_max_depth(1)
        .with_epochs_node(1)
        .with_refine_epochs(Some(0))
        .with_lr(1e-30)
        .with_accept(Accept::Paper);
    let fresh = Ant::fit(fresh, &train, &Device::flex(), &mut ant::observe::Silent).unwrap();
    assert_ne!(probabilities(&fresh, &test), probabilities(&cnn, &test));
}

#[test]
fn a_split_starts_its_router_from_the_cnn_and_trains_as_usual() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = mnist();
    let dir = tmp.path().join("cnn");
    let cnn = cnn(&dir, &train);
    let p = quick()
        .with_epochs_node(3)
        .with_refine_epochs(Some(2))
        .with_accept(Accept::Paper)
        .with_init_from(Some(dir.clone().into()));
    let ant = Ant::fit(p, &train, &Device::flex(), &mut ant::observe::Silent).unwrap();
    // Trained from the CNN's start it is at least about as good on these rows as the
    // CNN (a sanity bound: 100 test images).
    let (a, c) = (
        ant.evaluate(&test).unwrap().multi_path,
        cnn.evaluate(&test).unwrap().multi_path,
    );
    assert!(
        a <= c + 10.0,
        "ANT from the CNN {a}% against the CNN's {c}%"
    );
}

#[test]
fn wrong_starts_are_one_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, _) = mnist();
    let dir = tmp.path().join("cnn");
    cnn(&dir, &train);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let out = tmp.path().join("out");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "train",
            "--data",
            s(&data),
            "--train-limit",
            "400",
            "--epochs-node",
            "1",
            "--refine-epochs",
            "1",
            "--max-depth",
            "1",
            "--out",
            s(&out),
            "--force",
        ];
        args.extend_from_slice(extra);
        ant(&args)
    };
    let cnn_dir = s(&dir);
    // Another preset.
    let o = run(&["--preset", "mnist-a", "--init-from", cnn_dir]);
    assert_clean_error(&o, &[cnn_dir, "preset mnist-c", "mnist-a"]);
    // Another seed: other validation rows, which the CNN trained on.
    let o = run(&["--preset", "mnist-c", "--seed", "4", "--init-from", cnn_dir]);
    assert_clean_error(&o, &[cnn_dir, "other validation rows", "--seed 3"]);
    // Other rows: a --train-limit whose validation rows the CNN trained on, and a CNN
    // of another data set, are refused.
    let o = ant_with(
        "train --preset mnist-c --seed 3 --train-limit 300 --epochs-node 1 --refine-epochs 1 --max-depth 1 --force",
        &["--data", s(&data), "--out", s(&out), "--init-from", cnn_dir],
    );
    assert_clean_error(
        &o,
        &[cnn_dir, "other rows than this run's", "--train-limit"],
    );
    let other = tmp.path().join("other");
    let (_, test) = load_idx_dir(&data).unwrap();
    cnn(&other, &test.take_first(400));
    let o = run(&[
        "--preset",
        "mnist-c",
        "--seed",
        "3",
        "--init-from",
        s(&other),
    ]);
    assert_clean_error(&o, &[s(&other), "other rows than this run's"]);
    // A missing directory.
    let missing = tmp.path().join("nothing");
    let o = run(&["--preset", "mnist-c", "--init-from", s(&missing)]);
    assert_clean_error(&o, &[s(&missing), "no such directory"]);
    // Another pooling rule makes other transformers.
    let o = run(&[
        "--preset",
        "mnist-c",
        "--pool-rule",
        "every",
        "--init-from",
        cnn_dir,
    ]);
    assert_clean_error(&o, &[cnn_dir, "--pool-rule"]);
    // A baseline has nothing to start.
    let o = run(&[
        "--preset",
        "mnist-c",
        "--baseline",
        "cnn",
        "--init-from",
        cnn_dir,
    ]);
    assert_clean_error(&o, &["--init-from", "baseline cnn"]);
    // A model of other inputs: a table's.
    let table = tmp.path().join("t.csv");
    let rows: String = (0..40)
        .map(|i| format!("{},{}\n", i as f32 / 40.0, i % 2))
        .collect();
    std::fs::write(&table, format!("x,y\n{rows}")).unwrap();
    let tab = tmp.path().join("tab");
    let o = ant_with(
        "train --preset tabular --target y --task classification --epochs-node 1 --refine-epochs 1 --max-depth 1",
        &["--data", s(&table), "--out", s(&tab)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["--preset", "mnist-c", "--init-from", s(&tab)]);
    assert_clean_error(&o, &[s(&tab), "preset tabular"]);
    // An ensemble.
    let ens = tmp.path().join("ens");
    let o = ant_with(
        "train --preset mnist-c --train-limit 400 --baseline cnn --refine-epochs 1 --max-depth 2 --ensemble 2",
        &["--data", s(&data), "--out", s(&ens)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["--preset", "mnist-c", "--init-from", s(&ens)]);
    assert_clean_error(&o, &[s(&ens), "ensemble"]);
    // A grown tree with routers is not a single path.
    let grown = tmp.path().join("grown");
    let o = ant_with(
        "train --preset mnist-c --train-limit 400 --epochs-node 2 --refine-epochs 0 --max-depth 1 --accept paper --router-balance 1",
        &["--data", s(&data), "--out", s(&grown)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(grown.join("tree.json")).unwrap()).unwrap();
    // (any gain keeps the split, and one split with balanced routing lowers the NLL)
    assert!(
        tree["topology"]["nodes"].as_array().unwrap().len() > 1,
        "{tree}"
    );
    let o = run(&["--preset", "mnist-c", "--init-from", s(&grown)]);
    assert_clean_error(&o, &[s(&grown), "single-path"]);
    // Settings named as their flags spell them.
    let o = run(&[
        "--preset",
        "mnist-c",
        "--image-norm",
        "mean-std",
        "--init-from",
        cnn_dir,
    ]);
    assert_clean_error(&o, &[cnn_dir, "--image-norm mean, this run uses mean-std"]);
    let o = run(&[
        "--preset",
        "mnist-c",
        "--seed",
        "3",
        "--valid-rows",
        "last",
        "--init-from",
        cnn_dir,
    ]);
    assert_clean_error(
        &o,
        &[cnn_dir, "--valid-rows drawn; this run's --valid-rows last"],
    );
    // An ensemble's members each hold out their own rows: refused before member 0 trains.
    let ens_out = tmp.path().join("ens-from-cnn");
    let o2 = ant(&[
        "train",
        "--preset",
        "mnist-c",
        "--data",
        s(&data),
        "--train-limit",
        "400",
        "--seed",
        "3",
        "--ensemble",
        "2",
        "--init-from",
        cnn_dir,
        "--out",
        s(&ens_out),
    ]);
    assert_clean_error(
        &o2,
        &[
            cnn_dir,
            "each ensemble member holds out its own",
            "--member K",
        ],
    );
    assert!(!ens_out.join("member-0").exists(), "nothing trained");
    // The CNN a run starts from is one of its inputs, never its output.
    let before = std::fs::read(dir.join("tree.json")).unwrap();
    let o = ant(&[
        "train",
        "--preset",
        "mnist-c",
        "--data",
        s(&data),
        "--train-limit",
        "400",
        "--seed",
        "3",
        "--init-from",
        cnn_dir,
        "--out",
        cnn_dir,
        "--force",
    ]);
    assert_clean_error(&o, &[cnn_dir, "is the input"]);
    assert_eq!(std::fs::read(dir.join("tree.json")).unwrap(), before);
    // Nothing was written by the refused runs.
    assert!(!out.join("tree.json").exists());
}

/// The CNN a run starts from is an input like `--data`: `run.json` keeps
/// its checksum, and `--resume` refuses a start that changed since.
#[test]
fn a_run_resumes_only_from_the_same_start() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, _) = mnist();
    // A start whose path is not UTF-8: taken as --data and --out are, and recorded in
    // run.json as its bytes.
    use std::os::unix::ffi::OsStrExt;
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(b"cn\xffn"));
    cnn(&dir, &train);
    let shown = dir.display().to_string();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let out = tmp.path().join("run");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args([
            "train",
            "--preset",
            "mnist-c",
            "--train-limit",
            "400",
            "--seed",
            "3",
        ])
        .args([
            "--epochs-node",
            "2",
            "--refine-epochs",
            "2",
            "--max-depth",
            "2",
            "--batch-size",
            "64",
        ])
        .args(["--data", s(&data), "--out", s(&out), "--init-from"])
        .arg(&dir)
        .env("ANT_FAULT_AFTER_WRITES", "4")
        .output()
        .unwrap();
    assert!(
        !o.status.success() && out.join("checkpoint").is_dir(),
        "{}",
        stderr(&o)
    );
    // The start replaced meanwhile (here: its tree.json rewritten with another byte).
    let tree = dir.join("tree.json");
    let mut text = std::fs::read(&tree).unwrap();
    text.push(b'\n');
    std::fs::write(&tree, &text).unwrap();
    let o = ant(&["train", "--resume", s(&out)]);
    assert_clean_error(&o, &[&shown, "changed since the run started from it"]);
    // Put back, the run goes on.
    text.pop();
    std::fs::write(&tree, &text).unwrap();
    let o = ant(&["train", "--resume", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The route the ensemble error names works: each member's CNN trained as that member
/// (`--baseline cnn --ensemble 2 --member K`), then each member from its own
/// (`--ensemble 2 --member K --init-from`). `ensemble.json` names no start; a member
/// trained with another option is refused naming it; `--resume` does not train a
/// missing member from new modules.
#[test]
fn ensemble_members_start_each_from_their_own_cnn() {
    let tmp = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let train = |out: &Path, member: &str, extra: &[&str]| {
        let mut args = vec![
            "train",
            "--preset",
            "mnist-c",
            "--data",
            s(&data),
            "--train-limit",
            "300",
            "--seed",
            "5",
            "--refine-epochs",
            "1",
            "--batch-size",
            "64",
            "--ensemble",
            "2",
            "--member",
            member,
            "--out",
            s(out),
        ];
        if !extra.contains(&"--baseline") {
            args.extend(["--epochs-node", "1", "--max-depth", "1"]);
        }
        args.extend_from_slice(extra);
        ant(&args)
    };
    let cnns = tmp.path().join("cnns");
    for k in ["0", "1"] {
        ok(&train(&cnns, k, &["--baseline", "cnn"]));
    }
    let ens = tmp.path().join("ens");
    let start = |k: usize| cnns.join(format!("member-{k}"));
    ok(&train(&ens, "0", &["--init-from", s(&start(0))]));
    // Member 1 from member 0's CNN: that CNN trained on member 1's validation rows.
    let o = train(&ens, "1", &["--init-from", s(&start(0))]);
    assert_clean_error(&o, &["--init-from for member 1", "other validation rows"]);
    // Another option than member 0's is named.
    let o = train(&ens, "1", &["--init-from", s(&start(1)), "--lr", "0.01"]);
    assert_clean_error(&o, &["ensemble.json", "--lr 0.001, not 0.01"]);
    // Without a start: the ensemble's members each have one.
    let o = train(&ens, "1", &[]);
    assert_clean_error(&o, &["started from a CNN of its own"]);
    // --resume has no start for member 1 to train from.
    let o = ant(&["train", "--resume", s(&ens)]);
    assert_clean_error(
        &o,
        &[
            "member 1 starts from a CNN of its own",
            "--member 1 --init-from",
        ],
    );
    ok(&train(&ens, "1", &["--init-from", s(&start(1))]));
    let file = std::fs::read_to_string(ens.join("ensemble.json")).unwrap();
    assert!(
        file.contains("\"member_starts\": true") && !file.contains("cnns"),
        "{file}"
    );
    for k in 0..2 {
        let m = Ant::load(ens.join(format!("member-{k}")), &Device::flex()).unwrap();
        assert_eq!(m.meta().config.init_from(), Some(start(k).as_path()));
    }
    ok(&ant(&["eval", "--model", s(&ens), "--data", s(&data)]));
}
