//! What `ant` can prove it wrote in a directory, and the one way it replaces or removes
//! a file there.
//!
//! Every model, ensemble or run directory `ant` writes holds `ant-files.json`, a
//! manifest that names each file `ant` put there with the length and MD5 of its bytes.
//! A file under one of the names `ant` writes may be replaced or removed only if the
//! manifest names it and its bytes still match ([`write`], [`remove`]); anything else
//! is the user's ([`foreign`]) and refused, `--force` or not.
//!
//! A replacement is recorded in two steps around the file's atomic write: first the
//! manifest accepts the old bytes and the new, then only the new. Killed at any point,
//! the file on disk matches the manifest. `records.jsonl` grows a line per epoch: while
//! a run is under way, its stamp covers a prefix of it, and lines appended since are the
//! run's own; a finished run stamps it whole.
//!
//! Directories written before manifests existed hold none: there, a file is recognised
//! by its content as before ([`legacy_foreign`]), and the first write adopts the files.

use std::collections::BTreeMap;
use std::io::Seek;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{AntError, Result};
use crate::store::atomic::{read_bounded, write_atomic};
use crate::store::checksum::{md5_hex, md5_of_first, md5_of_first_read};
use crate::store::file_names::*;

const FORMAT: &str = "ant-files-1";
/// The most bytes a manifest can take (a few names and checksums, with room).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// A file's bytes as `ant` wrote them: how many, and their MD5.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Stamp {
    len: u64,
    md5: String,
}

impl Stamp {
    fn of(bytes: &[u8]) -> Stamp {
        Stamp {
            len: bytes.len() as u64,
            md5: md5_hex(bytes),
        }
    }
}

/// `ant-files.json`: each file `ant` wrote in the directory and the bytes it may hold
/// (two while a replacement is under way).
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    /// Counts the manifest's saves: a look at the directory beside a writer knows its
    /// manifest did not change only if this did not (the same bytes again, a file put
    /// back as it was, prove nothing).
    #[serde(default)]
    generation: u64,
    files: BTreeMap<String, Vec<Stamp>>,
}

/// Whether `name` is a file `ant` writes in a model, ensemble or run directory (and so
/// replaces or removes only under the manifest). Folders (`checkpoint/`, `grown/`,
/// `member-K/`) and `run.lock` have their own checks.
pub(crate) fn is_stamped(name: &str) -> bool {
    STAMPED_FILES.contains(&name) || (name.starts_with("model-") && name.ends_with(".safetensors"))
}

/// Files that grow by appended lines: a stamp of a prefix proves them.
fn is_log(name: &str) -> bool {
    name == RECORDS_FILE
}

/// The files under `ant`'s names in `dir` that `ant` cannot prove it wrote (a manifest
/// that is not one included), sorted; empty for a directory that does not exist.
pub(crate) fn foreign(dir: &Path) -> Result<Vec<String>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    // A command writing here records a file's new bytes before it writes them and
    // settles the record after, so a look taken while the manifest stayed the same sees
    // files and manifest agree; one it changed under is taken again.
    let manifest = || read_bounded(&dir.join(MANIFEST_FILE), MAX_MANIFEST_BYTES).ok();
    for _ in 0..LOOKS {
        let before = manifest();
        let found = foreign_now(dir)?;
        if found.is_empty() || manifest() == before {
            return Ok(found);
        }
    }
    foreign_now(dir)
}

/// How many times [`foreign`] looks at a directory whose manifest changes meanwhile.
const LOOKS: usize = 50;

/// [`foreign`] from one look at the directory.
fn foreign_now(dir: &Path) -> Result<Vec<String>> {
    let has = |name: &str| std::fs::symlink_metadata(dir.join(name)).is_ok();
    let mut foreign = match read(dir) {
        // Looked for again when not proven: one removed since it was listed is no one's.
        Ok(Some(m)) => stamped_present(dir)?
            .into_iter()
            .filter(|n| !owns(&m, dir, n) && has(n))
            .collect(),
        Ok(None) => legacy_foreign(dir)?,
        // A manifest `ant` did not write proves nothing.
        Err(_) => std::iter::once(MANIFEST_FILE.to_string())
            .chain(stamped_present(dir)?)
            .collect(),
    };
    let reads = |name: &str, ok: fn(&[u8]) -> bool| {
        read_bounded(&dir.join(name), 256 << 20).is_ok_and(|b| ok(&b))
    };
    // Each is looked for again after a failed read: a run that finished meanwhile
    // removed its checkpoints and its lock, which are then no one's.
    let run = format!("{CHECKPOINT_DIR}/{RUN_FILE}");
    if has(CHECKPOINT_DIR) && !reads(&run, is_run_file) && has(CHECKPOINT_DIR) {
        foreign.push(CHECKPOINT_DIR.to_string());
    }
    let lock_text = |b: &[u8]| b.starts_with(LOCK_TEXT.as_bytes());
    if has(LOCK_FILE) && !reads(LOCK_FILE, lock_text) && has(LOCK_FILE) {
        foreign.push(LOCK_FILE.to_string());
    }
    foreign.sort();
    foreign.dedup();
    Ok(foreign)
}

