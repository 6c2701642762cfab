//! From a `--data` path to training and test sets, the same way for `train` and `eval`.

use std::path::{Path, PathBuf};

use super::detect::{DirFormat, FileFormat, Input, detect};
use super::image_size::ImageSize;
use super::tabular::{TargetSpec, parse_labelled};
use super::{Dataset, Targets, Values, cifar, idx, image_folder, numpy, sarcos};
use crate::data::split::TestSplit;
use crate::error::{AntError, Result};
use crate::spec::Shape;
use crate::task::Task;

/// Training and test sets chosen from a data path.
pub struct Source {
    pub train: Dataset,
    pub test: Dataset,
    pub split: TestSplit,
    /// Class names of a table's text or numeric labels (in class order).
    pub class_names: Option<Vec<String>>,
    /// The target spec with the column's index and the column count filled in.
    pub target: Option<TargetSpec>,
}

/// A source whose training samples a run took to keep apart ([`Source::into_parts`]):
/// its test samples and what provenance records of it.
pub struct TestSide {
    pub test: Dataset,
    pub split: TestSplit,
    pub class_names: Option<Vec<String>>,
    pub target: Option<TargetSpec>,
}

impl Source {
    /// The training samples, and the rest: moved, not copied (a data set can be most of
    /// a run's memory).
    pub fn into_parts(self) -> (Dataset, TestSide) {
        let Source {
            train,
            test,
            split,
            class_names,
            target,
        } = self;
        (
            train,
            TestSide {
                test,
                split,
                class_names,
                target,
            },
        )
    }
}

/// The samples of one file or directory.
struct Loaded {
    all: Dataset,
    /// A directory's own test set (IDX, CIFAR-10).
    own_test: Option<Dataset>,
    class_names: Option<Vec<String>>,
    target: Option<TargetSpec>,
    /// A file's MD5, from the one read that loaded it (`None` for a directory).
    md5: Option<String>,
}

/// A file's MD5 as loaded: a directory has its own test set, so none is asked of it.
fn md5_of(md5: Option<String>, path: &Path) -> Result<String> {
    md5.ok_or_else(|| AntError::data(path, "is a directory without its own test files"))
}

impl Loaded {
    /// Samples with no class names or table layout.
    fn plain(all: Dataset, own_test: Option<Dataset>, md5: Option<String>) -> Loaded {
        Loaded {
            all,
            own_test,
            class_names: None,
            target: None,
            md5,
        }
    }

    /// A directory's own test samples alone (`all` is empty: no copy of them).
    fn test_only(test: Dataset) -> Loaded {
        Loaded::plain(test.subset(&[]), Some(test), None)
    }
}

/// Load one file or directory, as [`detect`] finds it: a directory ([`load_dir`]) or a
/// file ([`load_file`]). `classes` fixes the label mapping of a table (a trained
/// model's). `training`: the rows are trained on (a SARCOS file's columns are then
/// judged whole, as a table's are; a directory gives its training files too).
fn load_any(
    path: &Path,
    target: Option<&TargetSpec>,
    classes: Option<&[String]>,
    training: bool,
    size: Option<ImageSize>,
) -> Result<Loaded> {
    match detect(path)? {
        Input::Dir(_) if target.is_some() => Err(AntError::data(
            path,
            "is a directory, but a table file is needed (--target)",
        )),
        Input::Dir(format) => load_dir(path, format, classes, (training, size)),
        Input::File(format, bytes, md5) => {
            load_file(path, (format, &bytes, md5), target, classes, training)
        }
    }
}

