//! From a `--data` path to training and test sets, the same way for `train` and `eval`.

use std::path::Path;

use super::tabular::{TargetSpec, load_labelled};
use super::{Dataset, cifar, file_md5, idx, sarcos};
use crate::error::{AntError, Result};
use crate::model::TestSplit;

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

/// The samples of one file or directory.
struct Loaded {
    all: Dataset,
    /// A directory's own test set (IDX, CIFAR-10).
    own_test: Option<Dataset>,
    class_names: Option<Vec<String>>,
    target: Option<TargetSpec>,
}

/// Load one file or directory: a CIFAR-10 or IDX directory gives (train, test); with a
/// target spec a file is a table, else a SARCOS file. `classes` fixes the label
/// mapping of a table (a trained model's).
fn load_any(
    path: &Path,
    target: Option<&TargetSpec>,
    classes: Option<&[String]>,
) -> Result<Loaded> {
    if !path.exists() {
        return Err(AntError::data(path, "no such file or directory"));
    }
    let plain = |all, own_test| Loaded {
        all,
        own_test,
        class_names: None,
        target: None,
    };
    if path.is_dir() {
        if target.is_some() {
            return Err(AntError::data(
                path,
                "is a directory, but a table file is needed (--target)",
            ));
        }
        let (tr, te) = if cifar::batches_dir(path).is_some() {
            cifar::load_cifar_dir(path)?
        } else {
            idx::load_idx_dir(path)?
        };
        return Ok(plain(tr, Some(te)));
    }
    if let Some(spec) = target {
        let t = load_labelled(path, spec, classes)?;
        let mut spec = spec.clone();
        spec.index = Some(t.index);
        spec.n_columns = Some(t.n_columns);
        return Ok(Loaded {
            all: t.data,
            own_test: None,
            class_names: t.class_names,
            target: Some(spec),
        });
    }
    let d = sarcos::load_sarcos(path)?;
    d.check_finite(path)?;
    Ok(plain(d, None))
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
) -> Result<Source> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(AntError::param(format!(
            "--test-fraction must be in (0, 1), got {test_fraction}"
        )));
    }
    let l = load_any(path, target, None)?;
    let (all, class_names, target) = (l.all, l.class_names, l.target);
    if let Some(tp) = test_data {
        // The test file must use the training file's columns and label mapping.
        let t = load_any(tp, target.as_ref(), class_names.as_deref())?;
        return Ok(Source {
            train: all,
            test: t.all,
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
    let file_md5 = file_md5(path)?;
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

/// The test set of `path` for a model trained with `split` (and, for a table, its
/// `target` spec and `class_names`): a file the model was trained on with a test
/// fraction is scored on its held-out rows only.
pub fn load_test_for(
    path: &Path,
    split: &TestSplit,
    target: Option<&TargetSpec>,
    class_names: Option<&[String]>,
) -> Result<Dataset> {
    let l = load_any(path, target, class_names)?;
    if let Some(test) = l.own_test {
        return Ok(test);
    }
    if let TestSplit::Fraction {
        fraction,
        seed,
        file_md5: md5,
    } = split
        && file_md5(path)? == *md5
    {
        let (_, test, _) = l.all.seeded_split(*fraction, *seed);
        return Ok(test);
    }
    Ok(l.all)
}