/// Writes `bytes` as the file `name` in `dir` (atomically), replacing a file there only
/// if `ant` wrote it, and records it in the manifest.
pub(crate) fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let mut m = open(dir)?;
    refuse_foreign(&m, dir, name)?;
    let new = Stamp::of(bytes);
    let stamps = m.files.entry(name.to_string()).or_default();
    if !stamps.contains(&new) {
        stamps.push(new.clone());
        save(dir, &mut m)?;
    }
    write_atomic(&dir.join(name), bytes)?;
    settle(dir, &mut m, name, vec![new])
}

/// Removes the file `name` from `dir` if `ant` wrote it (refuses it otherwise); a
/// missing file is no error.
pub(crate) fn remove(dir: &Path, name: &str) -> Result<()> {
    if std::fs::symlink_metadata(dir.join(name)).is_err() {
        return Ok(());
    }
    let mut m = open(dir)?;
    refuse_foreign(&m, dir, name)?;
    crate::store::atomic::remove_file(&dir.join(name))?;
    m.files.remove(name);
    save(dir, &mut m)
}

/// Records the log `name` in `dir` as it is now (its lines appended since the last
/// stamp are the run's).
pub(crate) fn stamp_log(dir: &Path, name: &str) -> Result<()> {
    let path = dir.join(name);
    let bytes = read_bounded(&path, 4 << 30).map_err(|e| AntError::io(&path, e))?;
    let mut m = open(dir)?;
    refuse_foreign(&m, dir, name)?;
    settle(dir, &mut m, name, vec![Stamp::of(&bytes)])
}

/// The manifest of a directory made whole from `files` (name, bytes), to be written
/// with them as [`MANIFEST_FILE`].
pub(crate) fn of_files(files: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    let m = Manifest {
        format: FORMAT.to_string(),
        generation: 1,
        files: files
            .iter()
            .map(|(name, bytes)| (name.to_string(), vec![Stamp::of(bytes)]))
            .collect(),
    };
    serde_json::to_vec_pretty(&m).map_err(|e| AntError::model(e.to_string()))
}

/// Every entry of `dir` that its manifest does not prove `ant`'s, for a directory `ant`
/// replaces whole (sorted); `None` when `dir` holds no manifest.
pub(crate) fn unproven_entries(dir: &Path) -> Result<Option<Vec<String>>> {
    let m = match read(dir) {
        Ok(Some(m)) => m,
        Ok(None) => return Ok(None),
        Err(_) => return Ok(Some(vec![MANIFEST_FILE.to_string()])),
    };
    let entries = std::fs::read_dir(dir).map_err(|e| AntError::io(dir, e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != MANIFEST_FILE && !owns(&m, dir, n))
        .collect();
    names.sort();
    Ok(Some(names))
}

/// The manifest of `dir` (`None`: there is none) or an error naming a file of that name
/// `ant` did not write.
fn read(dir: &Path) -> Result<Option<Manifest>> {
    let path = dir.join(MANIFEST_FILE);
    let bytes = match read_bounded(&path, MAX_MANIFEST_BYTES) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        other => other.map_err(|e| AntError::io(&path, e))?,
    };
    match serde_json::from_slice::<Manifest>(&bytes) {
        Ok(m) if m.format == FORMAT => Ok(Some(m)),
        _ => Err(AntError::data(
            &path,
            "is not the manifest ant writes: move it, or choose another directory",
        )),
    }
}

