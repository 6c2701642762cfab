//! What a data path holds, judged by its content (never by its name): the one
//! detector that every command (`train`, `eval`, `predict`, `prune`, `plot`) uses.
//!
//! A directory holds CIFAR-10 batches, folders of images (one per class, with no IDX
//! file beside them), or else MNIST-style IDX files. A file (gzip is undone first) is,
//! in this order: a MAT-file (its header text), an IDX array (its zero magic *and*
//! exactly the size its header declares), a CIFAR-10 batch (whole 3,073-byte records
//! with labels 0..=9), NumPy's `.npy` or `.npz`, an image (PNG, JPEG, BMP, GIF, TIFF
//! or WebP, by its magic and a header that parses), a Parquet table (`PAR1`), or else
//! delimited text.

use std::path::Path;

use super::{cifar, idx, image_folder, mat, numpy, parquet, read_data};
use crate::error::{AntError, Result};

/// What a directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirFormat {
    /// CIFAR-10 binary batches, in the directory or its `cifar-10-batches-bin`.
    Cifar,
    /// Folders of image files, one per class (`train/<class>/`, `test/<class>/`, or
    /// `<class>/` alone): a directory with a folder in it and no IDX file.
    ImageFolder,
    /// Anything else: read as MNIST-style IDX files (`train-images-idx3-ubyte`...).
    Idx,
}

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// A MATLAB level-5 MAT-file.
    Mat,
    /// One IDX array.
    Idx,
    /// One CIFAR-10 binary batch.
    CifarBatch,
    /// One image file (PNG, JPEG, BMP, GIF, TIFF or WebP).
    Image,
    /// NumPy's `.npy` (one array) or `.npz` (several).
    Numpy,
    /// A Parquet table.
    Parquet,
    /// Anything else: delimited text (CSV, TSV, blanks), checked when it is read.
    Text,
}

impl FileFormat {
    /// Judges a file by its (gunzipped) bytes.
    pub fn of(bytes: &[u8]) -> FileFormat {
        if mat::is_mat(bytes) {
            FileFormat::Mat
        } else if idx::is_idx(bytes) {
            FileFormat::Idx
        } else if cifar::is_batch(bytes) {
            FileFormat::CifarBatch
        } else if mat::looks_like_v4(bytes) {
            // A level-4 MAT-file cut short: named so by its reader, not read as text.
            FileFormat::Mat
        } else if numpy::is_npy(bytes) || numpy::is_npz(bytes) {
            FileFormat::Numpy
        } else if image_folder::is_image(bytes) {
            FileFormat::Image
        } else if parquet::is_parquet(bytes) {
            FileFormat::Parquet
        } else {
            FileFormat::Text
        }
    }
}

/// Why `path`, which leads to no file or folder, is missing: a loop of symbolic links, a
/// link to nowhere, or nothing there.
fn missing(path: &Path) -> String {
    let Ok(target) = std::fs::read_link(path) else {
        return "no such file or directory".to_string();
    };
    match std::fs::metadata(path) {
        Err(e) if e.raw_os_error() == Some(40) => format!(
            "is a loop of symbolic links (it points to {}, which leads back to it)",
            target.display()
        ),
        _ => format!("is a link to {}, which does not exist", target.display()),
    }
}

/// A data path and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Dir(DirFormat),
    /// A file's format, its bytes (gunzipped) and the MD5 of its raw bytes, all from
    /// one read.
    File(FileFormat, Vec<u8>, String),
}

/// Finds out what `path` holds. A missing path, an unreadable file and a corrupt gzip
/// stream are errors naming the path.
pub fn detect(path: &Path) -> Result<Input> {
    if !path.exists() {
        return Err(AntError::data(path, missing(path)));
    }
    if path.is_dir() {
        return Ok(Input::Dir(if cifar::batches_dir(path).is_some() {
            DirFormat::Cifar
        } else if image_folder::is_image_folder(path) {
            DirFormat::ImageFolder
        } else {
            DirFormat::Idx
        }));
    }
    let read = read_data(path)?;
    Ok(Input::File(
        FileFormat::of(&read.bytes),
        read.bytes,
        read.raw_md5,
    ))
}

/// What a data path holds, in words, and whether it is images: what a model of the
/// other kind is told it was given.
pub struct Holds {
    pub found: &'static str,
    pub images: bool,
}

/// What `path` holds, by [`detect`]; `None` when it cannot be read. A directory is read
/// as images (IDX or CIFAR-10), whatever it holds.
pub fn holds(path: &Path) -> Option<Holds> {
    let (found, images) = match detect(path).ok()? {
        Input::Dir(_) => ("is a directory (data directories hold images)", true),
        Input::File(FileFormat::Idx | FileFormat::CifarBatch | FileFormat::Image, ..) => {
            ("holds images", true)
        }
        Input::File(FileFormat::Text, ..) => ("holds a table (delimited text)", false),
        Input::File(FileFormat::Parquet, ..) => ("holds a table (Parquet)", false),
        Input::File(FileFormat::Mat, ..) => ("holds a MAT-file", false),
        // Rows or images, as its shape says: the reader judges it.
        Input::File(FileFormat::Numpy, ..) => return None,
    };
    Some(Holds { found, images })
}

