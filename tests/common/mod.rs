//! Shared helpers: the `ant` binary, small synthetic data sets and tensors.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use ant::data::tabular::TargetSpec;
use ant::loss::Target;
use ant::modules::Repr;
use ant::{Ant, EstimatorRecord, TaskKind};
use ant::{AntParams, Preset};
use ant::{Dataset, Targets};
use burn::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Runs `ant` with the words of `line` (options without spaces) and then `more` (paths):
/// `ant_with("train --preset mnist-c --epochs-node 2", &["--data", s(&dir)])`.
pub fn ant_with(line: &str, more: &[&str]) -> std::process::Output {
    let mut args: Vec<&str> = line.split_whitespace().collect();
    args.extend_from_slice(more);
    ant(&args)
}

/// Runs the `ant` binary with `args` and waits for its output.
pub fn ant(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(args)
        .output()
        .expect("runs")
}

/// `n` points uniform in [-1,1]^d.
pub fn uniform(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n * d).map(|_| r.random_range(-1.0f32..1.0)).collect()
}

/// Regression data set from inputs and a function of each row.
pub fn regression(x: Vec<f32>, d: usize, f: impl Fn(&[f32]) -> f32) -> Dataset {
    let values: Vec<f32> = x.chunks(d).map(&f).collect();
    Dataset::new(x, vec![d], Targets::Values { values, dim: 1 }).unwrap()
}

/// Classification data set from inputs and a labelling of each row.
pub fn classification(x: Vec<f32>, d: usize, classes: usize, f: impl Fn(&[f32]) -> u32) -> Dataset {
    let labels: Vec<u32> = x.chunks(d).map(&f).collect();
    let targets = Targets::Classes {
        labels,
        n_classes: classes,
    };
    Dataset::new(x, vec![d], targets).unwrap()
}

pub fn flat(x: Vec<f32>, n: usize, d: usize, dev: &Device) -> Repr {
    Repr::Flat(Tensor::from_data(TensorData::new(x, [n, d]), dev))
}

pub fn classes(labels: Vec<i64>, dev: &Device) -> Target {
    let n = labels.len();
    Target::Classes(Tensor::from_data(TensorData::new(labels, [n, 1]), dev))
}

pub fn values(v: Vec<f32>, n: usize, d: usize, dev: &Device) -> Target {
    Target::Values(Tensor::from_data(TensorData::new(v, [n, d]), dev))
}

pub fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

/// burn's CPU backend has one global random generator, and the tests of a file run in
/// parallel threads: a test that seeds it and then draws from it (initial weights)
/// holds this lock, so no other test can reseed or draw in between.
pub fn rng_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A path as the `&str` an argument list takes (test paths are UTF-8).
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2, one `error` line mentioning every needle, no panic.
pub fn assert_clean_error(o: &std::process::Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "one error line expected: {e}");
    for n in needles {
        assert!(errors[0].contains(n), "error should mention {n:?}: {e}");
    }
}

/// Four quadrants, labelled so that one linear solver cannot separate them but a router
/// at x = 0 and two linear solvers can.
pub fn quadrants() -> Dataset {
    classification(uniform(600, 2, 11), 2, 3, |p| {
        match (p[0] > 0.0, p[1] > 0.0) {
            (true, true) => 0,
            (false, false) => 1,
            _ => 2,
        }
    })
}

pub fn small_params() -> AntParams {
    AntParams::new(Preset::Tabular)
        .with_width(16)
        .with_epochs_node(12)
        .with_patience(Some(4))
        .with_refine_epochs(Some(6))
        .with_max_depth(2)
        .with_batch_size(64)
        .with_seed(5)
}

/// Runs the `ant` binary with `args` under a 4 GiB address-space limit (`ulimit -v`),
/// killed after `secs` seconds (then this panics): for inputs that once made it read
/// or loop without end, so that a regression fails the test instead of the machine.
pub fn ant_bounded(args: &[&str], secs: u64) -> std::process::Output {
    use std::io::Read;
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_ant"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let ereader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > std::time::Duration::from_secs(secs) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("ant {args:?} ran past {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: ereader.join().unwrap(),
    }
}

/// The words of a quick `ant train` of a table: two epochs a node, one of refinement,
/// depth 1.
pub const QUICK: &str = "train --preset tabular --epochs-node 2 --refine-epochs 1 --max-depth 1";

