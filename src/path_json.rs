//! Paths in JSON files (`run.json`, an ensemble's file, a model's parameters): a
//! string when the path is Unicode, else (on Unix) its bytes as `{"unix_bytes": [...]}`,
//! so that a run over any path can be resumed.

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