/// Whether the regular file `path` starts as NumPy's files do (`.npy`, or a zip
/// archive such as `.npz`): its labels are inside it, no `--target` names them.
pub fn is_numpy_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 6];
    // A pipe is not opened here: it could be read only once.
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && crate::os::open_to_read(path).is_ok_and(|mut f| f.read_exact(&mut head).is_ok())
        && (numpy::is_npy(&head) || head.starts_with(b"PK\x03\x04"))
}

/// Whether the regular file `path` starts as a MAT-file does, by the first bytes the
/// detector judges (a pipe is not read here: it could be read only once).
pub fn is_a_mat_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(128);
    // Judged before it is opened: opening a named pipe waits for its writer.
    let file = std::fs::metadata(path)
        .is_ok_and(|m| m.is_file())
        .then(|| crate::os::open_to_read(path).ok())
        .flatten();
    file.is_some_and(|f| f.take(128).read_to_end(&mut head).is_ok())
        && (head.starts_with(b"MATLAB ") || mat::looks_like_v4(&head))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(dims: &[u32], data: &[u8]) -> Vec<u8> {
        let mut b = vec![0, 0, 0x08, dims.len() as u8];
        for d in dims {
            b.extend(d.to_be_bytes());
        }
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn formats_by_content() {
        assert_eq!(FileFormat::of(&idx(&[2, 3], &[7; 6])), FileFormat::Idx);
        // Another element type of the right size is IDX too (its reader refuses it).
        let mut floats = idx(&[2], &[0; 8]);
        floats[2] = 0x0D;
        assert_eq!(FileFormat::of(&floats), FileFormat::Idx);
        // A magic with the wrong size, or an unknown type, is not.
        assert_eq!(FileFormat::of(&idx(&[2, 3], &[7; 5])), FileFormat::Text);
        assert_eq!(FileFormat::of(&idx(&[2, 3], &[7; 7])), FileFormat::Text);
        let mut unknown = idx(&[2], &[0; 2]);
        unknown[2] = 0x07;
        assert_eq!(FileFormat::of(&unknown), FileFormat::Text);
        assert_eq!(FileFormat::of(&[0, 0]), FileFormat::Text);
        assert_eq!(
            FileFormat::of(&cifar::tests::batch(3)),
            FileFormat::CifarBatch
        );
        let mut bad_label = cifar::tests::batch(3);
        bad_label[cifar::RECORD] = 10;
        assert_eq!(FileFormat::of(&bad_label), FileFormat::Text);
        assert_eq!(FileFormat::of(&[]), FileFormat::Text);
        assert_eq!(FileFormat::of(b"a,b\n1,2\n"), FileFormat::Text);
        assert_eq!(
            FileFormat::of(b"MATLAB 5.0 MAT-file, anything"),
            FileFormat::Mat
        );
    }

    /// A CIFAR batch whose first record is label 0 then a black pixel starts with the
    /// IDX magic's two zero bytes; its size tells it apart.
    #[test]
    fn cifar_batch_starting_with_two_zero_bytes() {
        let mut b = cifar::tests::batch(2);
        assert_eq!(&b[..2], &[0, 0]);
        assert_eq!(FileFormat::of(&b), FileFormat::CifarBatch);
        // Even when the next bytes read as a plausible IDX type and dimension count.
        b[2] = 0x08;
        b[3] = 3;
        assert_eq!(FileFormat::of(&b), FileFormat::CifarBatch);
    }

    #[test]
    fn paths() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        assert_eq!(detect(d.path()).unwrap(), Input::Dir(DirFormat::Idx));
        std::fs::write(d.path().join("test_batch.bin"), cifar::tests::batch(1)).unwrap();
        assert_eq!(detect(d.path()).unwrap(), Input::Dir(DirFormat::Cifar));
        // A gzipped IDX file, whatever its name.
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let raw = idx(&[1, 2, 2], &[1, 2, 3, 4]);
        enc.write_all(&raw).unwrap();
        let p = d.path().join("x.csv");
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let md5 = crate::store::checksum::md5_hex(&std::fs::read(&p).unwrap());
        assert_eq!(detect(&p).unwrap(), Input::File(FileFormat::Idx, raw, md5));
        let e = detect(&d.path().join("missing")).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }));
        assert!(e.to_string().contains("missing: no such file"), "{e}");
    }
}
