//! Kill a real `ant train` with SIGKILL, twice (during growth, then during refinement),
//! resume it each time, and compare the result with an uninterrupted run. A run resumes
//! only on its own options and data, and an interrupted run given where a model is read
//! says how to resume it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use ant::run::{DataSpec, RunFile, RunSpec};
use ant::{AntParams, Preset};

mod common;
use common::{ant, cls_csv, s, train_cls};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ant"))
}

fn sarcos() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/sarcos_inv_test.mat")
        .display()
        .to_string()
}

/// A small run: 5 growth optimisations of 25 epochs (root, then split and deepen at
/// two levels) and 40 refinement epochs; 165 epoch records in all.
fn train_args(out: &Path) -> Vec<String> {
    let data = sarcos();
    let mut v: Vec<String> = [
        "train",
        "--preset",
        "sarcos",
        "--data",
        &data,
        "--width",
        "64",
        "--epochs-node",
        "25",
        "--patience",
        "100",
        "--refine-epochs",
        "40",
        "--max-depth",
        "2",
        "--batch-size",
        "64",
        "--seed",
        "7",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(out.display().to_string());
    v
}

fn run(args: &[String]) -> Output {
    bin().args(args).output().expect("runs")
}

fn records(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("records.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// Start `args`, wait until `dir` holds at least `lines` epoch records, SIGKILL it.
fn kill_after(args: &[String], dir: &Path, lines: usize) {
    let mut child: Child = bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns");
    let t0 = Instant::now();
    while records(dir) < lines {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before {lines} records: it cannot be interrupted");
        }
        assert!(t0.elapsed() < Duration::from_secs(300), "no progress");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
}

fn without_seconds(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("records.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("seconds");
            v
        })
        .collect()
}

fn json(p: PathBuf) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn killed_twice_and_resumed_equals_uninterrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    let part = tmp.path().join("part");

    let r = run(&train_args(&full));
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(
        !full.join("checkpoint").exists(),
        "checkpoints removed at the end"
    );
    assert_eq!(records(&full), 165);

    // Killed during the growth phase (inside the root's optimisation or just after).
    kill_after(&train_args(&part), &part, 15);
    assert!(part.join("checkpoint").join("current.ckpt").exists());
    assert!(!part.join("tree.json").exists());

    // Starting over into the same directory would discard the interrupted run: refused.
    let r = run(&train_args(&part));
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--resume"));

    // Resumed, then killed again during refinement (records 126..165).
    let resume: Vec<String> = vec![
        "train".into(),
        "--resume".into(),
        part.display().to_string(),
    ];
    kill_after(&resume, &part, 135);
    assert!(!part.join("tree.json").exists());

    // Resumed to the end.
    let r = run(&resume);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stderr).contains("resuming"));
    assert!(!part.join("checkpoint").exists());

    // Same topology, decisions and validation scores (tree.json), same epoch records
    // (every loss, to the last bit), same test scores.
    assert_eq!(json(full.join("tree.json")), json(part.join("tree.json")));
    assert_eq!(without_seconds(&full), without_seconds(&part));
    let (a, b) = (
        json(full.join("report.json")),
        json(part.join("report.json")),
    );
    for k in ["multi_path_mse", "single_path_mse", "params_total"] {
        assert_eq!(a[k], b[k], "{k}");
    }

    // A finished run has nothing to resume.
    let r = run(&resume);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("nothing to resume"));
}