/// The manifest of `dir` to write to: the one there, or for a directory without one a
/// new one that adopts the files an earlier version of `ant` wrote there (any other
/// file under `ant`'s names is refused).
fn open(dir: &Path) -> Result<Manifest> {
    if let Some(m) = read(dir)? {
        return Ok(m);
    }
    let foreign = legacy_foreign(dir)?;
    if let Some(name) = foreign.first() {
        return Err(foreign_error(dir, name));
    }
    let mut files = BTreeMap::new();
    for name in stamped_present(dir)? {
        let path = dir.join(&name);
        let bytes = read_bounded(&path, 4 << 30).map_err(|e| AntError::io(&path, e))?;
        files.insert(name, vec![Stamp::of(&bytes)]);
    }
    Ok(Manifest {
        format: FORMAT.to_string(),
        generation: 0,
        files,
    })
}

/// Keeps only `stamps` for `name` and saves the manifest.
fn settle(dir: &Path, m: &mut Manifest, name: &str, stamps: Vec<Stamp>) -> Result<()> {
    m.files.insert(name.to_string(), stamps);
    save(dir, m)
}

fn save(dir: &Path, m: &mut Manifest) -> Result<()> {
    m.generation += 1;
    let json = serde_json::to_vec_pretty(m).map_err(|e| AntError::model(e.to_string()))?;
    write_atomic(&dir.join(MANIFEST_FILE), &json)
}

fn refuse_foreign(m: &Manifest, dir: &Path, name: &str) -> Result<()> {
    let present = std::fs::symlink_metadata(dir.join(name)).is_ok();
    match present && !owns(m, dir, name) {
        true => Err(foreign_error(dir, name)),
        false => Ok(()),
    }
}

fn foreign_error(dir: &Path, name: &str) -> AntError {
    let msg = "ant did not write it (its manifest does not name these bytes), so ant never \
               replaces or removes it: move it, or choose another directory";
    AntError::data(dir.join(name), msg)
}

/// Whether the manifest `m` proves the file `name` in `dir` is `ant`'s: a regular file
/// whose bytes (for a log, whose first bytes) match a stamp.
fn owns(m: &Manifest, dir: &Path, name: &str) -> bool {
    let path = dir.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return false;
    };
    let stamps = m.files.get(name).map(Vec::as_slice).unwrap_or_default();
    // Lines appended since the last stamp are the run's only while a run is under way
    // (its checkpoints are there); once it finished, they are someone else's.
    let growing = is_log(name) && dir.join(CHECKPOINT_DIR).is_dir();
    // Length and bytes from one opened file: a command replacing it meanwhile renames
    // another in, and length of one with bytes of the other proves nothing.
    let Ok(mut file) = std::fs::File::open(&path) else {
        return false;
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return false;
    };
    meta.is_file()
        && stamps.iter().any(|s| {
            let fits = s.len == len || (growing && s.len <= len);
            fits && file.seek(std::io::SeekFrom::Start(0)).is_ok()
                && md5_of_first_read(&file, s.len).is_ok_and(|h| h == s.md5)
        })
}

/// The entries of `dir` under the names of files `ant` writes, sorted.
fn stamped_present(dir: &Path) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir).map_err(|e| AntError::io(dir, e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_stamped(n))
        .collect();
    names.sort();
    Ok(names)
}

/// For a directory without a manifest (written before manifests, or whose manifest
/// was deleted): the files under `ant`'s names that `ant` cannot prove it wrote, told
/// by their content against the model, ensemble or run beside them. Beside one: a
/// `tree.json` or `ensemble.json` of no known format, checksum-named weights whose
/// bytes do not match their name, weights that are no safetensors file, a report of
/// another preset or none, a pruning summary without its fields, records with a line
/// that is no epoch record. Beside none: every one.
pub(crate) fn legacy_foreign(dir: &Path) -> Result<Vec<String>> {
    let read = |name: &str| read_bounded(&dir.join(name), 256 << 20).ok();
    let tree = read(TREE_FILE).filter(|b| format_is(b, MODEL_FORMAT));
    let ensemble = read(ENSEMBLE_FILE).filter(|b| format_is(b, ENSEMBLE_FORMAT));
    let run = read(&format!("{CHECKPOINT_DIR}/{RUN_FILE}")).is_some_and(|b| is_run_file(&b));
    // The preset the model or ensemble here was trained with: a report names it.
    let preset = tree.as_deref().or(ensemble.as_deref()).and_then(preset_of);
    let beside_model = tree.is_some() || ensemble.is_some() || run;
    let proven = |n: &str| match n {
        TREE_FILE => tree.is_some(),
        ENSEMBLE_FILE => ensemble.is_some(),
        n if is_checksum_weights(n) => weights_match_name(&dir.join(n)),
        LEGACY_WEIGHTS_FILE => read(n).is_some_and(|b| is_safetensors(&b)),
        REPORT_FILE => read(n).is_some_and(|b| is_report(&b, preset.as_deref())),
        PRUNE_FILE => read(n).is_some_and(|b| is_prune_summary(&b)),
        RECORDS_FILE => read(n).is_some_and(|b| are_epoch_records(&b)),
        _ => false,
    };
    let foreign = stamped_present(dir)?
        .into_iter()
        .filter(|n| !beside_model || !proven(n))
        .collect();
    Ok(foreign)
}

