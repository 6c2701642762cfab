//! Handcrafted corrupt or mismatched inputs: each must give one clear error line that
//! names the file and the problem, exit code 2, and no panic.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

mod common;
use common::{ant, assert_clean_error, s};

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

/// `train` on `data` with a quick schedule and extra flags.
fn train(data: &Path, extra: &[&str]) -> Output {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "train",
        "--data",
        s(data),
        "--out",
        s(out.path()),
        "--epochs-node",
        "1",
        "--refine-epochs",
        "1",
        "--max-depth",
        "1",
    ];
    // A narrow FC layer where the preset has them (a conv preset refuses --width).
    if extra.iter().any(|a| ["tabular", "sarcos"].contains(a)) {
        args.extend(["--width", "8"]);
    }
    args.extend_from_slice(extra);
    ant(&args)
}

/// A tiny tabular classifier on 3 features (target column "y", text labels), trained
/// once for all tests here.
fn tiny_model() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ant-bad-input-{}", std::process::id()));
        // A run cut short leaves its directory, which a later process of the same id
        // would find holding a model.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut csv = String::from("a,b,c,y\n");
        for i in 0..60 {
            let label = if i % 2 == 0 { "even" } else { "odd" };
            csv.push_str(&format!("{},{},{},{label}\n", i % 2, i, i % 5));
        }
        let data = dir.join("train.csv");
        std::fs::write(&data, csv).unwrap();
        let model = dir.join("model");
        let r = ant(&[
            "train",
            "--preset",
            "tabular",
            "--data",
            s(&data),
            "--out",
            s(&model),
            "--target",
            "y",
            "--task",
            "classification",
            "--epochs-node",
            "1",
            "--refine-epochs",
            "1",
            "--max-depth",
            "1",
            "--width",
            "8",
        ]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        model
    })
}

fn idx(dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 8, dims.len() as u8];
    for d in dims {
        b.extend_from_slice(&d.to_be_bytes());
    }
    b.extend_from_slice(data);
    b
}

/// Writes an MNIST-layout directory from the four files' bytes.
fn idx_dir(root: &Path, name: &str, files: [Vec<u8>; 4]) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    let names = [
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    ];
    for (n, b) in names.iter().zip(files) {
        std::fs::write(d.join(n), b).unwrap();
    }
    d
}

