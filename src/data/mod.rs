//! Data sets in memory and the loaders that fill them.
//!
//! Every loader returns a [`Dataset`]: samples as one row-major `f32` buffer plus
//! their targets. File formats live one per module; `detect` says which one a path
//! holds, [`source`] turns a `--data` path into training and test sets, and
//! `check_compatible` says whether a data set fits a model.

internal_mods! {
    /// CIFAR-10's binary batches.
    cifar;
    /// Delimited text: separators, headers, quoting.
    csv;
    /// Which format a path holds.
    detect;
    /// Whether a table's first row is a header.
    header;
    /// Folders of image files, one folder per class.
    image_folder;
    /// Which rows of a file a model was trained on, when not all of them.
    row_sketch;
    /// Checks of the rows a run trains and tests on, said before training starts.
    row_checks;
    /// MNIST's IDX files.
    idx;
    /// MATLAB .mat files (SARCOS).
    mat;
    /// NumPy's .npy and .npz files.
    numpy;
    /// Parquet tables.
    parquet;
    /// A table of text cells.
    table;
    /// SARCOS in its .mat or .csv form.
    sarcos;
    /// Validation and test rows, and ensemble members' rows.
    split;
}
pub(crate) mod columns;
mod compatible;
/// What f32 does to a column read.
mod f32_columns;
/// The size images are resized to, and its filter.
pub mod image_size;
pub mod labels;
pub mod source;
pub mod tabular;
mod target_column;

pub use compatible::Misfit;
pub(crate) use compatible::check_compatible;
pub(crate) use f32_columns::check_standardisation;
pub use f32_columns::{ColumnMagnitudes, to_f32};
// The root re-exports `Dataset` and `Targets`: their one public path is `ant::Dataset`.
pub(crate) mod dataset;
pub(crate) use dataset::{Dataset, Targets, Values};

use std::io::Read;
use std::path::Path;

use crate::error::{AntError, Result};
pub(crate) use crate::store::checksum::md5_hex;

/// Refuses training labels (classes `0..n_classes`, read from `path`) that do not
/// describe a classification problem: fewer than two classes with samples, or, with
/// `every_class`, a class without any sample. A format whose class count is inferred
/// from the largest label (IDX) asks for every class: one corrupt label 255 among
/// 0..=9 would otherwise make a 256-class model. Tables build their classes from the
/// labels found, so every class has samples there by construction.
pub(crate) fn check_classes(
    labels: &[u32],
    n_classes: usize,
    every_class: bool,
    path: &Path,
) -> Result<()> {
    let mut count = vec![0usize; n_classes];
    for &l in labels {
        if let Some(c) = count.get_mut(l as usize) {
            *c += 1;
        }
    }
    let present: Vec<usize> = (0..n_classes).filter(|&c| count[c] > 0).collect();
    if present.len() < 2 {
        let only = present
            .first()
            .map_or("none".to_string(), |c| c.to_string());
        return Err(AntError::data(
            path,
            format!(
                "the training labels hold a single class ({only}); classification needs at least 2"
            ),
        ));
    }
    let missing: Vec<usize> = (0..n_classes).filter(|&c| count[c] == 0).collect();
    if every_class && !missing.is_empty() {
        return Err(AntError::data(
            path,
            format!(
                "the labels run from 0 to {}, but no training sample has label {} \
                 (a corrupt label?): the classes must be 0..={} with samples of each",
                n_classes - 1,
                ranges(&missing),
                n_classes - 1
            ),
        ));
    }
    Ok(())
}