/// A CIFAR-10, IDX or image-folder directory: its training and test sets, or, read for
/// its test rows (`!training`), its test files alone, not its training ones
/// (`--test-data DIR` must not score a CIFAR directory's training batches).
fn load_dir(
    path: &Path,
    format: DirFormat,
    classes: Option<&[String]>,
    (training, size): (bool, Option<ImageSize>),
) -> Result<Loaded> {
    match (format, training) {
        (DirFormat::Cifar, false) => Ok(Loaded::test_only(cifar::load_cifar_test(path)?)),
        (DirFormat::Cifar, true) => {
            let (tr, te) = cifar::load_cifar_dir(path)?;
            Ok(Loaded::plain(tr, Some(te), None))
        }
        (DirFormat::Idx, false) => Ok(Loaded::test_only(idx::load_idx_test(path)?)),
        (DirFormat::Idx, true) => {
            let (tr, te) = idx::load_idx_dir(path)?;
            Ok(Loaded::plain(tr, Some(te), None))
        }
        // Its `test/` images alone, or all of them (with their checksum: a model's
        // held-out fraction is found in them).
        (DirFormat::ImageFolder, false) => {
            let (te, md5) = image_folder::load_test(path, classes, size)?;
            let class_names = te.class_names.as_deref().map(<[String]>::to_vec);
            let loaded = match md5 {
                Some(_) => Loaded::plain(te, None, md5),
                None => Loaded::test_only(te),
            };
            Ok(Loaded {
                class_names,
                ..loaded
            })
        }
        (DirFormat::ImageFolder, true) => {
            let f = image_folder::load(path, size)?;
            Ok(Loaded {
                class_names: Some(f.class_names),
                ..Loaded::plain(f.train, f.test, Some(f.md5))
            })
        }
    }
}

/// One file, read once (`format`, its gunzipped bytes and the MD5 of its raw bytes):
/// with a target spec a table, else a SARCOS file (MAT or text) or NumPy's arrays.
fn load_file(
    path: &Path,
    (format, bytes, md5): (FileFormat, &[u8], String),
    target: Option<&TargetSpec>,
    classes: Option<&[String]>,
    training: bool,
) -> Result<Loaded> {
    match (format, target) {
        (FileFormat::Text | FileFormat::Parquet, Some(spec)) => {
            let t = parse_labelled(bytes, path, spec, classes)?;
            let mut spec = spec.clone();
            spec.index = Some(t.index);
            spec.n_columns = Some(t.n_columns);
            // Once a model's, the names stay those it was trained on.
            if spec.columns.is_none() {
                spec.columns = t.columns;
            }
            Ok(Loaded {
                class_names: t.class_names,
                target: Some(spec),
                ..Loaded::plain(t.data, None, Some(md5))
            })
        }
        (FileFormat::Text | FileFormat::Mat, None) => {
            let d = sarcos::parse_sarcos(bytes, path, training)?;
            d.check_finite(path)?;
            Ok(Loaded::plain(d, None, Some(md5)))
        }
        (FileFormat::Numpy, None) => {
            let d = numpy::load_labelled(bytes, path)?;
            d.train.check_finite(path)?;
            Ok(Loaded {
                class_names: d.class_names,
                ..Loaded::plain(d.train, d.test, Some(md5))
            })
        }
        (FileFormat::Parquet, None) => Err(AntError::data(
            path,
            "is a Parquet table: name the column to predict with --target",
        )),
        (FileFormat::Mat, Some(_)) => Err(AntError::data(
            path,
            "is a MAT-file, but a table file is needed (--target)",
        )),
        (FileFormat::Idx, _) => Err(AntError::data(
            path,
            "is a single IDX file; give the directory holding the train- and t10k- images and labels",
        )),
        (FileFormat::CifarBatch, _) => Err(AntError::data(
            path,
            "is a single CIFAR-10 batch; give the directory holding data_batch_1..5.bin and test_batch.bin",
        )),
        (FileFormat::Numpy, Some(_)) => Err(AntError::data(
            path,
            "holds NumPy arrays, whose labels are its y array: leave out --target",
        )),
        (FileFormat::Image, _) => Err(AntError::data(
            path,
            "is a single image; give a folder of class folders (DIR/<class>/..., or DIR/train/<class>/... and DIR/test/<class>/...)",
        )),
    }
}

/// The training rows of `path` alone, as [`load_source`] reads them when the test rows
/// come from another file (that file is then not read).
pub(crate) fn load_training_rows(
    path: &Path,
    target: Option<&TargetSpec>,
    size: Option<ImageSize>,
) -> Result<Dataset> {
    Ok(load_any(path, target, None, true, size)?.all)
}

