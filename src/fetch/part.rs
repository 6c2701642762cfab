//! A download's partial file, `NAME.part`, and the stamp that proves it ant's:
//! `NAME.part.ant`, the URL it downloads, written before the part's first byte.

use std::path::{Path, PathBuf};

use super::remove;
use crate::error::{AntError, Result};

pub(super) fn part_path(path: &Path) -> PathBuf {
    with_ending(path, ".part")
}

fn with_ending(path: &Path, ending: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(ending);
    PathBuf::from(s)
}

/// The stamp beside a `.part` ant started: `NAME.part.ant`, holding the URL it
/// downloads. A `.part` without it (or for another URL) is not ant's: a file of the
/// user's, or of a version before the stamp, which ant neither resumes nor replaces.
pub(super) fn stamp_path(part: &Path) -> PathBuf {
    with_ending(part, ".ant")
}

/// Refuses a `.part` at `part` that ant did not start for `url`.
pub(super) fn check_part_is_ours(part: &Path, url: &str) -> Result<()> {
    if std::fs::symlink_metadata(part).is_err() {
        return Ok(());
    }
    let stamp = stamp_path(part);
    let ours =
        crate::store::atomic::read_bounded(&stamp, 1 << 16).is_ok_and(|b| b == url.as_bytes());
    if ours && std::fs::symlink_metadata(part).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let msg = format!(
        "is where the download of {url} goes, and ant did not start it (no {} names that URL): move it or delete it, then run again",
        stamp.file_name().unwrap_or_default().to_string_lossy()
    );
    Err(AntError::data(part, msg))
}

/// Removes ant's `.part` and its stamp (the part first: a stamp alone names nothing).
pub(super) fn remove_part(part: &Path) -> Result<()> {
    remove(part)?;
    remove(&stamp_path(part))
}