#[test]
fn corrupt_idx_directories() {
    let t = tempfile::tempdir().unwrap();
    let ok_images = || idx(&[12, 4, 4], &[7; 12 * 16]);
    let ok_labels = || idx(&[12], &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    let mc = ["--preset", "mnist-c"];
    // wrong magic
    let mut bad = ok_images();
    bad[2] = 0x55;
    let d = idx_dir(
        t.path(),
        "magic",
        [bad, ok_labels(), ok_images(), ok_labels()],
    );
    assert_clean_error(&train(&d, &mc), &["train-images", "element type 0x55"]);
    // truncated image data
    let mut trunc = ok_images();
    trunc.truncate(100);
    let d = idx_dir(
        t.path(),
        "trunc",
        [ok_images(), ok_labels(), trunc, ok_labels()],
    );
    assert_clean_error(&train(&d, &mc), &["t10k-images", "truncated"]);
    // truncated header
    let d = idx_dir(
        t.path(),
        "hdr",
        [ok_images(), vec![0, 0, 8], ok_images(), ok_labels()],
    );
    assert_clean_error(&train(&d, &mc), &["train-labels", "too short"]);
    // image and label counts disagree
    let d = idx_dir(
        t.path(),
        "count",
        [ok_images(), idx(&[11], &[0; 11]), ok_images(), ok_labels()],
    );
    assert_clean_error(&train(&d, &mc), &["train-images", "12 images", "11 labels"]);
    // a missing file
    let d = idx_dir(
        t.path(),
        "missing",
        [ok_images(), ok_labels(), ok_images(), ok_labels()],
    );
    std::fs::remove_file(d.join("t10k-labels-idx1-ubyte")).unwrap();
    assert_clean_error(&train(&d, &mc), &["t10k-labels-idx1-ubyte", "not found"]);
    // a corrupt gzip stream
    let d = idx_dir(
        t.path(),
        "gz",
        [
            vec![0x1f, 0x8b, 8, 0, 1, 2, 3],
            ok_labels(),
            ok_images(),
            ok_labels(),
        ],
    );
    assert_clean_error(&train(&d, &mc), &["train-images", "gzip"]);
}

#[test]
fn corrupt_cifar_directories() {
    let t = tempfile::tempdir().unwrap();
    let record = |label: u8| {
        let mut r = vec![label];
        r.extend(std::iter::repeat_n(9u8, 3072));
        r
    };
    let write = |name: &str, test_batch: Vec<u8>, skip: Option<&str>| {
        let d = t.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        for i in 1..=5 {
            let f = format!("data_batch_{i}.bin");
            if Some(f.as_str()) != skip {
                std::fs::write(d.join(f), [record(1), record(2)].concat()).unwrap();
            }
        }
        std::fs::write(d.join("test_batch.bin"), test_batch).unwrap();
        d
    };
    let ca = ["--preset", "cifar10-c"];
    let mut trunc = record(3);
    trunc.truncate(3000);
    let d = write("trunc", trunc, None);
    assert_clean_error(&train(&d, &ca), &["test_batch.bin", "3073-byte records"]);
    let d = write("label", [record(3), record(10)].concat(), None);
    assert_clean_error(&train(&d, &ca), &["test_batch.bin", "record 1", "label 10"]);
    let d = write("missing", record(0), Some("data_batch_4.bin"));
    assert_clean_error(&train(&d, &ca), &["lacks", "data_batch_4.bin"]);
    let d = write("empty", vec![], None);
    assert_clean_error(&train(&d, &ca), &["test_batch.bin", "empty"]);
}

#[test]
fn corrupt_mat_and_csv_files() {
    let t = tempfile::tempdir().unwrap();
    let sar = ["--preset", "sarcos"];
    // A MAT header followed by garbage, and a real MAT file cut short.
    let mut mat = b"MATLAB 5.0 MAT-file".to_vec();
    mat.resize(128, b' ');
    mat.extend_from_slice(&[1, 2, 3]);
    let p = t.path().join("junk.mat");
    std::fs::write(&p, &mat).unwrap();
    assert_clean_error(&train(&p, &sar), &["junk.mat"]);
    let real = std::fs::read(repo("data/sarcos_inv_test.mat")).unwrap();
    let p = t.path().join("cut.mat");
    std::fs::write(&p, &real[..real.len() / 2]).unwrap();
    assert_clean_error(&train(&p, &sar), &["cut.mat"]);
    // A MAT v7.3 file (HDF5 inside) is named as such, not read as text.
    let mut v73 = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00 .".to_vec();
    v73.resize(124, b' ');
    v73.extend_from_slice(&[0x00, 0x02, b'I', b'M']);
    v73.resize(512, 0);
    v73.extend_from_slice(b"\x89HDF\r\n\x1a\n");
    v73.extend((0..=255u8).cycle().take(2560));
    let p = t.path().join("v73.mat");
    std::fs::write(&p, &v73).unwrap();
    assert_clean_error(
        &train(&p, &sar),
        &["v73.mat", "MAT v7.3 (HDF5)", "save with -v7"],
    );
    // A ragged CSV.
    let p = t.path().join("ragged.csv");
    std::fs::write(&p, "a,b,y\n1,2,0\n3,0\n").unwrap();
    let tab = [
        "--preset",
        "tabular",
        "--target",
        "y",
        "--task",
        "classification",
    ];
    assert_clean_error(&train(&p, &tab), &["ragged.csv", "line 3: 2 fields"]);
    // NaN and infinity name the row (line) and column.
    let p = t.path().join("nan.csv");
    std::fs::write(&p, "a,b,y\n1,2,0\n3,NaN,1\n").unwrap();
    assert_clean_error(
        &train(&p, &tab),
        &["nan.csv", "line 3, column 1 ('b')", "non-finite"],
    );
    let p = t.path().join("inf.csv");
    std::fs::write(&p, "1,2,0\n-inf,2,1\n").unwrap();
    let tab2 = [
        "--preset",
        "tabular",
        "--target",
        "2",
        "--task",
        "regression",
    ];
    assert_clean_error(
        &train(&p, &tab2),
        &["inf.csv", "line 2, column 0", "non-finite"],
    );
    // Text where a number belongs; a missing column; not UTF-8; empty.
    let p = t.path().join("text.csv");
    std::fs::write(&p, "a,b,y\n1,x,0\n").unwrap();
    assert_clean_error(&train(&p, &tab), &["text.csv", "'x' is not a number"]);
    let p = t.path().join("nocol.csv");
    std::fs::write(&p, "a,b,c\n1,2,0\n").unwrap();
    assert_clean_error(&train(&p, &tab), &["nocol.csv", "no column named 'y'"]);
    let p = t.path().join("bin.csv");
    std::fs::write(&p, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    assert_clean_error(&train(&p, &tab), &["bin.csv", "UTF-8"]);
    let p = t.path().join("empty.csv");
    std::fs::write(&p, "").unwrap();
    assert_clean_error(&train(&p, &tab), &["empty.csv", "no rows"]);
    // A missing file.
    assert_clean_error(
        &train(Path::new("/no/such.csv"), &tab),
        &["/no/such.csv", "no such file"],
    );
}

#[test]
fn nonsense_flags() {
    let p = repo("data/sarcos_inv_test.mat");
    let p = Path::new(&p);
    // clap's own usage errors also exit with 2.
    for args in [
        &["--preset", "tabular", "--target", "y", "--task", "sideways"][..],
        &[
            "--preset",
            "tabular",
            "--target",
            "y",
            "--delimiter",
            "x",
            "--task",
            "regression",
        ],
        &["--preset", "tabular", "--task", "regression"],
        &[
            "--preset",
            "tabular",
            "--skip-rows",
            "-1",
            "--target",
            "1",
            "--task",
            "regression",
        ],
    ] {
        let o = train(p, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
    assert_clean_error(
        &train(p, &["--preset", "tabular", "--target", "y"]),
        &["--task"],
    );
    assert_clean_error(
        &train(p, &["--preset", "sarcos", "--test-fraction", "1.5"]),
        &["--test-fraction"],
    );
    assert_clean_error(
        &train(p, &["--preset", "sarcos", "--train-limit", "0"]),
        &["--train-limit"],
    );
    // --target on a directory.
    assert_clean_error(
        &train(
            Path::new(&repo("data/mnist")),
            &[
                "--preset",
                "tabular",
                "--target",
                "1",
                "--task",
                "regression",
            ],
        ),
        &["data/mnist", "directory"],
    );
    let model = tiny_model();
    let o = ant(&[
        "predict",
        "--model",
        s(model),
        "--input",
        s(p),
        "--output",
        "/tmp/x.txt",
    ]);
    assert_clean_error(&o, &["--output", ".jsonl"]);
}

#[test]
fn model_and_data_that_do_not_fit() {
    let t = tempfile::tempdir().unwrap();
    let model = tiny_model();
    let m = s(model);
    // The model was trained on a table with a header: a table without one is refused
    // (its columns are read by name), and so is one of other names.
    let p = t.path().join("wide.csv");
    std::fs::write(&p, "1,2,3,4,5\n").unwrap();
    assert_clean_error(
        &ant(&["predict", "--model", m, "--input", s(&p)]),
        &["wide.csv", "has no header row", "'a', 'b', 'c', 'y'"],
    );
    assert_clean_error(
        &ant(&["eval", "--model", m, "--data", s(&p)]),
        &["wide.csv", "has no header row"],
    );
    std::fs::write(&p, "a,b,c,d,y\n1,2,3,4,5\n").unwrap();
    assert_clean_error(
        &ant(&["eval", "--model", m, "--data", s(&p)]),
        &["wide.csv", "not the model's: 'd'"],
    );
    // A label the model does not know.
    let p = t.path().join("label.csv");
    std::fs::write(&p, "a,b,c,y\n1,2,3,even\n1,2,3,seven\n").unwrap();
    assert_clean_error(
        &ant(&["eval", "--model", m, "--data", s(&p)]),
        &["label.csv", "line 3", "'seven'", "[even, odd]"],
    );
    // NaN in a row to predict.
    let p = t.path().join("nan.csv");
    std::fs::write(&p, "a,b,c\n1,2,3\n1,inf,3\n").unwrap();
    assert_clean_error(
        &ant(&["predict", "--model", m, "--input", s(&p)]),
        &["nan.csv", "line 3, column 1 ('b')", "non-finite"],
    );
    // Images for a table model; an IDX directory for eval.
    let p = t.path().join("img-idx3");
    std::fs::write(&p, idx(&[2, 2, 2], &[0; 8])).unwrap();
    assert_clean_error(
        &ant(&["predict", "--model", m, "--input", s(&p)]),
        &["img-idx3"],
    );
    let mnist = repo("data/mnist");
    assert_clean_error(
        &ant(&["eval", "--model", m, "--data", &mnist]),
        &["data/mnist", "is a directory", "rows of 3 numeric features"],
    );
    // Missing input, a directory as input, a missing or corrupt model.
    assert_clean_error(
        &ant(&["predict", "--model", m, "--input", "/no/rows.csv"]),
        &["/no/rows.csv", "no such file"],
    );
    assert_clean_error(
        &ant(&["predict", "--model", m, "--input", s(t.path())]),
        &["directory"],
    );
    assert_clean_error(
        &ant(&["predict", "--model", "/no/model", "--input", s(&p)]),
        &["/no/model"],
    );
    let bad = t.path().join("badmodel");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("tree.json"), "{\"format\": 3").unwrap();
    assert_clean_error(
        &ant(&["predict", "--model", s(&bad), "--input", s(&p)]),
        &["tree.json", "not a model file"],
    );
}

#[test]
fn labels_that_mean_something_else_and_an_empty_test_set() {
    let t = tempfile::tempdir().unwrap();
    let images = || idx(&[12, 4, 4], &[7; 12 * 16]);
    let two = || idx(&[12], &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    let mc = ["--preset", "mnist-c"];
    // One corrupt label: it used to make a 256-class model.
    let corrupt = idx(&[12], &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 255]);
    let d = idx_dir(t.path(), "255", [images(), corrupt, images(), two()]);
    assert_clean_error(
        &train(&d, &mc),
        &[
            "train-labels-idx1-ubyte",
            "run from 0 to 255",
            "no training sample has label 2..=254",
        ],
    );
    // One class: it used to be trained as two.
    let d = idx_dir(
        t.path(),
        "one",
        [images(), idx(&[12], &[3; 12]), images(), two()],
    );
    assert_clean_error(
        &train(&d, &mc),
        &["train-labels-idx1-ubyte", "single class (3)"],
    );
    // Two classes, but the --train-limit keeps only one of them.
    let first_ten = idx(&[12], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    let d = idx_dir(t.path(), "limit", [images(), first_ten, images(), two()]);
    let mut args = mc.to_vec();
    args.extend(["--train-limit", "10"]);
    // Named with the file and the limit.
    assert_clean_error(
        &train(&d, &args),
        &["limit: the first 10 training rows (--train-limit 10) hold a single class (0)"],
    );
    // A table's class by its name.
    let csv = t.path().join("sorted.csv");
    let r = train_labels(
        &csv,
        60,
        |i| ["a", "b"][usize::from(i >= 50)],
        &["--train-limit", "20"],
    );
    assert_clean_error(
        &r,
        &["sorted.csv", "(--train-limit 20) hold a single class ('a')"],
    );
    // Test classes the limited rows lack are said.
    let label = |i: usize| {
        if i < 60 {
            ["a", "b"][i % 2]
        } else {
            ["a", "b", "c"][i % 3]
        }
    };
    let r = train_labels(&csv, 120, label, &["--train-limit", "40"]);
    let e = String::from_utf8_lossy(&r.stderr);
    let says =
        "the test set holds class 'c' that no training row (of the first 40, --train-limit 40) has";
    assert!(r.status.success() && e.contains(says), "{e}");
    // The validation rows taken last can leave one class too.
    let label = |i: usize| if i < 50 { "a" } else { ["a", "b"][i % 2] };
    let r = train_labels(
        &csv,
        80,
        label,
        &["--valid-rows", "last", "--valid-fraction", "0.5"],
    );
    let says = "rows left for training once the validation rows are taken hold a single class";
    assert_clean_error(&r, &[says]);
    // A test label that no training sample has.
    let mut test = two();
    test[8 + 5] = 2;
    let d = idx_dir(t.path(), "test", [images(), two(), images(), test]);
    assert_clean_error(
        &train(&d, &mc),
        &["t10k-labels-idx1-ubyte", "sample 5: label 2 is not a class"],
    );
    // A test fraction that holds out nothing: it used to report "0% error on 0 samples".
    let csv = t.path().join("t.csv");
    let rows: String = (0..40).map(|i| format!("{i},{}\n", i % 2)).collect();
    std::fs::write(&csv, format!("x,y\n{rows}")).unwrap();
    let table = [
        "--preset",
        "tabular",
        "--target",
        "y",
        "--task",
        "classification",
    ];
    let mut args = table.to_vec();
    args.extend(["--test-fraction", "0.01"]);
    assert_clean_error(
        &train(&csv, &args),
        &["--test-fraction", "holds out none of the 40", "t.csv"],
    );
    let mut args = table.to_vec();
    args.extend(["--test-fraction", "0.1"]);
    assert!(train(&csv, &args).status.success());
}

/// `ant train` (quick) on a table `x,y` of `n` rows whose labels `label(i)` gives,
/// written to `csv`, with `extra` flags.
fn train_labels(
    csv: &Path,
    n: usize,
    label: impl Fn(usize) -> &'static str,
    extra: &[&str],
) -> Output {
    let rows: String = (0..n).map(|i| format!("{i},{}\n", label(i))).collect();
    std::fs::write(csv, format!("x,y\n{rows}")).unwrap();
    let mut args = vec![
        "--preset",
        "tabular",
        "--target",
        "y",
        "--task",
        "classification",
    ];
    args.extend_from_slice(extra);
    train(csv, &args)
}

/// `ant train` into `out` with a quick schedule.
fn train_into(data: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "train",
        "--data",
        s(data),
        "--out",
        s(out),
        "--epochs-node",
        "1",
        "--refine-epochs",
        "1",
        "--max-depth",
        "1",
    ];
    args.extend_from_slice(extra);
    ant(&args)
}

#[test]
fn what_cannot_train_is_refused_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let two = || idx(&[12], &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    let small = || idx(&[12, 4, 4], &[7; 12 * 16]);
    let d = idx_dir(t.path(), "train", [small(), two(), small(), two()]);
    let bigger = || idx(&[12, 5, 5], &[7; 12 * 25]);
    let other = idx_dir(t.path(), "other", [bigger(), two(), bigger(), two()]);
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let untouched = |out: &Path| {
        let left: Vec<_> = std::fs::read_dir(out)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    };
    // Test images of another size: found at once, not after all of training.
    let r = train_into(&d, &out, &["--preset", "mnist-c", "--test-data", s(&other)]);
    assert_clean_error(&r, &["other", "samples of shape [1, 5, 5]", "[1, 4, 4]"]);
    untouched(&out);
    // Data the preset cannot take: refused before the run's checkpoint is made.
    let csv = t.path().join("t.csv");
    let rows: String = (0..40).map(|i| format!("{i},{}\n", i % 2)).collect();
    std::fs::write(&csv, format!("x,y\n{rows}")).unwrap();
    let r = train_into(
        &csv,
        &out,
        &[
            "--preset",
            "mnist-c",
            "--target",
            "y",
            "--task",
            "classification",
        ],
    );
    assert_clean_error(&r, &["mnist-c needs images"]);
    // No checkpoint of a run that never started (nor a lock, nor records).
    untouched(&out);
    // So there is nothing to resume, and --resume says so.
    let r = ant(&["train", "--resume", s(&out)]);
    assert_clean_error(
        &r,
        &["out", "holds no interrupted run", "nothing to resume"],
    );
}

/// A folder on the way that is a link to nowhere (a committed `runs` linking to a folder
/// of one machine, say) is named, with where it points, by every command that makes an
/// output folder, not said only as "runs/mnist-c: File exists".
#[test]
fn an_output_under_a_link_to_nowhere_names_the_link() {
    let t = tempfile::tempdir().unwrap();
    let link = t.path().join("runs");
    std::os::unix::fs::symlink(t.path().join("gone"), &link).unwrap();
    let m = tiny_model();
    let d = m.parent().unwrap().join("train.csv");
    let expect = [s(&link), "a link to", "gone", "which does not exist"];
    let r = train_into(
        &d,
        &link.join("x"),
        &[
            "--preset",
            "tabular",
            "--target",
            "y",
            "--task",
            "classification",
        ],
    );
    assert_clean_error(&r, &expect);
    let out = link.join("pruned");
    let r = ant(&[
        "prune",
        "--model",
        s(m),
        "--data",
        s(&d),
        "--min-reach",
        "0.5",
        "--out",
        s(&out),
    ]);
    assert_clean_error(&r, &expect);
    let r = ant(&[
        "export",
        "--model",
        s(m),
        "--format",
        "web",
        "--data",
        s(&d),
        "--out",
        s(&link.join("page")),
    ]);
    assert_clean_error(&r, &expect);
    assert!(
        !t.path().join("gone").exists(),
        "the link's target was made"
    );
    // A loop of links, a link to a file, and a file on the way.
    let (a, b, file) = (t.path().join("a"), t.path().join("b"), t.path().join("f"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    std::fs::write(&file, "mine").unwrap();
    let to_file = t.path().join("to-file");
    std::os::unix::fs::symlink(&file, &to_file).unwrap();
    let tab = [
        "--preset",
        "tabular",
        "--target",
        "y",
        "--task",
        "classification",
    ];
    for (out, says) in [
        (a.join("x"), "which leads to no folder (a loop of links"),
        (
            to_file.join("x"),
            "to-file: is a link to a file, not a folder",
        ),
        (file.join("x"), "f: is a file, not a folder"),
    ] {
        assert_clean_error(&train_into(&d, &out, &tab), &[says]);
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
}

/// `export --format onnx --out data.csv` must not replace a table with a model, nor a
/// picture a file of any name: an existing file is replaced only by output of its own
/// kind (its name's ending); otherwise nothing is written.
#[test]
fn an_output_never_replaces_a_file_of_another_kind() {
    let t = tempfile::tempdir().unwrap();
    let m = tiny_model();
    let d = m.parent().unwrap().join("train.csv");
    let victim = t.path().join("victim.csv");
    std::fs::write(&victim, "a,b\n1,2\n").unwrap();
    let v = s(&victim);
    let runs: [Vec<&str>; 3] = [
        vec!["export", "--model", s(m), "--format", "onnx", "--out", v],
        vec!["plot", "--model", s(m), "--format", "dot", "--out", v],
        vec!["curves", "--run", s(m), "--format", "svg", "--out", v],
    ];
    for args in runs {
        assert_clean_error(
            &ant(&args),
            &["victim.csv: exists, and its name ends in .csv, not ."],
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "a,b\n1,2\n");
    }
    // A file of the kind written is replaced, and a name without an ending says no kind
    // (`--out model` twice succeeds). A new file named as another kind is refused too
    // (tests/output_names.rs).
    let onnx = t.path().join("m.onnx");
    std::fs::write(&onnx, "old").unwrap();
    let bare = t.path().join("model");
    for out in [&onnx, &bare, &bare] {
        let r = ant(&[
            "export",
            "--model",
            s(m),
            "--format",
            "onnx",
            "--out",
            s(out),
        ]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    assert_ne!(std::fs::read(&onnx).unwrap(), b"old");
    let r = ant(&["predict", "--model", s(m), "--input", s(&d), "--output", v]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

/// `--model m/tree.json` names the folder to give, not only
/// "m/tree.json/tree.json: Not a directory".
#[test]
fn a_model_file_given_for_its_folder_names_the_folder() {
    let m = tiny_model();
    let d = m.parent().unwrap().join("train.csv");
    let tree = m.join("tree.json");
    let r = ant(&["eval", "--model", s(&tree), "--data", s(&d)]);
    assert_clean_error(
        &r,
        &["tree.json: is a file", "the folder that holds it", s(m)],
    );
    let r = ant(&["inspect", "--model", s(&d)]);
    assert_clean_error(&r, &["train.csv: is a file, not a model's or run's folder"]);
    // Every command that takes a model's or run's folder.
    let folder = ["tree.json: is a file: give the folder that holds it", s(m)];
    let svg = tree.with_file_name("c.svg");
    let r = ant(&["curves", "--run", s(&tree), "--out", s(&svg)]);
    assert_clean_error(&r, &folder);
    assert_clean_error(&ant(&["train", "--resume", s(&tree)]), &folder);
}

/// A copy of the tiny model's directory (and its files) in `to`.
fn copy_model(to: &Path) -> PathBuf {
    let m = to.join("model");
    std::fs::create_dir_all(&m).unwrap();
    for e in std::fs::read_dir(tiny_model()).unwrap().flatten() {
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), m.join(e.file_name())).unwrap();
        }
    }
    m
}

/// `tree.json` of the model in `dir`, edited.
fn edit_tree(dir: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let p = dir.join("tree.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
}

#[test]
fn prune_keeps_a_model_in_its_out_unless_forced_and_then_leaves_no_stale_report() {
    let t = tempfile::tempdir().unwrap();
    let data = tiny_model().parent().unwrap().join("train.csv");
    let other = copy_model(t.path());
    assert!(other.join("report.json").is_file() && other.join("records.jsonl").is_file());
    let before = std::fs::read(other.join("tree.json")).unwrap();
    let prune = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "prune",
            "--model",
            s(tiny_model()),
            "--data",
            s(&data),
            "--min-reach",
            "0.01",
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        ant(&args)
    };
    let r = prune(&other, &[]);
    assert_clean_error(&r, &["holds a trained model", "--force"]);
    assert_eq!(std::fs::read(other.join("tree.json")).unwrap(), before);
    // Its own directory is an input: refused even with --force.
    let r = prune(tiny_model(), &["--force"]);
    assert_clean_error(&r, &["is the input"]);
    let r = prune(&other, &["--force"]);
    assert!(r.status.success(), "{}", common::stderr(&r));
    // The old model's records and report went with it; prune.json describes the new.
    assert!(!other.join("report.json").exists());
    assert!(!other.join("records.jsonl").exists());
    assert!(other.join("prune.json").is_file());
    // An ensemble's directory is never a single model's --out.
    let ens = t.path().join("ens");
    std::fs::create_dir(&ens).unwrap();
    // (This one's ensemble.json is not ant's either: refused as the user's.)
    std::fs::write(ens.join("ensemble.json"), "{}").unwrap();
    let r = prune(&ens, &["--force"]);
    assert_clean_error(&r, &["holds ensemble.json"]);
    assert!(!ens.join("tree.json").exists());
}

#[test]
fn a_score_that_is_not_finite_is_an_error_before_anything_is_saved() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("big.csv");
    // A learning rate of 1e30 (an f32 still) sends every weight to infinity. (Targets
    // of 1e37 used to do it through an f32 MSE; that sum is f64 now, and they train.)
    let rows: String = (0..80)
        .map(|i| format!("{},{},{}\n", i % 7, i % 3, 1 + i % 3))
        .collect();
    std::fs::write(&csv, format!("a,b,y\n{rows}")).unwrap();
    let out = t.path().join("out");
    let r = train_into(
        &csv,
        &out,
        &[
            "--preset",
            "tabular",
            "--target",
            "y",
            "--task",
            "regression",
            "--width",
            "8",
            "--lr",
            "1e30",
        ],
    );
    assert_clean_error(&r, &["diverged", "validation NLL is inf"]);
    assert!(!out.join("tree.json").exists());
    assert!(!out.join("checkpoint").exists());
    assert!(!out.join("run.lock").exists());
}

#[test]
fn counts_from_flags_and_files_are_bounded() {
    let t = tempfile::tempdir().unwrap();
    let data = tiny_model().parent().unwrap().join("train.csv");
    let out = t.path().join("ens");
    let flags = [
        "--preset",
        "tabular",
        "--target",
        "y",
        "--task",
        "classification",
    ];
    let mut args = flags.to_vec();
    args.extend(["--ensemble", "18446744073709551615", "--member", "0"]);
    let r = common::ant_bounded(
        &[&["train", "--data", s(&data), "--out", s(&out)], &args[..]].concat(),
        60,
    );
    assert_clean_error(&r, &["--ensemble must be at most 1000"]);
    assert!(!out.exists());
    // A tampered ensemble.json: its size is checked before anything is made of it.
    std::fs::create_dir(&out).unwrap();
    let spec = ant::run::RunSpec {
        data: ant::run::DataSpec {
            path: data.clone(),
            test_data: None,
            test_fraction: 0.2,
            target: None,
            train_limit: None,
            image_size: None,
        },
        params: ant::AntParams::new(ant::Preset::Tabular),
        member: None,
    };
    let file = ant::ensemble::EnsembleFile::new(spec, 2, t.path().to_path_buf()).unwrap();
    file.save(&out).unwrap();
    let p = out.join("ensemble.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["size"] = serde_json::json!(1_000_000_000_000u64);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    for cmd in [
        &["inspect", "--model", s(&out)][..],
        &["train", "--resume", s(&out)],
    ] {
        let r = common::ant_bounded(cmd, 60);
        assert_clean_error(&r, &["ensemble.json", "1000000000000", "member count"]);
    }
    // --skip-rows far past the end of the file ends with the file.
    let mut args = flags.to_vec();
    args.extend(["--skip-rows", "18446744073709551615"]);
    let r = common::ant_bounded(
        &[
            &["train", "--data", s(&data), "--out", s(&t.path().join("o"))],
            &args[..],
        ]
        .concat(),
        20,
    );
    assert_clean_error(&r, &["train.csv", "contains no rows after skipping"]);
}

#[cfg(unix)]
#[test]
fn endless_inputs_are_refused_without_reading_them_whole() {
    let t = tempfile::tempdir().unwrap();
    // Weights that are a link to /dev/zero.
    let m = copy_model(t.path());
    let weights = std::fs::read_dir(&m)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "safetensors"))
        .unwrap();
    std::fs::remove_file(&weights).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &weights).unwrap();
    let r = common::ant_bounded(&["inspect", "--model", s(&m)], 60);
    assert_clean_error(&r, &["safetensors", "is a device, not a file"]);
    // Inputs to predict that never end.
    let r = common::ant_bounded(
        &[
            "predict",
            "--model",
            s(tiny_model()),
            "--input",
            "/dev/zero",
        ],
        60,
    );
    assert_clean_error(&r, &["/dev/zero", "is a device, not a file"]);
}

#[test]
fn a_huge_field_is_quoted_in_part() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("huge.csv");
    let huge = "7".repeat(20 << 20) + "x";
    let rows: String = (0..20)
        .map(|i| format!("{i},{},{}\n", i % 3, i % 2))
        .collect();
    std::fs::write(&csv, format!("a,b,y\n{rows}1,{huge},0\n")).unwrap();
    let r = train(
        &csv,
        &[
            "--preset",
            "tabular",
            "--target",
            "y",
            "--task",
            "classification",
        ],
    );
    assert_clean_error(
        &r,
        &["huge.csv", "line 22", "is not a number", "20971521 bytes"],
    );
    assert!(r.stderr.len() < 2000, "{} bytes on stderr", r.stderr.len());
}

#[test]
fn an_ambiguous_target_name_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("dup.csv");
    let rows: String = (0..40)
        .map(|i| format!("{},{},{},{}\n", i % 2, i, i % 3, i % 2))
        .collect();
    std::fs::write(&csv, format!("a,a,c,y\n{rows}")).unwrap();
    let r = train(
        &csv,
        &[
            "--preset",
            "tabular",
            "--target",
            "a",
            "--task",
            "classification",
        ],
    );
    assert_clean_error(&r, &["dup.csv", "'a' is ambiguous", "columns 0, 1"]);
}

#[test]
fn class_names_must_name_each_class_once() {
    let t = tempfile::tempdir().unwrap();
    let m = copy_model(t.path());
    edit_tree(&m, |v| v["class_names"] = serde_json::json!(["even"]));
    let r = ant(&["inspect", "--model", s(&m)]);
    assert_clean_error(
        &r,
        &[
            "tree.json",
            "class_names has 1 names for the model's 2 classes",
        ],
    );
    edit_tree(&m, |v| v["class_names"] = serde_json::json!(["odd", "odd"]));
    let r = ant(&["inspect", "--model", s(&m)]);
    assert_clean_error(&r, &["tree.json", "'odd' twice"]);
}

#[test]
fn picture_counts_are_bounded() {
    let t = tempfile::tempdir().unwrap();
    let data = tiny_model().parent().unwrap().join("train.csv");
    let out = t.path().join("t.svg");
    let r = common::ant_bounded(
        &[
            "plot",
            "--model",
            s(tiny_model()),
            "--data",
            s(&data),
            "--out",
            s(&out),
            "--bins",
            "1000000000000",
        ],
        60,
    );
    assert_clean_error(&r, &["--bins must be from 1 to 1000"]);
    assert!(!out.exists());
}

/// A `tree.json` whose table description was edited (the target's index beyond the
/// columns, a column named twice, another column count) must not load and then make
/// `eval`, `plot`, `prune` or `export` panic: every command that reads the model refuses
/// it, naming `tree.json`.
#[test]
fn an_impossible_table_description_in_tree_json_is_refused_by_every_command() {
    let t = tempfile::tempdir().unwrap();
    let data = tiny_model().parent().unwrap().join("train.csv");
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 3] = [
        ("index 10 is beyond", |v| {
            v["provenance"]["target"]["index"] = 10.into()
        }),
        ("names 'a' twice", |v| {
            v["provenance"]["target"]["columns"] = serde_json::json!(["a", "a", "c", "y"])
        }),
        ("7 columns", |v| {
            v["provenance"]["target"]["n_columns"] = 7.into()
        }),
    ];
    for (k, (why, edit)) in edits.into_iter().enumerate() {
        let m = copy_model(&t.path().join(k.to_string()));
        edit_tree(&m, edit);
        let out = t.path().join(format!("out-{k}"));
        let picture = t.path().join(format!("x-{k}.svg"));
        let runs: [Vec<&str>; 6] = [
            vec!["eval", "--model", s(&m), "--data", s(&data)],
            vec!["predict", "--model", s(&m), "--input", s(&data)],
            vec![
                "plot",
                "--model",
                s(&m),
                "--data",
                s(&data),
                "--out",
                s(&picture),
            ],
            vec![
                "prune",
                "--model",
                s(&m),
                "--data",
                s(&data),
                "--min-reach",
                "0.5",
                "--out",
                s(&out),
            ],
            vec![
                "export",
                "--model",
                s(&m),
                "--format",
                "web",
                "--data",
                s(&data),
                "--out",
                s(&out),
            ],
            vec!["inspect", "--model", s(&m)],
        ];
        for args in runs {
            assert_clean_error(&ant(&args), &["tree.json", "provenance.target", why]);
        }
    }
}

