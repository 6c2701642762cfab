//! `ant predict` on an image model: an IDX image file in, JSON lines / CSV out; and
//! images of the wrong size refused naming the file.

use std::path::Path;

use ant::data::idx::read_idx;

mod common;
use common::ant;

fn idx(dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 8, dims.len() as u8];
    for d in dims {
        b.extend_from_slice(&d.to_be_bytes());
    }
    b.extend_from_slice(data);
    b
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn mnist_model_predicts_an_idx_file() {
    let mnist = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let t = tempfile::tempdir().unwrap();
    // A small MNIST directory: 400 training and 50 test images, real data.
    let dir = t.path().join("mnist");
    std::fs::create_dir(&dir).unwrap();
    let px = 28 * 28;
    for (prefix, n) in [("train", 400usize), ("t10k", 50)] {
        let im = read_idx(&mnist.join(format!("{prefix}-images-idx3-ubyte.gz"))).unwrap();
        let lb = read_idx(&mnist.join(format!("{prefix}-labels-idx1-ubyte.gz"))).unwrap();
        std::fs::write(
            dir.join(format!("{prefix}-images-idx3-ubyte")),
            idx(&[n as u32, 28, 28], &im.data[..n * px]),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{prefix}-labels-idx1-ubyte")),
            idx(&[n as u32], &lb.data[..n]),
        )
        .unwrap();
    }
    let model = t.path().join("model");
    let r = ant(&[
        "train",
        "--preset",
        "mnist-c",
        "--data",
        s(&dir),
        "--out",
        s(&model),
        "--epochs-node",
        "3",
        "--refine-epochs",
        "2",
        "--max-depth",
        "1",
        "--batch-size",
        "64",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));

    let images = dir.join("t10k-images-idx3-ubyte");
    let out = t.path().join("p.jsonl");
    let r = ant(&[
        "predict",
        "--model",
        s(&model),
        "--input",
        s(&images),
        "--output",
        s(&out),
        "--single-path",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 50);
    let labels = read_idx(&dir.join("t10k-labels-idx1-ubyte")).unwrap().data;
    let mut right = 0;
    for (i, (p, &l)) in lines.iter().zip(&labels).enumerate() {
        assert_eq!(p["row"], i);
        // No class names stored for IDX data: the class index is the name.
        let class = p["class"].as_u64().unwrap();
        assert_eq!(p["prediction"], class.to_string());
        assert_eq!(p["probabilities"].as_array().unwrap().len(), 10);
        assert!(p["leaf"].is_u64());
        right += usize::from(class == u64::from(l));
    }
    // Chance is 5 of 50; even this tiny model does far better.
    assert!(right >= 20, "{right}/50 right");
    // Stdout CSV has a header and one line per image; with --reach, every node's reach
    // probability (the root's is 1).
    let r = ant(&[
        "predict",
        "--model",
        s(&model),
        "--input",
        s(&images),
        "--reach",
    ]);
    assert!(r.status.success());
    let csv = String::from_utf8(r.stdout).unwrap();
    assert!(csv.starts_with("row,prediction,p_0,"), "{csv}");
    assert_eq!(csv.lines().count(), 51);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let root = header
        .iter()
        .position(|&h| h == "reach_0")
        .expect("reach columns");
    for line in csv.lines().skip(1) {
        let reach: f32 = line.split(',').nth(root).unwrap().parse().unwrap();
        assert!((reach - 1.0).abs() < 1e-6, "{line}");
    }

    // Images of the wrong size, for predict and for eval: the file is named.
    let small = t.path().join("small-idx3");
    std::fs::write(&small, idx(&[2, 8, 8], &[0; 128])).unwrap();
    let r = ant(&["predict", "--model", s(&model), "--input", s(&small)]);
    assert_eq!(r.status.code(), Some(2));
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(e.contains("small-idx3") && e.contains("[1, 8, 8]"), "{e}");
    let d8 = t.path().join("eight");
    std::fs::create_dir(&d8).unwrap();
    for (prefix, n) in [("train", 2u32), ("t10k", 2)] {
        std::fs::write(
            d8.join(format!("{prefix}-images-idx3-ubyte")),
            idx(&[n, 8, 8], &[0; 128]),
        )
        .unwrap();
        std::fs::write(
            d8.join(format!("{prefix}-labels-idx1-ubyte")),
            idx(&[n], &[0, 1]),
        )
        .unwrap();
    }
    let r = ant(&["eval", "--model", s(&model), "--data", s(&d8)]);
    assert_eq!(r.status.code(), Some(2));
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(e.contains("eight") && e.contains("[1, 28, 28]"), "{e}");

    // `eval` does not ask for the training files it does not score: the test files
    // alone score as they do beside them, and a test of some digits only is no error.
    let eval_json = |d: &Path| {
        let r = ant(&["eval", "--model", s(&model), "--data", s(d), "--json"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        (
            v["multi_path_error"].as_f64().unwrap(),
            v["test_samples"].as_u64().unwrap(),
        )
    };
    let only_test = t.path().join("only-test");
    std::fs::create_dir(&only_test).unwrap();
    for f in ["t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"] {
        std::fs::copy(dir.join(f), only_test.join(f)).unwrap();
    }
    assert_eq!(eval_json(&only_test), eval_json(&dir));
    let some = t.path().join("some-digits");
    std::fs::create_dir(&some).unwrap();
    let keep: Vec<usize> = (0..50).filter(|&i| labels[i] < 4).collect();
    let pixels = read_idx(&images).unwrap().data;
    let kept: Vec<u8> = keep
        .iter()
        .flat_map(|&i| pixels[i * px..(i + 1) * px].to_vec())
        .collect();
    let n = keep.len() as u32;
    std::fs::write(
        some.join("t10k-images-idx3-ubyte"),
        idx(&[n, 28, 28], &kept),
    )
    .unwrap();
    let kept_labels: Vec<u8> = keep.iter().map(|&i| labels[i]).collect();
    std::fs::write(some.join("t10k-labels-idx1-ubyte"), idx(&[n], &kept_labels)).unwrap();
    assert_eq!(eval_json(&some).1, u64::from(n));
}

#[test]
fn cifar_directory_trains_evaluates_and_predicts_a_batch() {
    // Official binary layout, synthetic content (CIFAR-10 is not available here):
    // the red plane is dark for class 0, bright for class 1; the rest is noise.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cifar-10-batches-bin");
    std::fs::create_dir(&dir).unwrap();
    let mut state = 12345u32;
    let mut batch = |n: usize| {
        let mut b = Vec::with_capacity(n * 3073);
        for i in 0..n {
            let label = (i % 2) as u8;
            b.push(label);
            b.extend(std::iter::repeat_n(
                if label == 1 { 200u8 } else { 30 },
                1024,
            ));
            b.extend((0..2048).map(|_| {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (state >> 24) as u8
            }));
        }
        b
    };
    for i in 1..=5 {
        std::fs::write(dir.join(format!("data_batch_{i}.bin")), batch(20)).unwrap();
    }
    std::fs::write(dir.join("test_batch.bin"), batch(20)).unwrap();
    let model = t.path().join("model");
    // The directory holding cifar-10-batches-bin/ is accepted as --data.
    let data = s(t.path());
    let r = ant(&[
        "train",
        "--preset",
        "cifar10-c",
        "--data",
        data,
        "--out",
        s(&model),
        "--epochs-node",
        "2",
        "--refine-epochs",
        "1",
        "--max-depth",
        "1",
        "--batch-size",
        "32",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let e = ant(&["eval", "--model", s(&model), "--data", data, "--json"]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    let v: serde_json::Value = serde_json::from_slice(&e.stdout).unwrap();
    assert_eq!(v["test_samples"], 20);
    assert!(v["multi_path_error"].as_f64().unwrap() < 25.0, "{v}");
    // The test batch alone scores the same: a directory read for its test rows neither
    // gives its training batches nor needs them.
    let only = t.path().join("only-test");
    std::fs::create_dir(&only).unwrap();
    std::fs::copy(dir.join("test_batch.bin"), only.join("test_batch.bin")).unwrap();
    let e = ant(&["eval", "--model", s(&model), "--data", s(&only), "--json"]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    let w: serde_json::Value = serde_json::from_slice(&e.stdout).unwrap();
    assert_eq!(
        (&w["test_samples"], &w["multi_path_error"]),
        (&v["test_samples"], &v["multi_path_error"])
    );
    let r = ant(&[
        "predict",
        "--model",
        s(&model),
        "--input",
        s(&dir.join("test_batch.bin")),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let csv = String::from_utf8(r.stdout).unwrap();
    assert_eq!(csv.lines().count(), 21);
    assert!(csv.lines().nth(2).unwrap().starts_with("1,1,"), "{csv}");

    // A batch whose first record is label 0 then a black pixel starts with two zero
    // bytes, as an IDX file does: it is still read as a CIFAR-10 batch.
    let mut zeros = batch(3);
    zeros[1..4].copy_from_slice(&[0, 0x08, 3]);
    let p = t.path().join("zeros.bin");
    std::fs::write(&p, &zeros).unwrap();
    let r = ant(&["predict", "--model", s(&model), "--input", s(&p)]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(String::from_utf8(r.stdout).unwrap().lines().count(), 4);
}
