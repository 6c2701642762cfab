//! IDX files (the MNIST / Fashion-MNIST format).
//!
//! Layout: a 4-byte magic `00 00 TT DD` (TT = element type, DD = number of
//! dimensions), then DD big-endian u32 sizes, then the elements. Only unsigned
//! bytes (type 0x08) are read; files may be gzip-compressed (detected by content).

use std::path::{Path, PathBuf};

use super::{Dataset, Targets, Values, read_maybe_gz};
use crate::error::{AntError, Result};

/// Element type code for unsigned bytes, the only one this reader returns.
const TYPE_U8: u8 = 0x08;

/// An IDX array: its dimensions and its elements (row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct IdxArray {
    pub dims: Vec<usize>,
    pub data: Vec<u8>,
}

/// Bytes per element of an IDX element type code; `None` for an unknown code.
fn element_size(type_code: u8) -> Option<usize> {
    match type_code {
        TYPE_U8 | 0x09 => Some(1),
        0x0B => Some(2),
        0x0C | 0x0D => Some(4),
        0x0E => Some(8),
        _ => None,
    }
}

/// Whether `bytes` are an IDX array of any element type: the magic `00 00 TT DD`
/// with a known type and 1 to 4 dimensions, and exactly the data bytes its
/// dimensions declare. A magic alone is two zero bytes, which other binary data
/// (a CIFAR-10 batch whose first label and pixel are 0) starts with too.
pub fn is_idx(bytes: &[u8]) -> bool {
    let [0, 0, type_code, ndims, ..] = *bytes else {
        return false;
    };
    let (Some(size), 1..=4) = (element_size(type_code), ndims) else {
        return false;
    };
    let header_len = 4 + 4 * ndims as usize;
    let Some(dims) = bytes.get(4..header_len) else {
        return false;
    };
    dims.chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .try_fold(size, usize::checked_mul)
        == Some(bytes.len() - header_len)
}

/// Reads and validates an IDX file of unsigned bytes, raw or gzipped.
pub fn read_idx(path: &Path) -> Result<IdxArray> {
    parse_idx(read_maybe_gz(path)?, path)
}

/// Parses IDX bytes already in memory; `path` only names the file in errors.
pub fn parse_idx(mut bytes: Vec<u8>, path: &Path) -> Result<IdxArray> {
    let err = |msg: String| AntError::data(path, msg);
    if bytes.len() < 4 {
        return Err(err(format!(
            "IDX file too short for its magic number ({} bytes)",
            bytes.len()
        )));
    }
    if bytes[0] != 0 || bytes[1] != 0 {
        return Err(err(format!(
            "bad IDX magic {:02x} {:02x} {:02x} {:02x}: first two bytes must be zero",
            bytes[0], bytes[1], bytes[2], bytes[3]
        )));
    }
    let type_code = bytes[2];
    match type_code {
        TYPE_U8 => {}
        _ if element_size(type_code).is_some() => {
            return Err(err(format!(
                "IDX element type 0x{type_code:02x} is not supported (only unsigned byte, 0x08)"
            )));
        }
        _ => return Err(err(format!("unknown IDX element type 0x{type_code:02x}"))),
    }
    let ndims = bytes[3] as usize;
    if !(1..=4).contains(&ndims) {
        return Err(err(format!(
            "IDX declares {ndims} dimensions; expected 1 to 4"
        )));
    }
    let header_len = 4 + 4 * ndims;
    if bytes.len() < header_len {
        return Err(err(format!(
            "IDX header truncated: {ndims} dimensions need {header_len} bytes, file has {}",
            bytes.len()
        )));
    }
    let dims: Vec<usize> = bytes[4..header_len]
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    // The declared size is only compared with what is there; nothing is allocated
    // from it, so a huge (or overflowing) product cannot exhaust memory.
    let payload = bytes.len() - header_len;
    let declared = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    match declared {
        Some(n) if n == payload => {}
        Some(n) if n > payload => {
            return Err(err(format!(
                "IDX data truncated: dimensions {dims:?} need {n} bytes, file has {payload}"
            )));
        }
        Some(n) => {
            return Err(err(format!(
                "IDX has {} trailing bytes after the {n} bytes of dimensions {dims:?}",
                payload - n
            )));
        }
        None => {
            return Err(err(format!(
                "IDX dimensions {dims:?} overflow; file has {payload} data bytes"
            )));
        }
    }
    bytes.drain(..header_len);
    Ok(IdxArray { dims, data: bytes })
}