/// The `preset` a `tree.json` or `ensemble.json` names.
fn preset_of(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    v.get("preset")?.as_str().map(str::to_string)
}

/// Whether `bytes` are a report `ant` writes (`report.json`) of a model of `preset`.
fn is_report(bytes: &[u8], preset: Option<&str>) -> bool {
    let Ok(serde_json::Value::Object(v)) = serde_json::from_slice(bytes) else {
        return false;
    };
    v.get("test_samples").is_some_and(serde_json::Value::is_u64)
        && v.get("preset").and_then(|p| p.as_str()).is_some_and(|p| Some(p) == preset)
}

/// Whether `bytes` are a pruning summary `ant` writes (`prune.json`).
fn is_prune_summary(bytes: &[u8]) -> bool {
    let Ok(serde_json::Value::Object(v)) = serde_json::from_slice(bytes) else {
        return false;
    };
    ["min_reach", "removed", "params_before", "params_after"]
        .iter()
        .all(|k| v.contains_key(*k))
}

/// Whether `bytes` are epoch records in the order a run writes them (`records.jsonl`):
/// each the next epoch of the optimisation before it, or the first of another (never
/// of the same one again: growth trains another candidate between two of a node's).
fn are_epoch_records(bytes: &[u8]) -> bool {
    use crate::observe::EpochRecord;
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let mut before: Option<EpochRecord> = None;
    text.lines().filter(|l| !l.trim().is_empty()).all(|l| {
        let Ok(r) = serde_json::from_str::<EpochRecord>(l) else {
            return false;
        };
        let same = before
            .as_ref()
            .is_some_and(|b| (b.phase, b.node, b.candidate) == (r.phase, r.node, r.candidate));
        let next = same && before.as_ref().is_some_and(|b| b.epoch + 1 == r.epoch);
        let first = !same && r.epoch <= 1;
        before = Some(r);
        next || first
    })
}

/// Whether `bytes` are a safetensors file: a little-endian header length, then that
/// many bytes of a JSON object.
fn is_safetensors(bytes: &[u8]) -> bool {
    let Some((len, rest)) = bytes.split_first_chunk::<8>() else {
        return false;
    };
    let len = u64::from_le_bytes(*len);
    len <= rest.len() as u64
        && serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(
            &rest[..len as usize],
        )
        .is_ok()
}

/// Whether the weights file `path` (`model-<16 hex digits>.safetensors`) holds bytes
/// whose MD5 starts with those digits, as every weights file `ant` saves does.
pub(crate) fn weights_match_name(path: &Path) -> bool {
    let id = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("model-"))
        .and_then(|n| n.strip_suffix(".safetensors"))
        .map(str::to_ascii_lowercase);
    let Some(id) = id else { return false };
    md5_of_first(path, u64::MAX).is_ok_and(|h| h.starts_with(&id))
}

/// Whether `bytes` are a run file as `ant` starts every run with: its spec and the
/// directory it was started from.
fn is_run_file(bytes: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)] // the fields are read to be there
    struct Head {
        spec: serde_json::Value,
        cwd: serde_json::Value,
    }
    serde_json::from_slice::<Head>(bytes).is_ok()
}