#[test]
fn resume_refuses_other_options_and_missing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().display().to_string();
    let r = run(&[
        "train".into(),
        "--resume".into(),
        dir.clone(),
        "--seed".into(),
        "3".into(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    let r = run(&["train".into(), "--resume".into(), dir]);
    assert_eq!(r.status.code(), Some(2));
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(e.contains("run.json"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

/// Stops the run (a panic, caught by the test) when the `at`-th epoch record arrives:
/// the checkpoints then hold the state after the epoch before.
struct StopAt {
    at: usize,
    seen: usize,
}

impl ant::observe::Observer for StopAt {
    fn epoch(&mut self, _r: &ant::observe::EpochRecord) {
        self.seen += 1;
        if self.seen == self.at {
            panic!("interrupted at epoch record {}", self.at);
        }
    }
}

/// Augmented images draw new crops every batch: a resumed run must continue that
/// random stream where it stopped, not start it again.
#[test]
fn interrupted_augmented_run_resumes_exactly() {
    use ant::observe::Collect;
    use ant::train::{Augment, Checkpoints};
    use ant::{Ant, AntParams, Dataset, Inference, Preset, Targets};

    // 80 images 28x28: class 1 has a bright square in the top half, class 0 below.
    let (n, side) = (80usize, 28usize);
    let mut x = vec![0f32; n * side * side];
    let mut labels = vec![];
    for i in 0..n {
        let c = (i % 2) as u32;
        let top = if c == 1 { 3 } else { 15 };
        let left = 3 + (i * 7) % 14;
        for y in top..top + 9 {
            for xx in left..left + 9 {
                x[i * side * side + y * side + xx] = 1.0;
            }
        }
        labels.push(c);
    }
    let data = Dataset::new(
        x,
        vec![1, 28, 28],
        Targets::Classes {
            labels,
            n_classes: 2,
        },
    )
    .unwrap();
    let params = || {
        AntParams::new(Preset::MnistC)
            .with_augment(Some(Augment::CropFlip))
            .with_epochs_node(3)
            .with_patience(Some(10))
            .with_refine_epochs(Some(3))
            .with_max_depth(1)
            .with_batch_size(16)
            .with_seed(5)
    };
    let device = ant::default_device();
    let tmp = tempfile::tempdir().unwrap();

    let mut all = Collect::default();
    let whole = Ant::fit(params(), &data, &device, &mut all).unwrap();
    assert!(
        whole.meta().decisions.len() == 1,
        "{:?}",
        whole.meta().decisions
    );

    // Root (3 epochs), then the split candidate: interrupted in its 2nd epoch.
    let dir = tmp.path().join("ckpt");
    let c = Checkpoints::create(&dir).unwrap();
    let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Ant::fit_checkpointed(params(), &data, &device, &mut StopAt { at: 5, seen: 0 }, &c)
    }));
    assert!(stopped.is_err());
    drop(c);

    let c = Checkpoints::open(&dir).unwrap();
    assert_eq!(c.records(), 4);
    let mut rest = Collect::default();
    let resumed = Ant::fit_checkpointed(params(), &data, &device, &mut rest, &c).unwrap();
    // Resumed at the split's 2nd epoch: the remaining records, each loss to the bit.
    let strip = |v: &[ant::observe::EpochRecord]| -> Vec<_> {
        v.iter()
            .map(|r| {
                (
                    r.phase,
                    r.epoch,
                    r.train_loss.to_bits(),
                    r.valid_loss.to_bits(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&rest.epochs), strip(&all.epochs[4..]));
    assert_eq!(resumed.meta().decisions, whole.meta().decisions);
    assert_eq!(
        resumed.meta().valid_nll.to_bits(),
        whole.meta().valid_nll.to_bits()
    );
    assert_eq!(
        resumed.predict(&data, Inference::MultiPath).unwrap(),
        whole.predict(&data, Inference::MultiPath).unwrap()
    );
}

#[test]
fn a_damaged_checkpoint_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let ck = out.join("checkpoint");
    std::fs::create_dir_all(&ck).unwrap();
    let spec = RunSpec {
        data: DataSpec {
            path: sarcos().into(),
            test_data: None,
            test_fraction: 0.2,
            target: None,
            train_limit: None,
            image_size: None,
        },
        params: AntParams::new(Preset::Sarcos),
        member: None,
    };
    let run = RunFile {
        spec,
        cwd: tmp.path().into(),
        checksums: None,
    };
    std::fs::write(ck.join("run.json"), serde_json::to_vec(&run).unwrap()).unwrap();
    std::fs::write(
        ck.join("current.ckpt"),
        b"ANTCKPT1\x03\0\0\0\0\0\0\0garbage",
    )
    .unwrap();
    let r = run_resume(&out);
    assert_eq!(r.status.code(), Some(2));
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(e.contains("current.ckpt") && e.contains("corrupt"), "{e}");
    assert!(!e.contains("panicked"), "{e}");

    // A checkpoint from another kind of file altogether.
    std::fs::write(ck.join("current.ckpt"), b"not a checkpoint at all").unwrap();
    let e = String::from_utf8_lossy(&run_resume(&out).stderr).into_owned();
    assert!(e.contains("not an ant checkpoint"), "{e}");
}

fn run_resume(dir: &Path) -> Output {
    run(&["train".into(), "--resume".into(), dir.display().to_string()])
}

/// A run resumes only on the data it started with: a changed data file (or test file)
/// is one clear error naming it; restored, the run goes on.
#[test]
fn resume_refuses_data_that_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/small/iris.csv");
    let text = std::fs::read_to_string(&iris).unwrap();
    let (data, test) = (tmp.path().join("iris.csv"), tmp.path().join("test.csv"));
    std::fs::write(&data, &text).unwrap();
    std::fs::write(&test, &text).unwrap();
    let out = tmp.path().join("run");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "train",
            "--preset",
            "tabular",
            "--target",
            "4",
            "--task",
            "classification",
            "--width",
            "8",
            "--epochs-node",
            "3",
            "--refine-epochs",
            "2",
            "--max-depth",
            "1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(["--data".into(), data.display().to_string()]);
        v.extend(["--out".into(), out.display().to_string()]);
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    // Stopped (killed) in its growth phase, with checkpoints.
    let killed = bin()
        .args(args(&["--test-data", test.to_str().unwrap()]))
        .env("ANT_FAULT_AFTER_WRITES", "12")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    assert!(out.join("checkpoint/current.ckpt").exists());

    let changed = text.replacen("5.1,3.5", "5.2,3.5", 1);
    for (file, what) in [(&data, "training"), (&test, "test")] {
        std::fs::write(file, &changed).unwrap();
        let r = run_resume(&out);
        let e = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{e}");
        // One error (the test file, a copy of the training file, is also warned of as
        // rows the model trains on).
        let lines: Vec<&str> = e.trim().lines().collect();
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("error: ")).count(),
            1,
            "{e}"
        );
        assert!(
            lines
                .iter()
                .all(|l| l.starts_with("error: ") || l.starts_with("warning: ")),
            "{e}"
        );
        assert!(
            e.contains(file.to_str().unwrap())
                && e.contains("than when the run started")
                && e.contains(&format!("gives other {what} samples")),
            "{e}"
        );
        std::fs::write(file, &text).unwrap();
    }
    // The same bytes again: it resumes and finishes.
    let r = run_resume(&out);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(out.join("tree.json").exists());
}

/// An interrupted run (checkpoints, no model yet) given where a model is read says what
/// it holds and how to go on, not "tree.json: No such file".
#[test]
fn an_interrupted_run_read_as_a_model_says_how_to_resume() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let quick = [
        "train",
        "--preset",
        "tabular",
        "--target",
        "y",
        "--task",
        "classification",
    ];
    let run = t.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(quick)
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
    let b = t.path().join("b");
    let o = train_cls(&data, &b, &["--init-from", s(&run)]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("holds an interrupted run"), "--init-from: {e}");
}

