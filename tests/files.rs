//! What `ant` writes: a model changes as one unit (never a mix of two models' files), a
//! failed write stops the run with a clear error and keeps what was saved, and a run
//! killed at any moment leaves the old model or the new one, and resumes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ant::observe::Silent;
use ant::{Ant, AntParams, Dataset, Inference, Preset, Targets};

/// 200 points in [-1,1]^2, class 1 inside a circle.
fn circle() -> Dataset {
    let x: Vec<f32> = (0..400)
        .map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let labels = x
        .chunks(2)
        .map(|p| u32::from(p[0] * p[0] + p[1] * p[1] < 0.5))
        .collect();
    Dataset::new(
        x,
        vec![2],
        Targets::Classes {
            labels,
            n_classes: 2,
        },
    )
    .unwrap()
}

fn tiny(seed: u64) -> Ant {
    let params = AntParams::new(Preset::Tabular)
        .with_width(8)
        .with_epochs_node(3)
        .with_refine_epochs(Some(2))
        .with_max_depth(1)
        .with_batch_size(64)
        .with_seed(seed);
    Ant::fit(params, &circle(), &ant::default_device(), &mut Silent).unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The weights file the tree.json in `dir` names.
fn weights_file(dir: &Path) -> String {
    json(&dir.join("tree.json"))["weights"]["file"]
        .as_str()
        .unwrap()
        .to_string()
}

fn predictions(m: &Ant) -> Vec<f32> {
    m.predict(&circle(), Inference::MultiPath).unwrap().values
}

fn load(dir: &Path) -> ant::Result<Ant> {
    Ant::load(dir, &ant::default_device())
}

#[test]
fn a_saved_model_is_one_unit() {
    let (a, b) = (tiny(0), tiny(1));
    assert_ne!(predictions(&a), predictions(&b));
    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a"), tmp.path().join("b"));
    a.save(&da).unwrap();
    let wa = weights_file(&da);
    assert!(
        wa.starts_with("model-") && wa.ends_with(".safetensors"),
        "{wa}"
    );
    assert_eq!(
        names(&da),
        ["ant-files.json".into(), wa.clone(), "tree.json".into()]
    );

    // Saving another model over it switches the whole model: one weights file, the new.
    a.save(&db).unwrap();
    b.save(&db).unwrap();
    let wb = weights_file(&db);
    assert_ne!(wa, wb);
    assert_eq!(
        names(&db),
        ["ant-files.json".into(), wb.clone(), "tree.json".into()]
    );
    assert_eq!(predictions(&load(&db).unwrap()), predictions(&b));

    // A tree.json beside another model's weights is refused, naming the file.
    let mix = tmp.path().join("mix");
    b.save(&mix).unwrap();
    // The same model gives the same bytes, so the same file name.
    assert_eq!(weights_file(&mix), wb);
    std::fs::copy(da.join(&wa), mix.join(&wb)).unwrap();
    let e = load(&mix).err().unwrap().to_string();
    assert!(e.contains(&wb) && e.contains("does not belong"), "{e}");
    // ... and so is a tree.json whose weights file is missing.
    std::fs::copy(da.join("tree.json"), mix.join("tree.json")).unwrap();
    let e = load(&mix).err().unwrap().to_string();
    assert!(
        e.contains("tree.json") && e.contains(&wa) && e.contains("missing"),
        "{e}"
    );

    // A tree.json that names a path outside its directory is refused.
    let mut v = json(&da.join("tree.json"));
    v["weights"]["file"] = serde_json::json!("../b/model-x.safetensors");
    let evil = tmp.path().join("evil");
    std::fs::create_dir(&evil).unwrap();
    std::fs::write(evil.join("tree.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let e = load(&evil).err().unwrap().to_string();
    assert!(e.contains("not a weights file name"), "{e}");
}

#[test]
fn models_saved_by_earlier_versions_still_load() {
    let a = tiny(0);
    let tmp = tempfile::tempdir().unwrap();
    a.save(tmp.path()).unwrap();
    // Earlier versions: model.safetensors, a tree.json that names no weights file, and
    // no manifest.
    std::fs::remove_file(tmp.path().join("ant-files.json")).unwrap();
    let w = weights_file(tmp.path());
    std::fs::rename(tmp.path().join(&w), tmp.path().join("model.safetensors")).unwrap();
    let mut v = json(&tmp.path().join("tree.json"));
    v.as_object_mut().unwrap().remove("weights");
    std::fs::write(
        tmp.path().join("tree.json"),
        serde_json::to_vec(&v).unwrap(),
    )
    .unwrap();
    assert_eq!(predictions(&load(tmp.path()).unwrap()), predictions(&a));

    // Saving over it leaves the new layout only.
    a.save(tmp.path()).unwrap();
    assert_eq!(
        names(tmp.path()),
        ["ant-files.json".into(), w, "tree.json".into()]
    );
    assert_eq!(predictions(&load(tmp.path()).unwrap()), predictions(&a));
}

// ---------------------------------------------------------------------------------------
// `ant train` over a directory that holds a good model: failed writes and kills.

/// scikit-learn's iris table (in-repo), absolute.
fn iris() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/small/iris.csv")
        .display()
        .to_string()
}

/// A tiny run (about 20 file writes, well under a second) into `out`.
fn train_args(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "train",
        "--preset",
        "tabular",
        "--data",
        &iris(),
        "--target",
        "4",
        "--task",
        "classification",
        "--width",
        "8",
        "--epochs-node",
        "2",
        "--refine-epochs",
        "2",
        "--max-depth",
        "1",
        "--batch-size",
        "32",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(out.display().to_string());
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ant"))
}

fn resume(dir: &Path) -> Output {
    bin()
        .args(["train", "--resume", dir.to_str().unwrap()])
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The files of the model directory `from`, copied into the new directory `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Temporary files and directories left anywhere under `dir`.
fn temps(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".tmp") || name.ends_with(".part") {
            found.push(p.clone());
        }
        if p.is_dir() {
            found.extend(temps(&p));
        }
    }
    found
}

fn safetensors(dir: &Path) -> usize {
    names(dir)
        .iter()
        .filter(|n| n.ends_with(".safetensors"))
        .count()
}

fn records_without_seconds(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("records.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("seconds");
            v
        })
        .collect()
}

/// A good model A (seed 0) in `root/a`, and B: what `--force --seed 1` over A makes,
/// uninterrupted, in `root/b`. Returns both tree.json files.
fn models_a_and_b(root: &Path) -> (PathBuf, Vec<u8>, PathBuf, Vec<u8>) {
    let (a, b) = (root.join("a"), root.join("b"));
    let r = bin().args(train_args(&a, &[])).output().unwrap();
    assert!(r.status.success(), "{}", stderr(&r));
    copy_dir(&a, &b);
    let r = bin()
        .args(train_args(&b, &["--force", "--seed", "1"]))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", stderr(&r));
    let (ta, tb) = (
        std::fs::read(a.join("tree.json")).unwrap(),
        std::fs::read(b.join("tree.json")).unwrap(),
    );
    assert_ne!(ta, tb);
    (a, ta, b, tb)
}

/// What must hold in `dir` after a run over model A was stopped (by a failed write or a
/// kill): model A or model B, whole and loadable; and if the run left checkpoints,
/// `--resume` finishes it with exactly model B, leaving no temporary files. Returns
/// whether it resumed.
fn old_or_new_then_resumes(dir: &Path, ta: &[u8], b: &Path, tb: &[u8], what: &str) -> bool {
    let tree = std::fs::read(dir.join("tree.json")).unwrap();
    assert!(
        tree == ta || tree == tb,
        "{what}: tree.json is neither model"
    );
    load(dir).unwrap_or_else(|e| panic!("{what}: {e}"));
    if !dir.join("checkpoint").exists() {
        return false;
    }
    let r = resume(dir);
    assert!(r.status.success(), "{what}: {}", stderr(&r));
    assert_eq!(std::fs::read(dir.join("tree.json")).unwrap(), tb, "{what}");
    load(dir).unwrap();
    assert_eq!(safetensors(dir), 1, "{what}: {:?}", names(dir));
    assert!(temps(dir).is_empty(), "{what}: {:?}", temps(dir));
    assert!(!dir.join("checkpoint").exists(), "{what}");
    assert_eq!(
        records_without_seconds(dir),
        records_without_seconds(b),
        "{what}"
    );
    true
}

#[test]
fn every_failed_write_stops_the_run_and_keeps_what_was_saved() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, ta, b, tb) = models_a_and_b(tmp.path());
    let mut resumed = 0;
    // The N-th file write of the run fails as on a full disk, for every N.
    for n in 1.. {
        let dir = tmp.path().join(format!("fail-{n}"));
        copy_dir(&a, &dir);
        let r = bin()
            .args(train_args(&dir, &["--force", "--seed", "1"]))
            .env("ANT_FAULT_FAIL_WRITE", n.to_string())
            .output()
            .unwrap();
        if r.status.success() {
            // The run writes fewer files than that: every write has been failed once.
            assert!(n > 15, "only {} writes", n - 1);
            assert_eq!(std::fs::read(dir.join("tree.json")).unwrap(), tb);
            break;
        }
        let e = stderr(&r);
        let what = format!("write {n}: {e}");
        assert_eq!(r.status.code(), Some(2), "{what}");
        let last = e.trim().lines().last().unwrap();
        assert!(
            last.starts_with("error: ")
                && last.contains("No space left on device")
                && last.contains(dir.to_str().unwrap()),
            "{what}"
        );
        assert!(!e.contains("panicked"), "{what}");
        assert!(temps(&dir).is_empty(), "{what}: {:?}", temps(&dir));
        assert_eq!(safetensors(&dir), 1, "{what}");
        if old_or_new_then_resumes(&dir, &ta, &b, &tb, &what) {
            assert!(last.contains("--resume"), "{what}");
            resumed += 1;
        }
    }
    assert!(resumed > 10, "{resumed}");
}

/// `ulimit -f`: a write beyond the limit fails (EFBIG) instead of killing the process
/// with SIGXFSZ, and is reported like any failed write.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_file_size_limit_stops_the_run_with_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, dir) = (tmp.path().join("a"), tmp.path().join("limited"));
    let r = bin().args(train_args(&a, &[])).output().unwrap();
    assert!(r.status.success(), "{}", stderr(&r));
    copy_dir(&a, &dir);
    let ta = std::fs::read(a.join("tree.json")).unwrap();
    // 16 blocks of 512 bytes (dash): run.json and the first epoch records fit, a
    // checkpoint of a 256-wide transformer (about 30 kB) does not.
    let mut args = train_args(&dir, &["--force"]);
    let w = args.iter().position(|a| a == "--width").unwrap();
    args[w + 1] = "256".into();
    args.insert(0, env!("CARGO_BIN_EXE_ant").to_string());
    let r = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 16; exec \"$0\" \"$@\"")
        .args(&args)
        .output()
        .unwrap();
    let e = stderr(&r);
    assert_eq!(r.status.code(), Some(2), "{e}");
    let last = e.trim().lines().last().unwrap();
    assert!(
        last.starts_with("error: ")
            && last.contains("File too large")
            && last.contains(dir.join("checkpoint").to_str().unwrap())
            && last.contains("--resume"),
        "{e}"
    );
    assert!(temps(&dir).is_empty(), "{:?}", temps(&dir));
    // The model saved before is untouched and loads.
    assert_eq!(std::fs::read(dir.join("tree.json")).unwrap(), ta);
    load(&dir).unwrap();
    assert_eq!(safetensors(&dir), 1);
    // Without the limit, the run continues and finishes.
    let r = resume(&dir);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_ne!(std::fs::read(dir.join("tree.json")).unwrap(), ta);
    assert!(load(&dir).unwrap().topology().num_params() > 1000);
    assert!(temps(&dir).is_empty(), "{:?}", temps(&dir));
}

/// Kill `ant train --force` over model A (SIGKILL) right after each of its durable file
/// steps in turn (a temporary file written, a rename, a removal, an epoch record), then
/// at seeded random times: every time, the directory holds model A or model B, whole,
/// and `--resume` finishes the run with exactly model B.
#[cfg(unix)]
#[test]
fn a_run_killed_at_any_moment_leaves_a_whole_model_and_resumes() {
    use rand::{Rng, SeedableRng};
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};

    let tmp = tempfile::tempdir().unwrap();
    let (a, ta, b, tb) = models_a_and_b(tmp.path());
    let (mut kills, mut resumed, mut mid_save, mut after_switch) = (0, 0, 0, 0);
    for n in 1.. {
        let dir = tmp.path().join(format!("kill-{n}"));
        copy_dir(&a, &dir);
        let r = bin()
            .args(train_args(&dir, &["--force", "--seed", "1"]))
            .env("ANT_FAULT_AFTER_WRITES", n.to_string())
            .output()
            .unwrap();
        if r.status.success() {
            break;
        }
        let what = format!("killed after step {n}");
        assert!(
            matches!(r.status.signal(), Some(9 | 6)),
            "{what}: {:?} {}",
            r.status,
            stderr(&r)
        );
        kills += 1;
        let tree = std::fs::read(dir.join("tree.json")).unwrap();
        let has_ckpt = dir.join("checkpoint").exists();
        // Killed inside the model's save: new weights written, tree.json not yet switched...
        if tree == ta && safetensors(&dir) == 2 {
            mid_save += 1;
        }
        // ... or switched, with the run's last steps (report, cleanup) still to do.
        if tree == tb && has_ckpt {
            after_switch += 1;
        }
        if old_or_new_then_resumes(&dir, &ta, &b, &tb, &what) {
            resumed += 1;
        } else {
            // No run to resume (killed before it began, or while it removed its
            // checkpoints): the next run into the directory cleans up what was left.
            let r = bin()
                .args(train_args(&dir, &["--force", "--seed", "1"]))
                .output()
                .unwrap();
            assert!(r.status.success(), "{what}: {}", stderr(&r));
            assert_eq!(std::fs::read(dir.join("tree.json")).unwrap(), tb, "{what}");
            assert!(temps(&dir).is_empty(), "{what}: {:?}", temps(&dir));
            assert_eq!(safetensors(&dir), 1, "{what}");
        }
    }
    eprintln!(
        "{kills} kills ({resumed} resumed, {mid_save} inside the model save, {after_switch} after it)"
    );
    assert!(
        kills >= 20 && resumed >= 15,
        "{kills} kills, {resumed} resumed"
    );
    assert!(
        mid_save >= 1 && after_switch >= 1,
        "{mid_save} {after_switch}"
    );

    // Kills at seeded random times within a run's duration; the killed run's directory
    // is moved before it resumes (a run resumes where its directory now is).
    let t0 = Instant::now();
    let r = bin()
        .args(train_args(&tmp.path().join("timed"), &[]))
        .output()
        .unwrap();
    assert!(r.status.success());
    let span = t0.elapsed().as_micros() as u64;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for i in 0..8 {
        let dir = tmp.path().join(format!("random-{i}"));
        copy_dir(&a, &dir);
        let mut child = bin()
            .args(train_args(&dir, &["--force", "--seed", "1"]))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.random_range(0..span)));
        let _ = child.kill();
        child.wait().unwrap();
        let moved = tmp.path().join(format!("moved-{i}"));
        std::fs::rename(&dir, &moved).unwrap();
        old_or_new_then_resumes(&moved, &ta, &b, &tb, &format!("random kill {i}"));
        assert!(!dir.exists());
    }
}

/// `ant prune --force` over a trained model, killed after each of its
/// steps, never leaves that model's report or records (or grown model) beside the
/// pruned tree: every command saves in one order, descriptions of the old model first.
#[cfg(unix)]
#[test]
fn a_prune_killed_at_any_step_leaves_nothing_of_the_old_model_beside_the_new() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _, b, tb) = models_a_and_b(tmp.path());
    assert!(b.join("report.json").exists() && b.join("records.jsonl").exists());
    let mut switched = 0;
    for n in 1.. {
        let dir = tmp.path().join(format!("prune-{n}"));
        copy_dir(&b, &dir);
        let args = [
            "prune",
            "--model",
            a.to_str().unwrap(),
            "--data",
            &iris(),
            "--min-reach",
            "0.3",
            "--out",
            dir.to_str().unwrap(),
            "--force",
        ];
        let r = bin()
            .args(args)
            .env("ANT_FAULT_AFTER_WRITES", n.to_string())
            .output()
            .unwrap();
        let tree = std::fs::read(dir.join("tree.json")).unwrap();
        load(&dir).unwrap_or_else(|e| panic!("killed after step {n}: {e}"));
        if tree != tb {
            switched += 1;
            for old in ["report.json", "records.jsonl", "grown"] {
                assert!(
                    !dir.join(old).exists(),
                    "killed after step {n}: {old} of the old model is left"
                );
            }
        }
        if r.status.success() {
            assert!(dir.join("prune.json").exists());
            break;
        }
    }
    assert!(
        switched >= 2,
        "the kills reached past the switch: {switched}"
    );
}