/// Resolve the test set: the data's own test files, else `test_data`, else a seeded
/// `test_fraction` of the file (recorded by checksum so `eval` picks the same rows).
/// With `target`, files are tables with that target column.
pub fn load_source(
    path: &Path,
    test_data: Option<&Path>,
    test_fraction: f64,
    seed: u64,
    target: Option<&TargetSpec>,
    size: Option<ImageSize>,
) -> Result<Source> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        let reason = format!(
            "must be in (0, 1), got {}",
            crate::digits::number(test_fraction)
        );
        return Err(AntError::invalid("test_fraction", reason));
    }
    if size.is_some() && !matches!(detect(path)?, Input::Dir(DirFormat::ImageFolder)) {
        let msg = "is not a folder of image files, which is what --image-size resizes";
        return Err(AntError::data(path, msg));
    }
    let l = load_any(path, target, None, true, size)?;
    let (all, class_names, target, md5) = (l.all, l.class_names, l.target, l.md5);
    if let Some(tp) = test_data {
        // The test file must use the training file's columns and label mapping; no model
        // exists yet, so its first row is judged as the training file's was.
        let test_spec = target.clone().map(|mut s| {
            s.fresh = true;
            s
        });
        let t = load_any(tp, test_spec.as_ref(), class_names.as_deref(), false, size)?;
        // A directory's test files, a file's every row.
        let test = t.own_test.unwrap_or(t.all);
        // Found now, not after all of training.
        check_test_fits(&all, &test, tp)?;
        return Ok(Source {
            train: all,
            test,
            split: TestSplit::File {
                path: tp.display().to_string(),
            },
            class_names,
            target,
        });
    }
    if let Some(test) = l.own_test {
        return Ok(Source {
            train: all,
            test,
            split: TestSplit::Files,
            class_names,
            target,
        });
    }
    let (train, test, _) = all.seeded_split(test_fraction, seed);
    if test.is_empty() {
        let reason = format!(
            "{} holds out none of the {} samples of {}: give a larger fraction",
            crate::digits::number(test_fraction),
            all.len(),
            path.display()
        );
        return Err(AntError::invalid("test_fraction", reason));
    }
    let file_md5 = md5_of(md5, path)?;
    Ok(Source {
        train,
        test,
        split: TestSplit::Fraction {
            fraction: test_fraction,
            seed,
            file_md5,
        },
        class_names,
        target,
    })
}

/// Refuses a test set (read from `path`) that a model of the training set `train`
/// could not be scored on: samples of another shape, or targets of another kind
/// (classes for regression, another number of values, a label that is no class).
fn check_test_fits(train: &Dataset, test: &Dataset, path: &Path) -> Result<()> {
    if test.sample_shape != train.sample_shape {
        return Err(AntError::data(
            path,
            format!(
                "samples of shape {:?}, but the training data's are {:?}",
                test.sample_shape, train.sample_shape
            ),
        ));
    }
    let task = match train.targets {
        Targets::Classes { n_classes, .. } => Task::Classification { classes: n_classes },
        Targets::Values { dim, .. } => Task::Regression { dim },
    };
    match Shape::from_dims(&train.sample_shape) {
        Some(shape) => {
            super::check_compatible(test, shape, task, true).map_err(|m| m.in_file(path))
        }
        // Training refuses such data itself.
        None => Ok(()),
    }
}

/// The test set of `path` for a model trained with `split` (and, for a table, its
/// `target` spec and `class_names`): a file the model was trained on with a test
/// fraction is scored on its held-out rows only.
pub fn load_test_for(
    path: &Path,
    split: &TestSplit,
    target: Option<&TargetSpec>,
    class_names: Option<&[String]>,
) -> Result<Dataset> {
    let (test, warning) = load_test_rows(path, split, target, None, class_names, &|_| None)?;
    if let Some(w) = warning {
        tracing::warn!("{w}");
    }
    Ok(test)
}

/// The warning for scores on `path` when its rows are exactly a model's training and
/// validation rows (checksum `sum`): they say nothing of new data.
/// The share of a file's rows that are training rows from which it is said.
pub(crate) const TRAINED_SHARE: f64 = 0.2;

/// The warning for a file of which `share` of the rows are training rows.
pub(crate) fn trained_share_warning(path: &Path, share: f64) -> String {
    format!(
        "{}: about {:.0}% of its rows are rows the model was trained on: the scores say little of new data",
        path.display(),
        100.0 * share
    )
}

pub(crate) fn trained_rows_warning(path: &Path, sum: &str) -> String {
    format!(
        "{}: these are the rows the model was trained on (its training and validation rows, checksum {sum}): the scores say nothing of new data",
        path.display()
    )
}