/// Finds `name` in `dir`, raw or with `.gz` appended, also accepting the
/// `train-images.idx3-ubyte` spelling some mirrors use. Two of them that hold other
/// content (an unpacked copy edited since, a relabelled file beside the original) are
/// an error naming both, rather than the first read silently. Copies of the same
/// content (`gunzip -k`) are one file.
fn find_idx_file(dir: &Path, name: &str) -> Result<PathBuf> {
    let dotted = name.replacen("-idx", ".idx", 1);
    let candidates = [
        name.to_string(),
        format!("{name}.gz"),
        dotted.clone(),
        format!("{dotted}.gz"),
    ];
    let present: Vec<PathBuf> = candidates
        .iter()
        .map(|c| dir.join(c))
        .filter(|p| p.is_file())
        .collect();
    let Some(first) = present.first() else {
        let msg = format!("expected file {name} (or {name}.gz) not found");
        return Err(AntError::data(dir, msg));
    };
    if present.len() > 1 {
        let both = |other: &Path, how: String| {
            let msg = format!(
                "{} and {} both hold {name}, {how}: remove the one that is not the data",
                present[0].display(),
                other.display()
            );
            AntError::data(dir, msg)
        };
        let read = |p: &PathBuf| read_maybe_gz(p).map_err(|e| both(p, format!("and {} cannot be read ({e})", p.display())));
        let content = read(first)?;
        for other in &present[1..] {
            if read(other)? != content {
                return Err(both(other, "with other content".to_string()));
            }
        }
    }
    Ok(first.clone())
}

/// One split: images and their labels, checked against each other.
struct Split {
    images: IdxArray,
    labels: Vec<u32>,
    images_path: PathBuf,
    labels_path: PathBuf,
}

fn read_split(dir: &Path, prefix: &str) -> Result<Split> {
    let images_path = find_idx_file(dir, &format!("{prefix}-images-idx3-ubyte"))?;
    let labels_path = find_idx_file(dir, &format!("{prefix}-labels-idx1-ubyte"))?;
    let images = read_idx(&images_path)?;
    let labels = read_idx(&labels_path)?;
    if images.dims.len() != 3 {
        return Err(AntError::data(
            &images_path,
            format!(
                "images must be an idx3 array (count, rows, cols), got dimensions {:?}",
                images.dims
            ),
        ));
    }
    if labels.dims.len() != 1 {
        return Err(AntError::data(
            &labels_path,
            format!(
                "labels must be an idx1 array, got dimensions {:?}",
                labels.dims
            ),
        ));
    }
    if images.dims[0] == 0 {
        return Err(AntError::data(&images_path, "contains no images"));
    }
    if images.dims[1] == 0 || images.dims[2] == 0 {
        let msg = format!(
            "its images are {}x{} pixels: an image needs at least one pixel",
            images.dims[1], images.dims[2]
        );
        return Err(AntError::data(&images_path, msg));
    }
    if images.dims[0] != labels.dims[0] {
        return Err(AntError::data(
            &images_path,
            format!(
                "{} images but {} has {} labels",
                images.dims[0],
                labels_path.display(),
                labels.dims[0]
            ),
        ));
    }
    Ok(Split {
        labels: labels.data.iter().map(|&l| u32::from(l)).collect(),
        images,
        images_path,
        labels_path,
    })
}

/// Loads an MNIST-style directory, returning `(train, test)`.
///
/// Pixels become `f32` in `[0, 1]` (divided by 255) with sample shape `[1, H, W]`;
/// `n_classes` is the largest training label plus one, and every class must have
/// training samples (at least two classes; see [`super::check_classes`]); a test
/// label that is not a training class is an error.
pub fn load_idx_dir(dir: &Path) -> Result<(Dataset, Dataset)> {
    let train = read_split(dir, "train")?;
    let test = read_split(dir, "t10k")?;
    if train.images.dims[1..] != test.images.dims[1..] {
        return Err(AntError::data(
            &test.images_path,
            format!(
                "image size {:?} differs from the training images' {:?}",
                &test.images.dims[1..],
                &train.images.dims[1..]
            ),
        ));
    }
    let n_classes = train.labels.iter().max().map_or(0, |&m| m as usize + 1);
    super::check_classes(&train.labels, n_classes, true, &train.labels_path)?;
    super::check_test_classes(&train.labels, &test.labels, &test.labels_path)?;
    Ok((to_dataset(train, n_classes), to_dataset(test, n_classes)))
}

