//! NumPy files as data: `.npz` archives of samples and labels (`x`/`y`, or Keras'
//! `x_train`/`y_train`/`x_test`/`y_test`), any numeric dtype, C or Fortran order,
//! images channels last or first; and one clear error for each kind of bad array.

use std::io::Write;
use std::path::{Path, PathBuf};

use ant::data::source::load_source;

mod common;

use common::*;

/// An `.npy` file of `shape` and raw little-endian `data` of dtype `descr` (`<f4`, `|u1`).
fn npy(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// An `.npz` of the named arrays (stored, as `np.savez` writes them).
fn npz(path: &Path, arrays: &[(&str, Vec<u8>)]) -> PathBuf {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in arrays {
        zip.start_file(format!("{name}.npy"), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    path.to_path_buf()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `n` grey `h` x `w` images as bytes, and labels: class = the brightest third.
fn images(n: usize, h: usize, w: usize) -> (Vec<u8>, Vec<u8>) {
    let mut x = vec![];
    let mut y = vec![];
    for i in 0..n {
        let c = i % 3;
        for r in 0..h {
            for col in 0..w {
                let on = col * 3 / w == c;
                x.push(if on {
                    200 + (i % 50) as u8
                } else {
                    ((r + col + i) % 30) as u8
                });
            }
        }
        y.push(c as u8 * 3 + 1);
    }
    (x, y)
}

#[test]
fn a_keras_style_npz_trains_on_its_own_test_arrays_with_classes_named_by_value() {
    let d = tempfile::tempdir().unwrap();
    let (x, y) = images(60, 8, 8);
    let (xt, yt) = images(12, 8, 8);
    let p = npz(
        &d.path().join("digits.npz"),
        &[
            ("x_train", npy("|u1", false, &[60, 8, 8], &x)),
            ("y_train", npy("|u1", false, &[60], &y)),
            ("x_test", npy("|u1", false, &[12, 8, 8], &xt)),
            ("y_test", npy("|u1", false, &[12], &yt)),
        ],
    );
    let s = load_source(&p, None, 0.2, 0, None, None).unwrap();
    assert_eq!((s.train.len(), s.test.len()), (60, 12));
    assert_eq!(s.train.sample_shape(), &[1, 8, 8]);
    // Bytes become values in 0..1, as IDX bytes do.
    assert_eq!(s.train.x()[0], f32::from(x[0]) / 255.0);
    assert_eq!(
        s.class_names.as_deref(),
        Some(&["1".to_string(), "4".to_string(), "7".to_string()][..])
    );
    let out = d.path().join("m");
    let o = ant_with(
        "train --preset mnist-c --epochs-node 1 --refine-epochs 1 --max-depth 0",
        &["--data", s_(&p), "--out", s_(&out)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // predict reads an .npy of samples alone.
    let one = d.path().join("one.npy");
    std::fs::write(&one, npy("|u1", false, &[2, 8, 8], &xt[..128])).unwrap();
    let o = ant(&["predict", "--model", s_(&out), "--input", s_(&one)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with("row,prediction,p_1,p_4,p_7,leaf\n"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 3);
}

fn s_(p: &Path) -> &str {
    s(p)
}

#[test]
fn one_data_set_in_any_dtype_order_or_channel_layout_reads_the_same() {
    let d = tempfile::tempdir().unwrap();
    // (n, 3, 2, 5) is channels first: its last axis (5) can be no channel count.
    let (n, h, w) = (9, 2, 5);
    // Channels last: (n, h, w, 3) floats.
    let last: Vec<f32> = (0..n * h * w * 3).map(|i| i as f32 / 7.0).collect();
    let labels: Vec<u8> = (0..n as u8).map(|i| i % 3).collect();
    let y = npy("|u1", false, &[n], &labels);
    let a = npz(
        &d.path().join("last.npz"),
        &[
            ("x", npy("<f4", false, &[n, h, w, 3], &f32s(&last))),
            ("y", y.clone()),
        ],
    );
    // The same, channels first.
    let mut first = vec![0f32; last.len()];
    for s in 0..n {
        for c in 0..3 {
            for p in 0..h * w {
                first[((s * 3 + c) * h * w) + p] = last[(s * h * w + p) * 3 + c];
            }
        }
    }
    let b = npz(
        &d.path().join("first.npz"),
        &[
            ("X", npy("<f4", false, &[n, 3, h, w], &f32s(&first))),
            ("labels", y.clone()),
        ],
    );
    // The same channels first, in Fortran order and as float64.
    let mut fortran = vec![];
    for wi in 0..w {
        for hi in 0..h {
            for c in 0..3 {
                for s in 0..n {
                    fortran.extend_from_slice(
                        &f64::from(first[((s * 3 + c) * h + hi) * w + wi]).to_le_bytes(),
                    );
                }
            }
        }
    }
    let c = npz(
        &d.path().join("fortran.npz"),
        &[
            ("images", npy("<f8", true, &[n, 3, h, w], &fortran)),
            ("y", y),
        ],
    );
    let read = |p: &Path| load_source(p, None, 0.3, 0, None, None).unwrap();
    let (ra, rb, rc) = (read(&a), read(&b), read(&c));
    assert_eq!(ra.train.sample_shape(), &[3, h, w]);
    assert_eq!(ra.train.x(), rb.train.x());
    assert_eq!(ra.train.x(), rc.train.x());
    assert_eq!(ra.test.x(), rc.test.x());
    // Table rows: (n, d) of int64 with float labels: a regression.
    let rows: Vec<u8> = (0..20i64).flat_map(|i| i.to_le_bytes()).collect();
    let values = f32s(&(0..10).map(|i| i as f32 * 0.5).collect::<Vec<_>>());
    let t = npz(
        &d.path().join("table.npz"),
        &[
            ("x", npy("<i8", false, &[10, 2], &rows)),
            ("y", npy("<f4", false, &[10], &values)),
        ],
    );
    let rt = load_source(&t, None, 0.2, 0, None, None).unwrap();
    assert_eq!(rt.train.sample_shape(), &[2]);
    assert!(matches!(
        rt.train.targets(),
        ant::Targets::Values { dim: 1, .. }
    ));
}

#[test]
fn each_kind_of_bad_numpy_file_is_one_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let refused = |p: &Path, needles: &[&str]| {
        let out = d.path().join("never");
        let o = ant_with(
            "train --preset mnist-c --epochs-node 1",
            &["--data", s(p), "--out", s(&out)],
        );
        assert_clean_error(&o, needles);
        assert!(!out.exists());
    };
    let (x, y) = images(12, 4, 4);
    // No labels.
    let p = npz(
        &d.path().join("nolabels.npz"),
        &[("x", npy("|u1", false, &[12, 4, 4], &x))],
    );
    refused(&p, &["nolabels.npz", "no labels"]);
    // A .npy alone.
    let p = d.path().join("alone.npy");
    std::fs::write(&p, npy("|u1", false, &[12, 4, 4], &x)).unwrap();
    refused(&p, &["alone.npy", "no labels", "np.savez"]);
    // An object array.
    let mut obj = npy("|O", false, &[12], &[]);
    obj.extend_from_slice(b"\x80\x04\x95junk");
    let p = npz(
        &d.path().join("objects.npz"),
        &[("x", npy("|u1", false, &[12, 4, 4], &x)), ("y", obj)],
    );
    refused(&p, &["objects.npz", "object array"]);
    // Labels of another count.
    let p = npz(
        &d.path().join("short.npz"),
        &[
            ("x", npy("|u1", false, &[12, 4, 4], &x)),
            ("y", npy("|u1", false, &[5], &y[..5])),
        ],
    );
    refused(&p, &["short.npz", "one per sample"]);
    // A cut array.
    let mut cut = npy("|u1", false, &[12, 4, 4], &x);
    cut.truncate(cut.len() - 10);
    let p = npz(
        &d.path().join("cut.npz"),
        &[("x", cut), ("y", npy("|u1", false, &[12], &y))],
    );
    refused(&p, &["cut.npz", "cut short"]);
    // --target names no column of an .npz.
    let p = npz(
        &d.path().join("good.npz"),
        &[
            ("x", npy("|u1", false, &[12, 4, 4], &x)),
            ("y", npy("|u1", false, &[12], &y)),
        ],
    );
    let o = ant_with(
        "train --preset mnist-c --target 0 --task classification",
        &["--data", s(&p), "--out", s(&d.path().join("never"))],
    );
    assert_clean_error(&o, &["good.npz", "leave out --target"]);
    // Samples without values; integer labels of two columns.
    let p = npz(
        &d.path().join("empty.npz"),
        &[
            ("x", npy("|u1", false, &[12, 4, 0], &[])),
            ("y", npy("|u1", false, &[12], &y)),
        ],
    );
    refused(&p, &["empty.npz", "no values"]);
    let p = npz(
        &d.path().join("wide.npz"),
        &[
            ("x", npy("|u1", false, &[12, 4, 4], &x)),
            (
                "y",
                npy("|u1", false, &[12, 2], &[y.clone(), y.clone()].concat()),
            ),
        ],
    );
    refused(&p, &["wide.npz", "one per sample"]);
    // Keras-style test arrays that do not fit the training ones, or come alone.
    let (xt, yt) = images(6, 3, 3);
    let keras = |name: &str, test: Vec<(&'static str, Vec<u8>)>| {
        let mut arrays = vec![
            ("x_train", npy("|u1", false, &[12, 4, 4], &x)),
            ("y_train", npy("|u1", false, &[12], &y)),
        ];
        arrays.extend(test);
        npz(&d.path().join(name), &arrays)
    };
    let p = keras(
        "shape.npz",
        vec![
            ("x_test", npy("|u1", false, &[6, 3, 3], &xt)),
            ("y_test", npy("|u1", false, &[6], &yt)),
        ],
    );
    refused(&p, &["shape.npz", "x_test", "[1, 3, 3]"]);
    let (x4, _) = images(6, 4, 4);
    let p = keras(
        "class.npz",
        vec![
            ("x_test", npy("|u1", false, &[6, 4, 4], &x4)),
            ("y_test", npy("|u1", false, &[6], &[99; 6])),
        ],
    );
    refused(&p, &["class.npz", "not a class of the training set"]);
    let p = keras(
        "alone.npz",
        vec![("x_test", npy("|u1", false, &[6, 4, 4], &x4))],
    );
    refused(&p, &["alone.npz", "x_test", "y_test"]);
    // predict on an .npy whose header claims more values than u64 counts.
    let model = d.path().join("m");
    ok(&ant_with(
        "train --preset mnist-c --epochs-node 1 --refine-epochs 1 --max-depth 0",
        &["--data", s(&good_npz(d.path(), &x, &y)), "--out", s(&model)],
    ));
    let huge = d.path().join("huge.npy");
    let mut bytes = npy("|u1", false, &[1 << 62, 1 << 62, 10], &[]);
    bytes.extend_from_slice(&[0; 64]);
    std::fs::write(&huge, bytes).unwrap();
    let o = ant(&["predict", "--model", s(&model), "--input", s(&huge)]);
    assert_clean_error(&o, &["huge.npy", "shape"]);
}

/// `x` (12 images of 4x4) and `y` as an `.npz` in `dir`.
fn good_npz(dir: &Path, x: &[u8], y: &[u8]) -> PathBuf {
    npz(
        &dir.join("train.npz"),
        &[
            ("x", npy("|u1", false, &[12, 4, 4], x)),
            ("y", npy("|u1", false, &[12], y)),
        ],
    )
}