/// [`load_test_for`], and a warning when the rows are not the ones the model was tested
/// on in training: a model trained with a test fraction of a file whose checksum
/// differs from `path`'s (another file, or the same file changed) is scored on every
/// row of `path`, which may include rows it was trained on.
///
/// `trained(rows)` says whether the rows a seeded split leaves for training are the
/// model's: the file's checksum alone cannot say it, since the same bytes read with
/// other options (`--skip-rows`) are other rows, and a split of them other test rows.
pub(crate) fn load_test_rows(
    path: &Path,
    split: &TestSplit,
    target: Option<&TargetSpec>,
    size: Option<ImageSize>,
    class_names: Option<&[String]>,
    trained: &dyn Fn(&Dataset) -> Option<bool>,
) -> Result<(Dataset, Option<String>)> {
    let l = load_any(path, target, class_names, false, size)?;
    if let Some(test) = l.own_test {
        return Ok((test, None));
    }
    let TestSplit::Fraction {
        fraction,
        seed,
        file_md5: md5,
    } = split
    else {
        return Ok((l.all, None));
    };
    let now = md5_of(l.md5, path)?;
    let (train, test, _) = l.all.seeded_split(*fraction, *seed);
    // Other bytes of the same rows (CRLF line ends, a gzipped copy) hold the model's test
    // rows, when the rows its split trains on are the model's by their checksum (`eval`
    // scores those test rows alone, as `prune` does, not every row).
    let proven = trained(&train);
    if proven == Some(true) || (now == *md5 && proven.is_none()) {
        return Ok((test, None));
    }
    if now == *md5 {
        let warning = format!(
            "{}: the file the model was trained on, read into other rows than its training's (other --skip-rows or --delimiter?): scoring all its {} rows, not a held-out {fraction} of them",
            path.display(),
            l.all.len()
        );
        return Ok((l.all, Some(warning)));
    }
    let warning = format!(
        "{}: not the file the model was trained on (checksum {now}, the model's {md5}): scoring all its {} rows, not a held-out {fraction} of them",
        path.display(),
        l.all.len()
    );
    Ok((l.all, Some(warning)))
}

/// The door for unlabelled samples (`ant predict`): reads `paths` in the format
/// [`detect`] finds, for a model whose input is `input`: table rows for a flat model
/// (laid out as `spec` says, the target column optional; `outputs` values a row); an
/// IDX image file, a CIFAR-10 batch, a `.npy`, or image files and folders of them (read
/// whole, sorted; resized to the model's size where `resize`) for an image model; or a
/// SARCOS MAT-file. Several paths are image files or folders. Targets are placeholders.
/// Image files come back with their paths, in the order of the samples.
pub fn load_unlabelled(
    paths: &[PathBuf],
    input: Shape,
    spec: Option<&TargetSpec>,
    outputs: usize,
    resize: bool,
) -> Result<(Dataset, Option<Vec<PathBuf>>)> {
    let (c, h, w) = match (paths, input) {
        ([], _) => return Err(AntError::invalid("input", "no input path given")),
        ([path], _) => return load_one_unlabelled(path, input, spec, (outputs, resize)),
        (_, Shape::Flat { .. }) => {
            let msg =
                "is one of several inputs, which are image files or folders: give one table file";
            return Err(AntError::data(&paths[1], msg));
        }
        (_, Shape::Image { c, h, w }) => (c, h, w),
    };
    for p in paths {
        if !p.is_dir() && !matches!(detect(p)?, Input::File(FileFormat::Image, ..)) {
            let msg = "is not an image: several inputs are image files or folders of them";
            return Err(AntError::data(p, msg));
        }
    }
    let (files, x) = image_folder::load_files(paths, (c, h, w), resize)?;
    Ok((unlabelled(Values::Bytes(x), vec![c, h, w])?, Some(files)))
}

/// Samples `x` of `sample_shape`, with placeholder targets.
fn unlabelled(x: Values, sample_shape: Vec<usize>) -> Result<Dataset> {
    let n = match &x {
        Values::F32(v) => v.len(),
        Values::Bytes(b) => b.len(),
    } / sample_shape.iter().product::<usize>().max(1);
    Dataset::of_values(
        x,
        sample_shape,
        Targets::Values {
            values: vec![0.0; n],
            dim: 1,
        },
    )
}

