//! `run.json`: what a run was started with, so that it can resume, and the checksums
//! of its data, so that it resumes only on the same rows.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::RunSpec;
use crate::data::Dataset;
use crate::data::source::TestSide;

/// `run.json`: the spec, and the directory relative paths in it start from.
#[derive(Serialize, Deserialize)]
pub struct RunFile {
    pub spec: RunSpec,
    #[serde(with = "crate::path_json")]
    pub cwd: PathBuf,
    /// The data the run started with (absent in runs of earlier versions: not checked).
    #[serde(default)]
    pub checksums: Option<DataChecksums>,
}

/// Checksums of the samples a run trains and tests on, as loaded (see
/// [`Dataset::checksum`]): a run resumes only on the same data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataChecksums {
    /// The training rows (after `train_limit`, validation rows included) and the class
    /// names.
    pub train: String,
    pub test: String,
    /// The MD5 of the `tree.json` of the model `--init-from` names (which names its
    /// weights by their checksum): a run resumes only from the same start.
    #[serde(default)]
    pub start: Option<String>,
}

impl DataChecksums {
    /// The checksums of the run `spec` (relative paths from `cwd`) on the rows it loaded.
    pub(crate) fn of_run(
        source: &TestSide,
        train: &Dataset,
        spec: &RunSpec,
        cwd: &std::path::Path,
    ) -> DataChecksums {
        let start = spec.params.init_from().and_then(|d| {
            let tree = cwd.join(d).join(crate::store::file_names::TREE_FILE);
            crate::store::atomic::read_bounded(&tree, 256 << 20)
                .ok()
                .map(|b| crate::store::checksum::md5_hex(&b))
        });
        DataChecksums {
            start,
            ..DataChecksums::of(source, train)
        }
    }

    pub(crate) fn of(source: &TestSide, train: &Dataset) -> DataChecksums {
        let train = match &source.class_names {
            Some(names) => {
                let named = format!("{} {names:?}", train.checksum());
                crate::store::checksum::md5_hex(named.as_bytes())
            }
            None => train.checksum(),
        };
        DataChecksums {
            train,
            test: source.test.checksum(),
            start: None,
        }
    }
}
