//! CIFAR-10, binary version (`cifar-10-batches-bin`).
//!
//! Each batch file is a sequence of 3,073-byte records: one label byte (0..=9), then
//! 32×32 pixels of red, then green, then blue (channel-major, row-major inside a
//! channel). Five training batches, one test batch. Batches may be gzip-compressed
//! (detected by content).

use std::path::{Path, PathBuf};

use super::{Dataset, Targets, Values, read_maybe_gz};
use crate::error::{AntError, Result};

pub const CIFAR_CLASSES: usize = 10;
pub const CIFAR_SHAPE: [usize; 3] = [3, 32, 32];
const PIXELS: usize = 3 * 32 * 32;
/// Bytes per record: the label then the pixels.
pub const RECORD: usize = 1 + PIXELS;

pub const TRAIN_FILES: [&str; 5] = [
    "data_batch_1.bin",
    "data_batch_2.bin",
    "data_batch_3.bin",
    "data_batch_4.bin",
    "data_batch_5.bin",
];
pub const TEST_FILE: &str = "test_batch.bin";
/// The folder the official archive unpacks into.
const ARCHIVE_DIR: &str = "cifar-10-batches-bin";

/// The directory holding the batches: `dir` itself, or the official archive's folder
/// inside it. `None` when neither holds any CIFAR batch file.
pub fn batches_dir(dir: &Path) -> Option<PathBuf> {
    let has_batch = |d: &Path| {
        TRAIN_FILES
            .iter()
            .chain([&TEST_FILE])
            .any(|f| d.join(f).is_file())
    };
    [dir.to_path_buf(), dir.join(ARCHIVE_DIR)]
        .into_iter()
        .find(|d| has_batch(d))
}

/// Whether `bytes` are a CIFAR-10 binary batch: a whole number (at least one) of
/// records, each starting with a label 0..=9 — exactly what [`parse_batch`] accepts.
pub fn is_batch(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.len().is_multiple_of(RECORD)
        && bytes
            .chunks_exact(RECORD)
            .all(|r| usize::from(r[0]) < CIFAR_CLASSES)
}

/// Parses one batch already in memory into pixels (`/255`, as f32) and labels;
/// `path` only names the file in errors.
pub fn parse_batch(bytes: &[u8], path: &Path) -> Result<(Vec<u8>, Vec<u32>)> {
    if bytes.is_empty() {
        return Err(AntError::data(path, "CIFAR batch is empty"));
    }
    if !bytes.len().is_multiple_of(RECORD) {
        return Err(AntError::data(
            path,
            format!(
                "CIFAR batch of {} bytes is not a whole number of {RECORD}-byte records \
                 (truncated or not a CIFAR-10 binary batch; {} bytes left over)",
                bytes.len(),
                bytes.len() % RECORD
            ),
        ));
    }
    let n = bytes.len() / RECORD;
    let mut x = Vec::with_capacity(n * PIXELS);
    let mut labels = Vec::with_capacity(n);
    for (i, rec) in bytes.chunks_exact(RECORD).enumerate() {
        let label = rec[0];
        if label as usize >= CIFAR_CLASSES {
            return Err(AntError::data(
                path,
                format!(
                    "record {i} (byte offset {}): label {label} out of range 0..=9",
                    i * RECORD
                ),
            ));
        }
        labels.push(u32::from(label));
        x.extend_from_slice(&rec[1..]);
    }
    Ok((x, labels))
}

/// Reads one batch file (raw or gzipped) as a data set of `[3,32,32]` images.
/// The test batch of a CIFAR-10 directory alone, for scoring a model (as
/// `idx::load_idx_test`: the training batches may be absent).
pub fn load_cifar_test(dir: &Path) -> Result<Dataset> {
    let root = batches_dir(dir).unwrap_or_else(|| dir.to_path_buf());
    let path = root.join(TEST_FILE);
    if !path.is_file() {
        let msg = format!("CIFAR-10 directory lacks {TEST_FILE}, the test batch");
        return Err(AntError::data(&root, msg));
    }
    read_batch(&path)
}

pub fn read_batch(path: &Path) -> Result<Dataset> {
    let (x, labels) = parse_batch(&read_maybe_gz(path)?, path)?;
    Ok(Dataset {
        x: Values::Bytes(x),
        sample_shape: CIFAR_SHAPE.to_vec(),
        targets: Targets::Classes {
            labels,
            n_classes: CIFAR_CLASSES,
        },
        class_names: None,
        own_validation: None,
    })
}