/// [`load_unlabelled`] of one path.
fn load_one_unlabelled(
    path: &Path,
    input: Shape,
    spec: Option<&TargetSpec>,
    (outputs, resize): (usize, bool),
) -> Result<(Dataset, Option<Vec<PathBuf>>)> {
    let (format, bytes) = match (detect(path)?, input) {
        (Input::File(FileFormat::Image, ..) | Input::Dir(_), Shape::Image { c, h, w }) => {
            let (files, x) = image_folder::load_files(&[path.to_path_buf()], (c, h, w), resize)?;
            return Ok((unlabelled(Values::Bytes(x), vec![c, h, w])?, Some(files)));
        }
        (Input::Dir(_), _) => {
            let msg =
                "is a directory; give one file (CSV rows, an IDX image file or a CIFAR-10 batch)";
            return Err(AntError::data(path, msg));
        }
        (Input::File(format, bytes, _), _) => (format, bytes),
    };
    let data = match (format, input) {
        // An image model's image files are read above, with their paths.
        (FileFormat::Image, _) => {
            let msg = format!(
                "is an image, but the model reads rows of {} numeric features: give a table file",
                input.numel()
            );
            return Err(AntError::data(path, msg));
        }
        (FileFormat::Numpy, _) => numpy::load_samples(&bytes, path)?,
        (FileFormat::Mat, _) => {
            let s = sarcos::parse_sarcos(&bytes, path, false)?;
            unlabelled(s.x, s.sample_shape)?
        }
        (FileFormat::Idx, _) => {
            let a = idx::parse_idx(bytes, path)?;
            let [_, h, w] = a.dims[..] else {
                return Err(AntError::data(
                    path,
                    format!(
                        "an IDX image file must have 3 dimensions (count, rows, cols), got {:?}",
                        a.dims
                    ),
                ));
            };
            unlabelled(Values::Bytes(a.data), vec![1, h, w])?
        }
        (FileFormat::CifarBatch, _) => {
            let (x, _) = cifar::parse_batch(&bytes, path)?;
            unlabelled(Values::Bytes(x), cifar::CIFAR_SHAPE.to_vec())?
        }
        (FileFormat::Text | FileFormat::Parquet, Shape::Flat { d }) => {
            super::tabular::parse_features(&bytes, path, spec, d, outputs)?
        }
        (FileFormat::Text, Shape::Image { .. }) => return Err(not_images(bytes, path, input)),
        (FileFormat::Parquet, Shape::Image { .. }) => {
            let msg = "is a Parquet table, but the model reads images: give image files, a folder of them, or IDX, CIFAR-10 or NumPy files";
            return Err(AntError::data(path, msg));
        }
    };
    Ok((data, None))
}

/// Why a file given to an image model is neither an IDX file nor a CIFAR-10 batch,
/// in the words of the reader its input shape calls for.
fn not_images(bytes: Vec<u8>, path: &Path, input: Shape) -> AntError {
    let err = if input.dims() == cifar::CIFAR_SHAPE {
        cifar::parse_batch(&bytes, path).err()
    } else if bytes.starts_with(&[0, 0]) {
        idx::parse_idx(bytes, path).err()
    } else {
        None
    };
    err.unwrap_or_else(|| {
        AntError::data(
            path,
            "not an IDX image file (its magic number must start with two zero bytes)",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskKind;

    #[test]
    fn single_image_files_and_mat_tables_are_named() {
        let d = tempfile::tempdir().unwrap();
        let spec = TargetSpec::new("0", TaskKind::Regression);
        let msg = |name: &str, bytes: &[u8], target: Option<&TargetSpec>| {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = load_source(&p, None, 0.2, 0, target, None).err().unwrap();
            assert!(matches!(e, AntError::Data { .. }), "{e}");
            e.to_string()
        };
        let idx = [0, 0, 8, 1, 0, 0, 0, 2, 7, 7];
        for target in [None, Some(&spec)] {
            let e = msg("one.idx", &idx, target);
            assert!(e.contains("one.idx: is a single IDX file"), "{e}");
            let e = msg("b.bin", &cifar::tests::batch(2), target);
            assert!(e.contains("b.bin: is a single CIFAR-10 batch"), "{e}");
        }
        let mut mat = b"MATLAB 5.0 MAT-file".to_vec();
        mat.resize(128, b' ');
        let e = msg("m.mat", &mat, Some(&spec));
        assert!(e.contains("m.mat: is a MAT-file, but a table"), "{e}");
        let e = load_source(&d.path().join("gone.csv"), None, 0.2, 0, None, None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("gone.csv: no such file or directory"), "{e}");
    }
}