/// Refuses a test label (read from `path`) that no training sample has: its score
/// would count a class the model never saw (a CIFAR folder whose training batches lack
/// classes).
pub(crate) fn check_test_classes(train: &[u32], test: &[u32], path: &Path) -> Result<()> {
    let top = train
        .iter()
        .chain(test)
        .max()
        .map_or(0, |&m| m as usize + 1);
    let mut seen = vec![false; top];
    train.iter().for_each(|&l| seen[l as usize] = true);
    let Some(i) = test.iter().position(|&l| !seen[l as usize]) else {
        return Ok(());
    };
    let present: Vec<usize> = (0..top).filter(|&c| seen[c]).collect();
    Err(AntError::data(
        path,
        format!(
            "sample {i}: label {} is not a class of the training set ({})",
            test[i],
            ranges(&present)
        ),
    ))
}

/// Ascending numbers as `1, 3..=7, 9, 10`.
pub(crate) fn ranges(sorted: &[usize]) -> String {
    let mut parts: Vec<String> = vec![];
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => sorted[i].to_string(),
            1 => format!("{}, {}", sorted[i], sorted[j]),
            _ => format!("{}..={}", sorted[i], sorted[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// gzip magic bytes (RFC 1952).
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a whole file, transparently gunzipping it when it starts with the gzip
/// magic bytes (the extension is not consulted). A corrupt or truncated gzip
/// stream is a [`AntError::Data`] error.
/// Read and unpacked alike, at most this many bytes (a device such as `/dev/zero` is
/// refused; a stream or a gzip bomb stops here).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn read_maybe_gz(path: &Path) -> Result<Vec<u8>> {
    Ok(read_data(path)?.bytes)
}

/// A data file's bytes (unpacked), read once, and the checksum of exactly the bytes
/// read: a pipe or a process substitution (`<(cat x.csv)`) can be read only once, so
/// what is known of a file is known from this one read.
pub(crate) struct DataBytes {
    pub bytes: Vec<u8>,
    /// Hex MD5 of the raw bytes (before unpacking).
    pub raw_md5: String,
}

/// Every data file is read through here ([`read_maybe_gz`] keeps only the bytes).
pub(crate) fn read_data(path: &Path) -> Result<DataBytes> {
    let raw = crate::store::atomic::read_bounded(path, MAX_DATA_BYTES)
        .map_err(|e| AntError::io(path, e))?;
    let raw_md5 = md5_hex(&raw);
    let bytes = unpack(raw, path)?;
    Ok(DataBytes { bytes, raw_md5 })
}

/// `raw` gunzipped when it starts with the gzip magic bytes, else itself.
fn unpack(raw: Vec<u8>, path: &Path) -> Result<Vec<u8>> {
    if !raw.starts_with(&GZIP_MAGIC) {
        return Ok(raw);
    }
    let mut out: Vec<u8> = Vec::new();
    // Multi-member aware: some tools write concatenated gzip members.
    let mut gz = flate2::read::MultiGzDecoder::new(raw.as_slice()).take(MAX_DATA_BYTES + 1);
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match gz.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(AntError::data(path, format!("corrupt gzip stream: {e}"))),
        };
        if out.len() + n > out.capacity() {
            // Each growth is checked against the memory the process may have: a small
            // file that unpacks to gigabytes is an error, not an abort.
            let grow = out.capacity().max(1 << 20) as u64;
            let what = format!("unpacking it past {} MiB", out.len() >> 20);
            crate::os::check_file_fits(out.len() as u64 + grow, path, &what)?;
            out.reserve_exact(grow as usize);
        }
        out.extend_from_slice(&chunk[..n]);
    }
    if out.len() as u64 > MAX_DATA_BYTES {
        let msg =
            format!("unpacks to more than {MAX_DATA_BYTES} bytes, the most a data file may hold");
        return Err(AntError::data(path, msg));
    }
    Ok(out)
}

/// The most bytes a data file is read into memory as (raw, or unpacked): 4 GiB.
pub(crate) const MAX_DATA_BYTES: u64 = 4 << 30;

