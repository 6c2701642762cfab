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
    #[serde(with = "os_path")]
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

/// Paths in `run.json`: a string when the path is Unicode, else (on Unix) its bytes as
/// `{"unix_bytes": [...]}`, so that a run over any path can be resumed.
pub(crate) mod os_path {
    use std::path::{Path, PathBuf};

    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Text(String),
        Bytes { unix_bytes: Vec<u8> },
    }

    fn to_repr(p: &Path) -> Result<Repr, String> {
        match p.to_str() {
            Some(t) => Ok(Repr::Text(t.to_string())),
            None => bytes_of(p),
        }
    }

    #[cfg(unix)]
    fn bytes_of(p: &Path) -> Result<Repr, String> {
        use std::os::unix::ffi::OsStrExt;
        Ok(Repr::Bytes {
            unix_bytes: p.as_os_str().as_bytes().to_vec(),
        })
    }

    #[cfg(not(unix))]
    fn bytes_of(p: &Path) -> Result<Repr, String> {
        Err(format!("the path {} is not valid Unicode", p.display()))
    }

    fn from_repr(r: Repr) -> Result<PathBuf, String> {
        match r {
            Repr::Text(t) => Ok(PathBuf::from(t)),
            #[cfg(unix)]
            Repr::Bytes { unix_bytes } => {
                use std::os::unix::ffi::OsStrExt;
                Ok(PathBuf::from(std::ffi::OsStr::from_bytes(&unix_bytes)))
            }
            #[cfg(not(unix))]
            Repr::Bytes { .. } => Err("a Unix path (bytes) cannot be used here".to_string()),
        }
    }

    pub(crate) fn serialize<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
        to_repr(p).map_err(S::Error::custom)?.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        from_repr(Repr::deserialize(d)?).map_err(D::Error::custom)
    }

    pub(crate) mod option {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(
            p: &Option<PathBuf>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match p {
                Some(p) => to_repr(p).map_err(S::Error::custom)?.serialize(s),
                None => s.serialize_none(),
            }
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<PathBuf>, D::Error> {
            Option::<Repr>::deserialize(d)?
                .map(from_repr)
                .transpose()
                .map_err(D::Error::custom)
        }
    }
}