/// Whether `bytes` are a JSON object whose `format` is `format`.
fn format_is(bytes: &[u8], format: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        format: String,
    }
    serde_json::from_slice::<Head>(bytes).is_ok_and(|h| h.format == format)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What another command sees while one replaces files: only `ant`'s files, at every
    /// moment (the look is taken again when the manifest changed under it, even back to
    /// the same files).
    #[test]
    fn a_look_beside_a_writer_finds_nothing_foreign() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        write(dir, PRUNE_FILE, b"{}").unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        let looks = std::thread::scope(|s| {
            s.spawn(|| {
                // As `prune` into one directory: the old summary removed, the report
                // replaced, a summary of the same bytes written again.
                for i in 0..400 {
                    remove(dir, PRUNE_FILE).unwrap();
                    write(dir, REPORT_FILE, format!("{{\"i\":{i}}}").as_bytes()).unwrap();
                    write(dir, PRUNE_FILE, b"{}").unwrap();
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            let mut looks = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                assert_eq!(foreign(dir).unwrap(), Vec::<String>::new(), "look {looks}");
                looks += 1;
            }
            looks
        });
        assert!(looks > 10, "{looks} looks while the files were written");
    }

    #[test]
    fn only_files_whose_bytes_the_manifest_names_are_replaced_or_removed() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        write(dir, REPORT_FILE, b"{\"a\":1}").unwrap();
        assert!(foreign(dir).unwrap().is_empty());
        // Replaced by ant: fine. Changed by the user: foreign, never replaced or removed.
        write(dir, REPORT_FILE, b"{\"a\":2}").unwrap();
        std::fs::write(dir.join(REPORT_FILE), "mine").unwrap();
        assert_eq!(foreign(dir).unwrap(), [REPORT_FILE]);
        let e = write(dir, REPORT_FILE, b"x").unwrap_err().to_string();
        assert!(
            e.contains("report.json") && e.contains("did not write"),
            "{e}"
        );
        assert!(remove(dir, REPORT_FILE).is_err());
        assert_eq!(std::fs::read(dir.join(REPORT_FILE)).unwrap(), b"mine");
        // A file the manifest never named is foreign too.
        std::fs::write(dir.join(PRUNE_FILE), "{}").unwrap();
        assert!(foreign(dir).unwrap().contains(&PRUNE_FILE.to_string()));
        // A log is proved by its stamped prefix: lines appended since are ant's.
        write(dir, RECORDS_FILE, b"").unwrap();
        write(dir, RECORDS_FILE, b"{\"phase\":1}\n").unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(RECORDS_FILE))
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"phase\":2}\n").unwrap();
        // ... while a run is under way; once it finished, they are not.
        assert!(foreign(dir).unwrap().contains(&RECORDS_FILE.to_string()));
        std::fs::create_dir(dir.join(CHECKPOINT_DIR)).unwrap();
        assert!(!foreign(dir).unwrap().contains(&RECORDS_FILE.to_string()));
        std::fs::write(dir.join(RECORDS_FILE), "other\n").unwrap();
        assert!(foreign(dir).unwrap().contains(&RECORDS_FILE.to_string()));
        // A manifest ant did not write proves nothing.
        std::fs::write(dir.join(MANIFEST_FILE), "{}").unwrap();
        assert!(foreign(dir).unwrap().contains(&MANIFEST_FILE.to_string()));
    }

    #[test]
    fn a_directory_of_an_earlier_version_is_adopted_and_user_files_beside_nothing_are_not() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        let report = "{\"multi_path_error\":1,\"preset\":\"tabular\",\"test_samples\":30}";
        std::fs::write(dir.join(REPORT_FILE), report).unwrap();
        // Beside no model of ant's, nothing is ant's.
        assert_eq!(foreign(dir).unwrap(), [REPORT_FILE]);
        assert!(write(dir, TREE_FILE, b"x").is_err());
        // Beside a model of another preset, the report is not its.
        let tree = |preset: &str| format!("{{\"format\":\"{MODEL_FORMAT}\",\"preset\":\"{preset}\"}}");
        std::fs::write(dir.join(TREE_FILE), tree("mnist-a")).unwrap();
        assert_eq!(foreign(dir).unwrap(), [REPORT_FILE]);
        std::fs::write(dir.join(TREE_FILE), tree("tabular")).unwrap();
        assert!(foreign(dir).unwrap().is_empty());
        remove(dir, REPORT_FILE).unwrap();
        assert!(!dir.join(REPORT_FILE).exists());
        assert!(read(dir).unwrap().unwrap().files.contains_key(TREE_FILE));
    }
}