/// Asserts that the command succeeded, showing its standard error if not.
pub fn ok(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// The JSON a command that must succeed wrote on standard output.
pub fn json_of(o: &Output) -> serde_json::Value {
    ok(o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The rows `predict` wrote on standard output, less its header; it must succeed.
pub fn predictions(o: &Output) -> Vec<String> {
    assert!(o.status.success(), "{}", stderr(o));
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    text.lines().skip(1).map(str::to_string).collect()
}

/// Writes `text` to `dir/name` and returns that path.
pub fn write(dir: &Path, name: &str, text: String) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A small classification table: 120 rows of two features, three classes (`a,b,y`, the
/// classes `0`, `1`, `2` in turn), in `dir/cls.csv`.
pub fn cls_csv(dir: &Path) -> PathBuf {
    let p = dir.join("cls.csv");
    let mut text = String::from("a,b,y\n");
    for (i, r) in uniform(120, 2, 7).chunks(2).enumerate() {
        text.push_str(&format!("{},{},{}\n", r[0], r[1], i % 3));
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// `ant train` of a classifier of [`cls_csv`]'s `y` on `data` with a quick schedule
/// (depth 2), into `out`, then `extra` flags.
pub fn train_cls(data: &Path, out: &Path, extra: &[&str]) -> Output {
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

/// 120 rows of two features and a class named by words (`x,y,label`): two blobs, in
/// `dir/blobs.csv`.
pub fn blobs_csv(dir: &Path) -> PathBuf {
    let x = uniform(120, 2, 3);
    let mut text = String::from("x,y,label\n");
    for (i, r) in x.chunks(2).enumerate() {
        let (c, shift) = if i % 2 == 0 {
            ("left", 0.0)
        } else {
            ("right", 3.0)
        };
        text.push_str(&format!("{},{},{c}\n", r[0] + shift, r[1]));
    }
    write(dir, "blobs.csv", text)
}

/// `ant train` ([`QUICK`]) of a classifier of the blobs' `label` on `data` into `out`,
/// then `more`.
pub fn train_blobs(data: &Path, out: &Path, more: &[&str]) -> Output {
    let mut args = vec![
        "--data",
        s(data),
        "--out",
        s(out),
        "--target",
        "label",
        "--task",
        "classification",
    ];
    args.extend_from_slice(more);
    ant_with(QUICK, &args)
}

/// A scratch folder with [`blobs_csv`] and a model `m` of depth 1 trained on them:
/// (the folder, the data, the model).
pub fn blobs_model() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let m = t.path().join("m");
    ok(&train_blobs(&data, &m, &[]));
    (t, data, m)
}

/// `ant train` ([`QUICK`]) of a classifier on `data` into `out`, then `more` (the
/// target among them).
pub fn train_quick(data: &Path, out: &Path, more: &[&str]) -> Output {
    let mut args = vec![
        "--data",
        s(data),
        "--out",
        s(out),
        "--task",
        "classification",
    ];
    args.extend_from_slice(more);
    ant_with(QUICK, &args)
}

/// [`train_quick`], which must succeed.
pub fn trained_quick(data: &Path, out: &Path, more: &[&str]) -> Output {
    let o = train_quick(data, out, more);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// 180 rows of two features and a label (`0`, `1`, `2` by the first feature's sign and
/// the second's).
pub fn three_class_rows() -> Vec<(f32, f32, u32)> {
    uniform(180, 2, 3)
        .chunks(2)
        .map(|r| (r[0], r[1], u32::from(r[0] > 0.0) + u32::from(r[1] > 0.5)))
        .collect()
}

/// The first `n` of [`three_class_rows`], each written by `line`.
pub fn first_rows(n: usize, line: impl Fn(&(f32, f32, u32)) -> String) -> String {
    three_class_rows().iter().take(n).map(line).collect()
}

/// [`three_class_rows`] as a table `a,b,y` in `dir/name`, after a first line `head` or
/// none.
pub fn three_class_csv(dir: &Path, name: &str, head: Option<&str>) -> PathBuf {
    let mut text = head.map(|h| format!("{h}\n")).unwrap_or_default();
    for (a, b, y) in three_class_rows() {
        text += &format!("{a},{b},{y}\n");
    }
    write(dir, name, text)
}

/// A model fitted through the library on [`three_class_rows`], as Python saves one, its
/// columns named `names` (a DataFrame's) or not; in `dir/named` or `dir/in-memory`.
pub fn fitted_like_python(dir: &Path, names: Option<Vec<String>>) -> PathBuf {
    let x: Vec<f32> = three_class_rows()
        .iter()
        .flat_map(|&(a, b, _)| [a, b])
        .collect();
    let data = classification(x, 2, 3, |p| u32::from(p[0] > 0.0) + u32::from(p[1] > 0.5));
    let dev = Device::flex();
    let mut model = Ant::fit(small_params(), &data, &dev, &mut ant::observe::Silent).unwrap();
    let spec = TargetSpec::last_of(2, TaskKind::Classification);
    model.record_source("numpy arrays (Python)", Some(spec), None);
    let classes = vec!["0".into(), "1".into(), "2".into()];
    model.set_class_names(classes).unwrap();
    let out = dir.join(if names.is_some() {
        "named"
    } else {
        "in-memory"
    });
    if names.is_some() {
        let record = EstimatorRecord {
            feature_names: names,
            ..Default::default()
        };
        model.set_estimator_record(record).unwrap();
    }
    model.save(&out).unwrap();
    out
}

/// [`fitted_like_python`] with its columns named `a`, `b`, as fitted on a DataFrame; in
/// `dir/named`.
pub fn fitted_on_named_columns(dir: &Path) -> PathBuf {
    fitted_like_python(dir, Some(vec!["a".into(), "b".into()]))
}

/// 90 rows of three features and a class `p`, `q` or `r` in turn (`a,b,c,y`), with
/// that header or none, in `dir/name`.
pub fn abc_csv(dir: &Path, name: &str, header: bool) -> PathBuf {
    let x = uniform(90, 3, 7);
    let mut text = String::from(if header { "a,b,c,y\n" } else { "" });
    for (i, r) in x.chunks(3).enumerate() {
        let v: Vec<String> = r.iter().map(|&v| format!("{}", f64::from(v))).collect();
        text.push_str(&format!("{},{}\n", v.join(","), ["p", "q", "r"][i % 3]));
    }
    write(dir, name, text)
}

/// The iris-like table: 150 rows of four named features (`sl,sw,pl,pw`) and a text label
/// (`species`), in `dir/named.csv`.
pub fn iris_like_csv(dir: &Path) -> PathBuf {
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
    write(dir, "named.csv", text)
}