/// Loads a CIFAR-10 binary directory, returning `(train, test)`: the five training
/// batches in order, then the test batch. Every missing batch is named.
pub fn load_cifar_dir(dir: &Path) -> Result<(Dataset, Dataset)> {
    let root = batches_dir(dir).unwrap_or_else(|| dir.to_path_buf());
    let missing: Vec<&str> = TRAIN_FILES
        .iter()
        .chain([&TEST_FILE])
        .filter(|f| !root.join(f).is_file())
        .copied()
        .collect();
    if !missing.is_empty() {
        return Err(AntError::data(
            &root,
            format!(
                "CIFAR-10 directory lacks {} (expected data_batch_1..5.bin and test_batch.bin)",
                missing.join(", ")
            ),
        ));
    }
    let (mut x, mut labels) = (vec![], vec![]);
    for f in TRAIN_FILES {
        let p = root.join(f);
        let (bx, bl) = parse_batch(&read_maybe_gz(&p)?, &p)?;
        x.extend(bx);
        labels.extend(bl);
    }
    // The format fixes the classes (a batch may use some of them), but one alone
    // cannot be learnt.
    super::check_classes(&labels, CIFAR_CLASSES, false, &root)?;
    let train = Dataset {
        x: Values::Bytes(x),
        sample_shape: CIFAR_SHAPE.to_vec(),
        targets: Targets::Classes {
            labels,
            n_classes: CIFAR_CLASSES,
        },
        class_names: None,
        own_validation: None,
    };
    let test_path = root.join(TEST_FILE);
    let test = read_batch(&test_path)?;
    if let (Targets::Classes { labels: a, .. }, Targets::Classes { labels: b, .. }) = (&train.targets, &test.targets) {
        super::check_test_classes(a, b, &test_path)?;
    }
    Ok((train, test))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `n` records; record i has label `i % 10` and pixel p = `(i + p) % 256`.
    pub fn batch(n: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(n * RECORD);
        for i in 0..n {
            b.push((i % 10) as u8);
            b.extend((0..PIXELS).map(|p| ((i + p) % 256) as u8));
        }
        b
    }

    fn write_dir(dir: &Path, counts: [usize; 6]) {
        for (f, n) in TRAIN_FILES.iter().chain([&TEST_FILE]).zip(counts) {
            std::fs::write(dir.join(f), batch(n)).unwrap();
        }
    }

    #[test]
    fn loads_a_directory_in_the_official_layout() {
        let d = tempfile::tempdir().unwrap();
        write_dir(d.path(), [3, 2, 2, 2, 1, 3]);
        let (tr, te) = load_cifar_dir(d.path()).unwrap();
        assert_eq!((tr.len(), te.len()), (10, 3));
        assert_eq!(tr.sample_shape, vec![3, 32, 32]);
        assert_eq!(tr.n_classes(), Some(10));
        // record 1 of batch 1: label 1, first red pixel 1/255, first green (1+1024)%256.
        let s = tr.sample(1);
        assert_eq!(s[0], 1.0 / 255.0);
        assert_eq!(s[1024], ((1 + 1024) % 256) as f32 / 255.0);
        // Batches are concatenated in order: sample 3 is record 0 of batch 2.
        let Targets::Classes { labels, .. } = &tr.targets else {
            panic!()
        };
        assert_eq!(&labels[..5], &[0, 1, 2, 0, 1]);
        // The archive's own folder inside the directory is found too.
        let outer = tempfile::tempdir().unwrap();
        let inner = outer.path().join(ARCHIVE_DIR);
        std::fs::create_dir(&inner).unwrap();
        write_dir(&inner, [2, 1, 1, 1, 1, 2]);
        assert_eq!(batches_dir(outer.path()), Some(inner.clone()));
        assert_eq!(load_cifar_dir(outer.path()).unwrap().1.len(), 2);
        // Training batches of one class (label 0 each) are refused.
        write_dir(&inner, [1, 1, 1, 1, 1, 2]);
        let e = load_cifar_dir(outer.path()).unwrap_err().to_string();
        assert!(
            e.contains(ARCHIVE_DIR) && e.contains("single class (0)"),
            "{e}"
        );
        // A test label no training sample has (it would be scored without a word) is
        // refused, naming the test batch.
        write_dir(&inner, [2, 1, 1, 1, 1, 3]);
        let e = load_cifar_dir(outer.path()).unwrap_err().to_string();
        assert!(
            e.contains(TEST_FILE) && e.contains("label 2 is not a class of the training set (0, 1)"),
            "{e}"
        );
        assert_eq!(batches_dir(Path::new("/nonexistent")), None);
    }

    #[test]
    fn malformed_batches_name_the_file() {
        let d = tempfile::tempdir().unwrap();
        write_dir(d.path(), [1, 1, 1, 1, 1, 1]);
        std::fs::remove_file(d.path().join("data_batch_3.bin")).unwrap();
        std::fs::remove_file(d.path().join(TEST_FILE)).unwrap();
        let e = load_cifar_dir(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("data_batch_3.bin, test_batch.bin"),
            "missing files named: {e}"
        );
        let p = d.path().join("b.bin");
        let mut b = batch(2);
        b.pop();
        std::fs::write(&p, &b).unwrap();
        let e = read_batch(&p).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }));
        assert!(e.to_string().contains("b.bin") && e.to_string().contains("3073"));
        let mut b = batch(2);
        b[RECORD] = 10;
        std::fs::write(&p, &b).unwrap();
        let e = read_batch(&p).unwrap_err().to_string();
        assert!(e.contains("record 1") && e.contains("label 10"), "{e}");
        std::fs::write(&p, b"").unwrap();
        assert!(read_batch(&p).unwrap_err().to_string().contains("empty"));
    }
}