/// The test files (`t10k-*`) of an IDX directory alone, for scoring a model: the
/// training files may be absent, and their classes say nothing of a test (`eval` does
/// not ask for them; the model checks the labels it is given).
pub fn load_idx_test(dir: &Path) -> Result<Dataset> {
    let test = read_split(dir, "t10k")?;
    let n_classes = test.labels.iter().max().map_or(0, |&m| m as usize + 1);
    Ok(to_dataset(test, n_classes))
}

fn to_dataset(s: Split, n_classes: usize) -> Dataset {
    Dataset {
        x: Values::Bytes(s.images.data),
        sample_shape: vec![1, s.images.dims[1], s.images.dims[2]],
        targets: Targets::Classes {
            labels: s.labels,
            n_classes,
        },
        class_names: None,
        own_validation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Encodes an unsigned-byte IDX file.
    fn idx_bytes(dims: &[u32], data: &[u8]) -> Vec<u8> {
        let mut b = vec![0, 0, TYPE_U8, dims.len() as u8];
        for d in dims {
            b.extend_from_slice(&d.to_be_bytes());
        }
        b.extend_from_slice(data);
        b
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    /// Writes `bytes` as `name` in `dir`, reads it back, expecting a Data error that
    /// names the file and contains `needle`.
    fn expect_data_err(dir: &Path, name: &str, bytes: &[u8], needle: &str) {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let e = read_idx(&p).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }), "{name}: {e:?}");
        let msg = e.to_string();
        assert!(msg.contains(&p.display().to_string()), "{msg}");
        assert!(msg.contains(needle), "{name}: {msg}");
    }

    #[test]
    fn round_trip_raw_and_gz() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..2 * 3 * 4).map(|i| (i * 7) as u8).collect();
        let bytes = idx_bytes(&[2, 3, 4], &data);
        let raw = dir.path().join("a");
        let gz = dir.path().join("b"); // no .gz extension: detected by magic
        std::fs::write(&raw, &bytes).unwrap();
        std::fs::write(&gz, gzip(&bytes)).unwrap();
        for p in [&raw, &gz] {
            let a = read_idx(p).unwrap();
            assert_eq!(a.dims, vec![2, 3, 4]);
            assert_eq!(a.data, data);
        }
        // 1-d and 4-d, and an empty array.
        std::fs::write(&raw, idx_bytes(&[3], &[1, 2, 3])).unwrap();
        assert_eq!(read_idx(&raw).unwrap().dims, vec![3]);
        std::fs::write(&raw, idx_bytes(&[1, 1, 2, 1], &[1, 2])).unwrap();
        assert_eq!(read_idx(&raw).unwrap().data, vec![1, 2]);
        std::fs::write(&raw, idx_bytes(&[0, 28], &[])).unwrap();
        assert!(read_idx(&raw).unwrap().data.is_empty());
    }

    #[test]
    fn malformed_files_are_data_errors() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let good = idx_bytes(&[2, 2], &[1, 2, 3, 4]);
        expect_data_err(d, "truncated", &good[..good.len() - 1], "truncated");
        let mut trailing = good.clone();
        trailing.push(0);
        expect_data_err(d, "trailing", &trailing, "1 trailing bytes");
        let mut magic = good.clone();
        magic[0] = 1;
        expect_data_err(d, "magic", &magic, "magic");
        let mut ty = good.clone();
        ty[2] = 0x42;
        expect_data_err(d, "type", &ty, "unknown IDX element type 0x42");
        let mut float = good.clone();
        float[2] = 0x0D;
        expect_data_err(d, "float", &float, "not supported");
        let mut nd = good.clone();
        nd[3] = 0;
        expect_data_err(d, "zero_dims", &nd, "0 dimensions");
        nd[3] = 5;
        expect_data_err(d, "five_dims", &nd, "5 dimensions");
        expect_data_err(d, "short", &[0, 0], "too short");
        expect_data_err(
            d,
            "short_header",
            &[0, 0, 8, 3, 0, 0, 0, 1],
            "header truncated",
        );
        // Huge declared dims: must fail by comparison, not by allocating.
        let huge = idx_bytes(&[u32::MAX, u32::MAX, u32::MAX, u32::MAX], &[0; 16]);
        expect_data_err(d, "huge", &huge, "overflow");
        let big = idx_bytes(&[60000, 28, 28], &[0; 10]);
        expect_data_err(d, "big", &big, "truncated");
        // Truncated gzip stream too.
        let gz = gzip(&good);
        expect_data_err(d, "trunc_gz", &gz[..gz.len() / 2], "gzip");
    }

    /// Writes a small MNIST-like directory: `n_train` / `n_test` 2x3 images.
    fn write_mnist_dir(dir: &Path, n_train: u32, n_test: u32, gz: bool) {
        let write = |name: &str, bytes: Vec<u8>| {
            let (name, bytes) = if gz {
                (format!("{name}.gz"), gzip(&bytes))
            } else {
                (name.to_string(), bytes)
            };
            std::fs::write(dir.join(name), bytes).unwrap();
        };
        for (prefix, n) in [("train", n_train), ("t10k", n_test)] {
            let px: Vec<u8> = (0..n * 6).map(|i| (i % 256) as u8).collect();
            write(
                &format!("{prefix}-images-idx3-ubyte"),
                idx_bytes(&[n, 2, 3], &px),
            );
            let labels: Vec<u8> = (0..n).map(|i| (i % 4) as u8).collect();
            write(
                &format!("{prefix}-labels-idx1-ubyte"),
                idx_bytes(&[n], &labels),
            );
        }
    }

    #[test]
    fn load_dir_raw_and_gz() {
        for gz in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            write_mnist_dir(dir.path(), 5, 3, gz);
            let (train, test) = load_idx_dir(dir.path()).unwrap();
            assert_eq!(train.len(), 5);
            assert_eq!(test.len(), 3);
            assert_eq!(train.sample_shape, vec![1, 2, 3]);
            assert_eq!(train.x().len(), 30);
            assert_eq!(train.x()[1], 1.0 / 255.0);
            assert_eq!(train.n_classes(), Some(4));
            assert_eq!(test.n_classes(), Some(4));
            assert_eq!(
                test.targets,
                Targets::Classes {
                    labels: vec![0, 1, 2],
                    n_classes: 4
                }
            );
        }
    }

    #[test]
    fn load_dir_dot_variant_and_class_checks() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let write = |name: &str, dims: &[u32], data: &[u8]| {
            std::fs::write(d.join(name), idx_bytes(dims, data)).unwrap();
        };
        write("train-images.idx3-ubyte", &[2, 1, 1], &[255, 0]);
        write("train-labels.idx1-ubyte", &[2], &[0, 1]);
        write("t10k-images-idx3-ubyte", &[1, 1, 1], &[0]);
        write("t10k-labels-idx1-ubyte", &[1], &[1]);
        let (train, _) = load_idx_dir(d).unwrap();
        assert_eq!(train.x(), vec![1.0, 0.0]);
        assert_eq!(train.n_classes(), Some(2));
        // A test label the training set does not have.
        write("t10k-labels-idx1-ubyte", &[1], &[2]);
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(msg.contains("t10k-labels-idx1-ubyte"), "{msg}");
        assert!(
            msg.contains("sample 0: label 2 is not a class of the training set (0, 1)"),
            "{msg}"
        );
        write("t10k-labels-idx1-ubyte", &[1], &[0]);
        // One class only (it used to become a 2-class model).
        write("train-labels.idx1-ubyte", &[2], &[0, 0]);
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(msg.contains("train-labels.idx1-ubyte"), "{msg}");
        assert!(msg.contains("single class (0)"), "{msg}");
        // A corrupt label (it used to make a 256-class model).
        write("train-labels.idx1-ubyte", &[2], &[1, 255]);
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(
            msg.contains("no training sample has label 0, 2..=254"),
            "{msg}"
        );
        // Images without pixels (0x0, 1x0) used to panic in training's normalisation.
        write("train-labels.idx1-ubyte", &[2], &[0, 1]);
        for dims in [[2, 0, 0], [2, 1, 0]] {
            write("train-images.idx3-ubyte", &dims, &[]);
            let msg = load_idx_dir(d).unwrap_err().to_string();
            assert!(msg.contains("train-images.idx3-ubyte"), "{msg}");
            assert!(msg.contains("an image needs at least one pixel"), "{msg}");
        }
        // Two spellings of one file: one content is one file; other content is refused,
        // naming both.
        write("train-images.idx3-ubyte", &[2, 1, 1], &[255, 0]);
        write("train-images-idx3-ubyte", &[2, 1, 1], &[255, 0]);
        assert!(load_idx_dir(d).is_ok());
        write("train-images-idx3-ubyte", &[2, 1, 1], &[255, 7]);
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(
            msg.contains("train-images-idx3-ubyte and ") && msg.contains("with other content"),
            "{msg}"
        );
        // One of them cannot be read (a cut download): said with both names.
        std::fs::write(d.join("train-images-idx3-ubyte.gz"), [0x1f, 0x8b, 8, 0]).unwrap();
        std::fs::remove_file(d.join("train-images.idx3-ubyte")).unwrap();
        write("train-images-idx3-ubyte", &[2, 1, 1], &[255, 0]);
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(
            msg.contains("both hold train-images-idx3-ubyte, and ")
                && msg.contains(".gz cannot be read"),
            "{msg}"
        );
    }

    #[test]
    fn load_dir_errors() {
        // Missing file names the directory and the expected name.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(msg.contains(&d.display().to_string()), "{msg}");
        assert!(msg.contains("train-images-idx3-ubyte"), "{msg}");

        // Count mismatch names both files.
        write_mnist_dir(d, 4, 2, false);
        std::fs::write(
            d.join("train-labels-idx1-ubyte"),
            idx_bytes(&[3], &[0, 1, 2]),
        )
        .unwrap();
        let e = load_idx_dir(d).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }));
        let msg = e.to_string();
        assert!(msg.contains("train-images-idx3-ubyte"), "{msg}");
        assert!(msg.contains("train-labels-idx1-ubyte"), "{msg}");
        assert!(
            msg.contains("4 images") && msg.contains("3 labels"),
            "{msg}"
        );

        // Labels must be idx1; images idx3.
        std::fs::write(
            d.join("train-labels-idx1-ubyte"),
            idx_bytes(&[2, 2], &[0, 1, 2, 3]),
        )
        .unwrap();
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(msg.contains("idx1"), "{msg}");
        std::fs::write(d.join("train-images-idx3-ubyte"), idx_bytes(&[4], &[0; 4])).unwrap();
        let msg = load_idx_dir(d).unwrap_err().to_string();
        assert!(msg.contains("idx3"), "{msg}");

        // No images.
        let dir = tempfile::tempdir().unwrap();
        write_mnist_dir(dir.path(), 0, 2, false);
        let msg = load_idx_dir(dir.path()).unwrap_err().to_string();
        assert!(msg.contains("no images"), "{msg}");
    }

    /// The real MNIST shipped in `data/mnist`.
    #[test]
    fn real_mnist() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
        let (train, test) = load_idx_dir(&dir).unwrap();
        assert_eq!(train.len(), 60000);
        assert_eq!(test.len(), 10000);
        assert_eq!(train.sample_shape, vec![1, 28, 28]);
        assert_eq!(train.n_classes(), Some(10));
        let Targets::Classes { labels, .. } = &train.targets else {
            panic!("MNIST targets are classes")
        };
        assert_eq!(labels[0], 5);
        let mean = train.x().iter().map(|&v| f64::from(v)).sum::<f64>() / train.x().len() as f64;
        assert!((mean - 0.1307).abs() < 1e-3, "pixel mean {mean}");
        assert!(train.x().iter().all(|v| (0.0..=1.0).contains(v)));
    }
}
