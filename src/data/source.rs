//! From a `--data` path to training and test sets, the same way for `train` and `eval`.

use std::path::Path;

use super::{Dataset, file_md5, idx, sarcos};
use crate::error::{AntError, Result};
use crate::model::TestSplit;

/// Training and test sets chosen from a data path.
pub struct Source {
    pub train: Dataset,
    pub test: Dataset,
    pub split: TestSplit,
}

/// Load the samples of one file or directory: an IDX directory gives (train, test).
fn load_any(path: &Path) -> Result<(Dataset, Option<Dataset>)> {
    if !path.exists() {
        return Err(AntError::data(path, "no such file or directory"));
    }
    if path.is_dir() {
        let (tr, te) = idx::load_idx_dir(path)?;
        return Ok((tr, Some(te)));
    }
    let d = sarcos::load_sarcos(path)?;
    d.check_finite(path)?;
    Ok((d, None))
}

/// Resolve the test set: the data's own test files, else `test_data`, else a seeded
/// `test_fraction` of the file (recorded by checksum so `eval` picks the same rows).
pub fn load_source(
    path: &Path,
    test_data: Option<&Path>,
    test_fraction: f64,
    seed: u64,
) -> Result<Source> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(AntError::param(format!(
            "--test-fraction must be in (0, 1), got {test_fraction}"
        )));
    }
    let (all, own_test) = load_any(path)?;
    if let Some(tp) = test_data {
        let (test, _) = load_any(tp)?;
        return Ok(Source {
            train: all,
            test,
            split: TestSplit::File {
                path: tp.display().to_string(),
            },
        });
    }
    if let Some(test) = own_test {
        return Ok(Source {
            train: all,
            test,
            split: TestSplit::Files,
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
    })
}

/// The test set of `path` for a model trained with `split`: a file the model was
/// trained on with a test fraction is scored on its held-out rows only.
pub fn load_test_for(path: &Path, split: &TestSplit) -> Result<Dataset> {
    let (all, own_test) = load_any(path)?;
    if let Some(test) = own_test {
        return Ok(test);
    }
    if let TestSplit::Fraction {
        fraction,
        seed,
        file_md5: md5,
    } = split
        && file_md5(path)? == *md5
    {
        let (_, test, _) = all.seeded_split(*fraction, *seed);
        return Ok(test);
    }
    Ok(all)
}