/// `train` on a table whose target column is `y`, holding `task`'s targets.
fn train_y(data: &Path, task: &str, extra: &[&str]) -> Output {
    let mut args = vec!["--preset", "tabular", "--target", "y", "--task", task];
    args.extend_from_slice(extra);
    train(data, &args)
}

/// Training on values whose mean f32 scaling cannot hold (targets near 1.5e36) would
/// save a model that no command could load: such data is refused before training,
/// naming the file; and a few conflicting or empty settings are refused with messages
/// that hold.
#[test]
fn a_model_that_could_not_load_is_never_trained_and_settings_that_conflict_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("huge.csv");
    let rows: String = (0..60)
        .map(|i| format!("{},3.{}e38\n", i % 7, i % 3))
        .collect();
    std::fs::write(&data, format!("a,y\n{rows}")).unwrap();
    let o = train_y(&data, "regression", &[]);
    assert_clean_error(
        &o,
        &[
            s(&data),
            "cannot be standardised in f32",
            "y_mean",
            "multiply the column by 1e-3",
        ],
    );
    let m = tiny_model();
    let d = m.parent().unwrap().join("train.csv");
    // Written in the test's own folder: an earlier version wrote `b.svg` in the
    // repository's root.
    let picture = t.path().join("b.svg");
    let o = ant(&[
        "plot",
        "--model",
        s(m),
        "--data",
        s(&d),
        "--bins",
        "0",
        "--out",
        s(&picture),
    ]);
    assert_clean_error(&o, &["--bins must be from 1 to 1000"]);
    assert!(!picture.exists(), "a refused plot wrote its picture");
    let svg = t.path().join("c.pdf");
    let o = ant(&["curves", "--run", s(m), "--out", s(&svg)]);
    assert_clean_error(&o, &["unknown picture format", "use svg or png"]);
    let o = train_y(
        &d,
        "classification",
        &["--test-data", s(&d), "--test-fraction", "0.3"],
    );
    let e = common::stderr(&o);
    assert!(
        !o.status.success() && e.contains("cannot be used with"),
        "{e}"
    );
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = ant(&["eval", "--model", s(m), "--data", s(&empty)]);
    assert_clean_error(&o, &["is a directory", "give a table file"]);
}