/// `--resume` keeps the records its last checkpoint counted only if they are the lines
/// the run wrote (their MD5 is in the checkpoint), and the lines after them only if
/// they are epoch records: a line appended, put first, edited or removed is refused,
/// naming the file, with what can be done (never "once this is fixed"), and the file
/// stays as it is; untouched, the run resumes and its curves draw.
#[test]
fn resume_keeps_only_the_records_the_run_wrote() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let killed = |out: &Path| {
        let o = bin()
            .args([
                "train",
                "--preset",
                "tabular",
                "--data",
                s(&data),
                "--target",
                "y",
            ])
            .args([
                "--task",
                "classification",
                "--epochs-node",
                "3",
                "--refine-epochs",
                "3",
            ])
            .args(["--max-depth", "2", "--out", s(out)])
            .env("ANT_FAULT_AFTER_WRITES", "25")
            .output()
            .unwrap();
        assert!(!o.status.success() && out.join("checkpoint").is_dir());
        std::fs::read_to_string(out.join("records.jsonl")).unwrap()
    };
    type Edit = fn(&str) -> String;
    let edits: [(&str, Edit); 6] = [
        ("a line appended", |r| format!("{r}my line\n")),
        ("a line put first", |r| format!("my line\n{r}")),
        ("a value edited", |r| {
            r.replacen("\"epoch\":1", "\"epoch\":7", 1)
        }),
        ("a line removed", |r| {
            r.split_inclusive('\n').skip(1).collect()
        }),
        ("every line removed", |_| String::new()),
        // Records after the checkpoint's: a kill leaves one at most.
        ("two records appended", |r| {
            let last = r.lines().last().unwrap();
            format!("{r}{last}\n{last}\n")
        }),
    ];
    for (what, edit) in edits {
        let out = t.path().join(what.replace(' ', "-"));
        let records = killed(&out);
        let edited = edit(&records);
        assert_ne!(edited, records, "{what}");
        std::fs::write(out.join("records.jsonl"), &edited).unwrap();
        let o = ant(&["train", "--resume", s(&out)]);
        common::assert_clean_error(
            &o,
            &["records.jsonl", "restore the file as the run wrote it"],
        );
        assert!(!common::stderr(&o).contains("once this is fixed"), "{what}");
        let now = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        assert_eq!(now, edited, "{what}: the file was changed");
    }
    let out = t.path().join("untouched");
    killed(&out);
    common::ok(&ant(&["train", "--resume", s(&out)]));
    let svg = t.path().join("c.svg");
    common::ok(&ant(&["curves", "--run", s(&out), "--out", s(&svg)]));
}