/// A model's class names (`tree.json`'s `class_names`) must name each class once:
/// as many names as classes, all distinct (none for a regression model).
pub(crate) fn check_class_names(
    names: Option<&[String]>,
    task: crate::task::Task,
) -> std::result::Result<(), String> {
    let Some(names) = names else {
        return Ok(());
    };
    let classes = match task {
        crate::task::Task::Classification { classes } => classes,
        crate::task::Task::Regression { .. } if names.is_empty() => return Ok(()),
        crate::task::Task::Regression { .. } => {
            return Err("class_names are given for a regression model".into());
        }
    };
    if names.len() != classes {
        return Err(format!(
            "class_names has {} names for the model's {classes} classes",
            names.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = names.iter().find(|n| !seen.insert(n.as_str())) {
        let twice = crate::error::quoted(twice);
        return Err(format!(
            "class_names names {twice} twice: each class needs its own name"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy(n: usize) -> Dataset {
        // Sample i is [i, 10*i]; label i % 3.
        let x = (0..n).flat_map(|i| [i as f32, 10.0 * i as f32]).collect();
        let labels = (0..n).map(|i| (i % 3) as u32).collect();
        Dataset::new(
            x,
            vec![2],
            Targets::Classes {
                labels,
                n_classes: 3,
            },
        )
        .unwrap()
    }

    fn first_inputs(d: &Dataset) -> Vec<usize> {
        (0..d.len()).map(|i| d.sample(i)[0] as usize).collect()
    }

    #[test]
    fn new_validates_shapes() {
        let t = Targets::Classes {
            labels: vec![0, 1],
            n_classes: 2,
        };
        assert!(Dataset::new(vec![0.0; 5], vec![2], t.clone()).is_err());
        assert!(Dataset::new(vec![0.0; 4], vec![2], t).is_ok());
        let bad_label = Targets::Classes {
            labels: vec![0, 2],
            n_classes: 2,
        };
        assert!(Dataset::new(vec![0.0; 4], vec![2], bad_label).is_err());
        let v = Targets::Values {
            values: vec![0.0; 6],
            dim: 3,
        };
        let d = Dataset::new(vec![0.0; 4], vec![2], v).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d.n_classes(), None);
    }

    #[test]
    fn subset_gathers_in_order() {
        let d = toy(6);
        let s = d.subset(&[4, 1, 4]);
        assert_eq!(s.x(), vec![4.0, 40.0, 1.0, 10.0, 4.0, 40.0]);
        assert_eq!(
            s.targets,
            Targets::Classes {
                labels: vec![1, 1, 1],
                n_classes: 3
            }
        );
        assert_eq!(s.sample_shape, vec![2]);
        assert_eq!(d.take_first(2).x(), vec![0.0, 0.0, 1.0, 10.0]);
        assert_eq!(d.take_first(100).len(), 6);
    }

    #[test]
    fn split_tail_rounds() {
        let d = toy(10);
        let (h, t) = d.split_tail(0.25); // round(2.5) = 3
        assert_eq!((h.len(), t.len()), (7, 3));
        assert_eq!(first_inputs(&t), vec![7, 8, 9]);
        let (h, t) = d.split_tail(0.0);
        assert_eq!((h.len(), t.len()), (10, 0));
        let (h, t) = d.split_tail(1.0);
        assert_eq!((h.len(), t.len()), (0, 10));
    }

    #[test]
    #[should_panic(expected = "split fraction")]
    fn split_tail_rejects_bad_fraction() {
        toy(3).split_tail(1.5);
    }

    #[test]
    fn seeded_split_deterministic_disjoint_covering() {
        let d = toy(100);
        let (r1, h1, i1) = d.seeded_split(0.2, 7);
        let (r2, h2, i2) = d.seeded_split(0.2, 7);
        let (_, _, i3) = d.seeded_split(0.2, 8);
        assert_eq!(i1, i2);
        assert_eq!(h1.x(), h2.x());
        assert_eq!(r1.x(), r2.x());
        assert_ne!(i1, i3, "another seed should give another split");
        assert_eq!(h1.len(), 20);
        assert_eq!(r1.len(), 80);
        // Held-out rows are exactly the reported indices, in ascending order.
        assert_eq!(first_inputs(&h1), i1);
        assert!(i1.windows(2).all(|w| w[0] < w[1]));
        // Disjoint and covering, rest also in original order.
        let rest = first_inputs(&r1);
        assert!(rest.windows(2).all(|w| w[0] < w[1]));
        let mut all: Vec<usize> = rest.iter().chain(&i1).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
        // Not simply the first or last rows.
        assert_ne!(i1, (0..20).collect::<Vec<_>>());
        assert_ne!(i1, (80..100).collect::<Vec<_>>());
    }

    #[test]
    fn validation_split_is_seeded_and_stratified() {
        // 90 samples sorted by class (30 each): the tail would be one class.
        let x = (0..90).flat_map(|i| [i as f32, 0.0]).collect();
        let labels = (0..90).map(|i| (i / 30) as u32).collect();
        let t = Targets::Classes {
            labels,
            n_classes: 3,
        };
        let d = Dataset::new(x, vec![2], t).unwrap();
        assert_eq!(d.classes_missing_from(&d.split_tail(0.1).1), vec![0, 1]);
        let (rest, valid) = d.validation_split(0.1, 4, true);
        assert_eq!((rest.len(), valid.len()), (81, 9));
        let Targets::Classes { labels, .. } = &valid.targets else {
            unreachable!()
        };
        for c in 0..3 {
            assert_eq!(labels.iter().filter(|&&l| l == c).count(), 3, "{labels:?}");
        }
        assert!(d.classes_missing_from(&valid).is_empty());
        // Disjoint, covering, in order; the same seed gives the same rows, another not.
        let mut all: Vec<usize> = first_inputs(&rest)
            .into_iter()
            .chain(first_inputs(&valid))
            .collect();
        assert!(first_inputs(&valid).windows(2).all(|w| w[0] < w[1]));
        all.sort_unstable();
        assert_eq!(all, (0..90).collect::<Vec<_>>());
        assert_eq!(d.validation_split(0.1, 4, true).1.x(), valid.x());
        assert_ne!(d.validation_split(0.1, 5, true).1.x(), valid.x());
        // Not the test split's draw for the same seed.
        assert_ne!(d.seeded_split(0.1, 4).1.x(), valid.x());
        // A class of one sample stays in training; one of two gives one of each.
        let t = Targets::Classes {
            labels: vec![0, 1, 1, 0, 0, 0],
            n_classes: 2,
        };
        let d = Dataset::new(vec![0.0; 6], vec![1], t).unwrap();
        let (rest, valid) = d.validation_split(0.01, 0, true);
        assert_eq!((rest.len(), valid.len()), (4, 2));
        let t = Targets::Classes {
            labels: vec![0, 1, 0, 0, 0],
            n_classes: 2,
        };
        let d = Dataset::new(vec![0.0; 5], vec![1], t).unwrap();
        let (rest, valid) = d.validation_split(0.5, 0, true);
        assert_eq!(valid.classes_missing_from(&rest), Vec::<usize>::new());
        assert_eq!(rest.classes_missing_from(&valid), vec![1]);
        // Regression: a seeded draw of all rows.
        let v = Targets::Values {
            values: (0..50).map(|i| i as f32).collect(),
            dim: 1,
        };
        let d = Dataset::new((0..50).map(|i| i as f32).collect(), vec![1], v).unwrap();
        let (rest, valid) = d.validation_split(0.2, 3, true);
        assert_eq!((rest.len(), valid.len()), (40, 10));
        assert_ne!(first_inputs(&valid), (40..50).collect::<Vec<_>>());
    }

    #[test]
    fn checksums_tell_samples_apart() {
        let d = toy(10);
        assert_eq!(d.checksum(), toy(10).checksum());
        assert_eq!(d.checksum().len(), 32);
        let mut other = toy(10);
        if let crate::data::Values::F32(v) = &mut other.x {
            v[7] = 0.5;
        }
        assert_ne!(other.checksum(), d.checksum());
        assert_ne!(toy(9).checksum(), d.checksum());
        let relabelled = d.subset(&(0..10).collect::<Vec<_>>());
        assert_eq!(relabelled.checksum(), d.checksum());
        let mut relabelled = relabelled;
        if let Targets::Classes { labels, .. } = &mut relabelled.targets {
            labels[0] = 2;
        }
        assert_ne!(relabelled.checksum(), d.checksum());
        // The set of rows: any order, not other rows, nor a row twice for another.
        let reversed = d.subset(&(0..10).rev().collect::<Vec<_>>());
        assert_ne!(reversed.checksum(), d.checksum());
        assert_eq!(reversed.row_set_checksum(), d.row_set_checksum());
        assert_ne!(relabelled.row_set_checksum(), d.row_set_checksum());
        let twice = d.subset(&[0, 0, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_ne!(twice.row_set_checksum(), d.row_set_checksum());
    }

    #[test]
    fn check_finite_names_row_and_column() {
        let p = Path::new("/some/file.csv");
        let mut d = toy(4);
        assert!(d.check_finite(p).is_ok());
        if let crate::data::Values::F32(v) = &mut d.x {
            v[2 * 2 + 1] = f32::NAN;
        }
        let msg = d.check_finite(p).unwrap_err().to_string();
        assert!(msg.contains("/some/file.csv"), "{msg}");
        assert!(msg.contains("row 2, column 1"), "{msg}");

        let d = Dataset::new(
            vec![0.0; 4],
            vec![2],
            Targets::Values {
                values: vec![1.0, 2.0, 3.0, f32::INFINITY],
                dim: 2,
            },
        )
        .unwrap();
        let e = d.check_finite(p).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }));
        assert!(e.to_string().contains("row 1, target column 1"), "{e}");
    }

    #[test]
    fn classes_need_two_and_with_every_class_no_gap() {
        let p = Path::new("/d/labels");
        assert!(check_classes(&[0, 1, 2, 1], 3, true, p).is_ok());
        let e = check_classes(&[0, 0, 0], 1, true, p).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }));
        assert!(
            e.to_string()
                .contains("/d/labels: the training labels hold a single class (0)"),
            "{e}"
        );
        // A class count fixed by the format (CIFAR-10): gaps are fine, one class is not.
        assert!(check_classes(&[0, 1, 1], 10, false, p).is_ok());
        let e = check_classes(&[7, 7], 10, false, p).unwrap_err();
        assert!(e.to_string().contains("single class (7)"), "{e}");
        let mut labels: Vec<u32> = (0..20).map(|i| i % 10).collect();
        labels.push(255);
        labels.push(12);
        let e = check_classes(&labels, 256, true, p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("run from 0 to 255"), "{e}");
        assert!(
            e.contains("no training sample has label 10, 11, 13..=254"),
            "{e}"
        );
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[4]), "4");
        assert_eq!(ranges(&[1, 2, 3, 5, 7, 8]), "1..=3, 5, 7, 8");
    }

    #[test]
    fn gzip_is_detected_by_content() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(read_maybe_gz(&p).unwrap(), b"abc");

        // gzip detected by content, whatever the name.
        let g = dir.path().join("plain_name");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"hello gz").unwrap();
        let gz = enc.finish().unwrap();
        std::fs::write(&g, &gz).unwrap();
        assert_eq!(read_maybe_gz(&g).unwrap(), b"hello gz");

        // Truncated gzip -> Data error naming the file.
        std::fs::write(&g, &gz[..gz.len() - 6]).unwrap();
        let e = read_maybe_gz(&g).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }), "{e}");
        assert!(e.to_string().contains("plain_name"));
    }
}
