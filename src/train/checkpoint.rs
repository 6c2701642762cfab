//! Checkpoints that let an interrupted run continue where it stopped.
//!
//! A run is a deterministic sequence of optimisations ([`fit`](super::fit) calls: the
//! root, each growth candidate, refinement). Each one, when it ends, leaves
//! `fit-NNNNN.ckpt` (its scores and best weights); after every epoch the one in progress
//! leaves `current.ckpt` (weights, best weights, Adam state, loop counters). Every file
//! is written atomically and holds everything it needs (with the number of epoch records
//! written when it was), and a stale `current.ckpt` (of an optimisation that has since
//! finished) is recognised, so a run killed at any moment loses at most the epoch in
//! progress. A checkpoint that cannot be written is an error that stops the run: the
//! ones written before stay, and the run resumes from them.
//!
//! Resuming runs the program from the start with the same seed: finished optimisations
//! are *replayed* (their results read back, nothing trained), which rebuilds the tree,
//! the random streams and every decision exactly; the one in progress continues from
//! its last epoch. The random streams come out the same because replay executes the
//! same module initialisations in the same order, and the one stream that training
//! itself advances (image augmentation) is saved with each checkpoint.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use burn::module::Module;
use burn::store::{BurnpackStore, ModuleSnapshot};
use burn::tensor::Bytes;
use serde::{Deserialize, Serialize};

use super::augment::Augmenter;
use super::adam::{Adam, adam};
use super::state::{Fitted, LoopState};
use crate::error::{AntError, Result};
use crate::store::atomic::{create_dir_atomic, remove_dir_atomic, write_atomic};

const MAGIC: &[u8; 8] = b"ANTCKPT1";
const CURRENT: &str = "current.ckpt";

/// Loop state of an optimisation, saved after each epoch.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct EpochHeader {
    fit: usize,
    /// Epochs completed.
    epoch: usize,
    best_nll_bits: u64,
    best_metric_bits: u64,
    since_best: usize,
    has_best: bool,
    /// Epoch records written so far (records.jsonl lines).
    records: usize,
    /// The MD5 of those lines, as written: a resumed run keeps them only if unchanged.
    #[serde(default)]
    records_md5: Option<String>,
    /// Position of the augmentation stream.
    aug_pos: Option<u128>,
    /// Training seconds so far, over every attempt.
    #[serde(default)]
    seconds: f64,
}

/// Outcome of a finished optimisation.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct FitHeader {
    fit: usize,
    valid_nll_bits: u64,
    valid_metric_bits: u64,
    epochs: usize,
    improved: bool,
    records: usize,
    #[serde(default)]
    records_md5: Option<String>,
    aug_pos: Option<u128>,
    #[serde(default)]
    seconds: f64,
}

/// How an optimisation starts.
pub enum Start<M> {
    /// Finished before the interruption: its result, nothing to train.
    Replay(Fitted<M>),
    /// In progress at the interruption: its state after its last finished epoch.
    Resume(LoopState<M>),
    /// Not reached before: train from the beginning.
    Fresh,
}

struct Saved {
    header: FitHeader,
    model: Vec<u8>,
}

struct State {
    dir: PathBuf,
    /// Index of the next optimisation to start.
    next: usize,
    /// Finished optimisations read back from disk, by index.
    finished: BTreeMap<usize, Saved>,
    /// The optimisation in progress at the interruption.
    current: Option<(EpochHeader, Vec<Vec<u8>>)>,
    /// Epoch records written so far.
    records: usize,
    /// The MD5 of the records written so far, line by line as they are written.
    records_hash: md5::Md5,
    /// The MD5 of the records the last checkpoint before the interruption counted.
    records_md5: Option<String>,
    augmenter: Option<Arc<Augmenter>>,
    /// Augmentation position to restore once replay is over.
    pending_aug: Option<u128>,
    /// Training seconds of the attempts before this one.
    seconds_before: f64,
    started: std::time::Instant,
}

/// The checkpoints of one run (shared by reference; interior mutability).
pub struct Checkpoints {
    state: Mutex<State>,
    failed: FailedWrite,
}

/// A write of the run that failed outside the checkpoints (such as an epoch record):
/// the run stops with it at the end of the epoch, before the next checkpoint.
#[derive(Clone, Default)]
pub struct FailedWrite(Arc<Mutex<Option<AntError>>>);

impl FailedWrite {
    /// Report a failed write (the first one is kept).
    pub fn set(&self, e: AntError) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(e);
    }

    fn take(&self) -> Option<AntError> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Checkpoints {
    /// Checkpoints for a new run in `dir` (anything there from an earlier run is removed).
    pub fn create(dir: &Path) -> Result<Checkpoints> {
        Self::create_with(dir, &[])
    }

    /// [`Checkpoints::create`], with `files` (name, bytes) in `dir` from the moment it
    /// exists: the directory appears whole, with them, or not at all.
    pub fn create_with(dir: &Path, files: &[(&str, &[u8])]) -> Result<Checkpoints> {
        remove_dir_atomic(dir)?;
        create_dir_atomic(dir, files)?;
        Ok(Self::with_state(dir, BTreeMap::new(), None))
    }

    /// Where failed writes of the run's other files are reported, to stop the run.
    pub fn failed_writes(&self) -> FailedWrite {
        self.failed.clone()
    }

    /// Whether `dir` holds the checkpoint of at least one finished epoch.
    pub fn has_progress(dir: &Path) -> bool {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name == CURRENT || (name.starts_with("fit-") && name.ends_with(".ckpt"))
            })
        })
    }

    /// Checkpoints of an interrupted run in `dir`, read back for resuming (none, when it
    /// was stopped before its first epoch ended: it then starts from the beginning).
    pub fn open(dir: &Path) -> Result<Checkpoints> {
        let entries = std::fs::read_dir(dir).map_err(|e| AntError::io(dir, e))?;
        let mut finished = BTreeMap::new();
        for e in entries {
            let path = e.map_err(|e| AntError::io(dir, e))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("fit-") && name.ends_with(".ckpt") {
                let mut parts = read_container(&path)?;
                let header: FitHeader = parse_header(&path, &parts[0])?;
                if parts.len() != 2 {
                    return Err(AntError::data(&path, "expected 2 sections"));
                }
                let model = parts.pop().expect("2 sections");
                finished.insert(header.fit, Saved { header, model });
            }
        }
        // Replay needs every optimisation up to the last one: a gap means damage.
        if let Some((&last, _)) = finished.iter().next_back()
            && finished.len() != last + 1
        {
            return Err(AntError::data(
                dir,
                format!(
                    "checkpoints of {} optimisations missing",
                    last + 1 - finished.len()
                ),
            ));
        }
        let cp = dir.join(CURRENT);
        let current = if cp.exists() {
            let parts = read_container(&cp)?;
            let header: EpochHeader = parse_header(&cp, &parts[0])?;
            if parts.len() != 4 {
                return Err(AntError::data(&cp, "expected 4 sections"));
            }
            // A stale file from an optimisation that has since finished.
            (header.fit == finished.len()).then(|| (header, parts[1..].to_vec()))
        } else {
            None
        };
        Ok(Self::with_state(dir, finished, current))
    }

    fn with_state(
        dir: &Path,
        finished: BTreeMap<usize, Saved>,
        current: Option<(EpochHeader, Vec<Vec<u8>>)>,
    ) -> Checkpoints {
        let last_fin = finished.values().next_back().map(|s| &s.header);
        let (records, records_md5, pending_aug, seconds_before) = match (&current, last_fin) {
            (Some((h, _)), _) => (h.records, h.records_md5.clone(), h.aug_pos, h.seconds),
            (None, Some(h)) => (h.records, h.records_md5.clone(), h.aug_pos, h.seconds),
            (None, None) => (0, None, None, 0.0),
        };
        Checkpoints {
            failed: FailedWrite::default(),
            state: Mutex::new(State {
                dir: dir.to_path_buf(),
                next: 0,
                finished,
                current,
                records,
                records_hash: md5::Md5::default(),
                records_md5,
                augmenter: None,
                pending_aug,
                seconds_before,
                started: std::time::Instant::now(),
            }),
        }
    }

    /// Let checkpoints save and restore the position of `aug`'s random stream.
    pub fn track_augmenter(&self, aug: Option<Arc<Augmenter>>) {
        self.lock().augmenter = aug;
    }

    /// Seconds the attempts before this one had trained for, up to their last
    /// checkpoint (0 for a new run).
    pub fn seconds_before(&self) -> f64 {
        self.lock().seconds_before
    }

    /// Epoch records written before the interruption (the lines of records.jsonl to keep).
    pub fn records(&self) -> usize {
        self.lock().records
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("checkpoint lock")
    }

    /// Start the next optimisation; `model` is its freshly initialised module (the
    /// structure that saved weights are loaded into).
    pub fn begin<M: Module>(&self, model: &M) -> Start<M> {
        let mut s = self.lock();
        let i = s.next;
        s.next += 1;
        if let Some(saved) = s.finished.remove(&i) {
            let h = &saved.header;
            match load_module(model.clone(), saved.model) {
                Ok(m) => {
                    return Start::Replay(Fitted {
                        model: m,
                        valid_nll: f64::from_bits(h.valid_nll_bits),
                        valid_metric: f64::from_bits(h.valid_metric_bits),
                        epochs: h.epochs,
                        improved: h.improved,
                    });
                }
                Err(e) => {
                    tracing::warn!(
                        "checkpoint of optimisation {i} unreadable ({e}); training it again"
                    );
                    return Start::Fresh;
                }
            }
        }
        // Replay is over: the streams continue from where the interrupted run left them.
        if let Some(pos) = s.pending_aug.take()
            && let Some(a) = &s.augmenter
        {
            a.set_stream_pos(pos);
        }
        if let Some((h, parts)) = s.current.take()
            && h.fit == i
        {
            let [m, b, o] = <[Vec<u8>; 3]>::try_from(parts).expect("3 sections");
            let res = (|| -> std::result::Result<LoopState<M>, StateError> {
                let model_l = load_module(model.clone(), m)?;
                let best = if h.has_best {
                    Some(load_module(model.clone(), b)?)
                } else {
                    None
                };
                let optim = Adam::from_bytes(adam(), &o)
                    .map_err(|e| StateError::Optimiser(e.to_string()))?;
                Ok(LoopState {
                    model: model_l,
                    best,
                    optim,
                    epoch: h.epoch,
                    best_nll: f64::from_bits(h.best_nll_bits),
                    best_metric: f64::from_bits(h.best_metric_bits),
                    since_best: h.since_best,
                })
            })();
            match res {
                Ok(r) => return Start::Resume(r),
                Err(e) => tracing::warn!(
                    "checkpoint of the epoch in progress unreadable ({e}); restarting that optimisation"
                ),
            }
        }
        Start::Fresh
    }

    /// Count one epoch record (a line of records.jsonl, `record` as written there); a
    /// write reported failed since the last one (see [`Checkpoints::failed_writes`]) is
    /// returned instead.
    pub fn record_written(&self, record: &crate::observe::EpochRecord) -> Result<()> {
        use md5::Digest;
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut s = self.lock();
        s.records += 1;
        s.records_hash.update(record.line().as_bytes());
        Ok(())
    }

    /// The MD5 of the first [`Checkpoints::records`] lines of records.jsonl as the run
    /// wrote them (`None`: a checkpoint of a version that did not record it).
    pub fn records_md5(&self) -> Option<String> {
        self.lock().records_md5.clone()
    }

    /// Continues the records' MD5 from the lines a resumed run keeps.
    pub fn records_kept(&self, kept: &[u8]) {
        use md5::Digest;
        let mut s = self.lock();
        s.records_hash = md5::Md5::default();
        s.records_hash.update(kept);
    }

    /// Save the state after an epoch of the optimisation in progress.
    pub fn save_epoch<M: Module>(&self, state: &LoopState<M>) -> Result<()> {
        let s = self.lock();
        let header = EpochHeader {
            fit: s.next - 1,
            epoch: state.epoch,
            best_nll_bits: state.best_nll.to_bits(),
            best_metric_bits: state.best_metric.to_bits(),
            since_best: state.since_best,
            has_best: state.best.is_some(),
            records: s.records,
            records_md5: Some(s.records_md5_now()),
            aug_pos: s.aug_pos(),
            seconds: s.seconds(),
        };
        save(&s.dir.join(CURRENT), &header, || {
            let b = match &state.best {
                Some(b) => module_bytes(b)?,
                None => vec![],
            };
            let o = state.optim.into_bytes();
            Ok(vec![module_bytes(&state.model)?, b, o])
        })
    }

    /// Save the outcome of the optimisation that just ended.
    pub fn finish<M: Module>(&self, f: &Fitted<M>) -> Result<()> {
        let s = self.lock();
        let i = s.next - 1;
        let header = FitHeader {
            fit: i,
            valid_nll_bits: f.valid_nll.to_bits(),
            valid_metric_bits: f.valid_metric.to_bits(),
            epochs: f.epochs,
            improved: f.improved,
            records: s.records,
            records_md5: Some(s.records_md5_now()),
            aug_pos: s.aug_pos(),
            seconds: s.seconds(),
        };
        save(&s.dir.join(format!("fit-{i:05}.ckpt")), &header, || {
            Ok(vec![module_bytes(&f.model)?])
        })
    }
}

impl State {
    fn aug_pos(&self) -> Option<u128> {
        self.augmenter.as_ref().map(|a| a.stream_pos())
    }

    fn seconds(&self) -> f64 {
        self.seconds_before + self.started.elapsed().as_secs_f64()
    }

    /// The hex MD5 of the records written so far.
    fn records_md5_now(&self) -> String {
        use md5::Digest;
        let digest = self.records_hash.clone().finalize();
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Write `header` and the sections `parts` makes to `path` (atomically). A failure is
/// an error naming the file; the file written before stays as it was.
fn save<H: Serialize>(
    path: &Path,
    header: &H,
    parts: impl FnOnce() -> std::result::Result<Vec<Vec<u8>>, StateError>,
) -> Result<()> {
    let sections = (|| -> std::result::Result<Vec<Vec<u8>>, StateError> {
        let mut sections = vec![serde_json::to_vec(header)?];
        sections.extend(parts()?);
        Ok(sections)
    })()
    .map_err(|e| AntError::model(format!("{}: cannot encode the checkpoint: {e}", path.display())))?;
    let refs: Vec<&[u8]> = sections.iter().map(Vec::as_slice).collect();
    write_container(path, &refs)
}

/// Why a checkpoint could not be encoded or read back (a checkpoint that cannot be read
/// back is warned about: a resumed run trains that part again).
#[derive(Debug, thiserror::Error)]
enum StateError {
    #[error("weights: {0}")]
    Weights(String),
    #[error("weights do not match the module (missing {missing:?}, errors {errors:?})")]
    Mismatch {
        missing: Vec<String>,
        errors: Vec<String>,
    },
    #[error("optimiser state: {0}")]
    Optimiser(String),
    #[error("header: {0}")]
    Header(#[from] serde_json::Error),
}

fn module_bytes<M: Module>(m: &M) -> std::result::Result<Vec<u8>, StateError> {
    // Burnpack keeps parameter ids, which the optimiser's state is keyed by.
    let mut store = BurnpackStore::from_bytes(None);
    let weights = |e: &dyn std::fmt::Display| StateError::Weights(e.to_string());
    m.save_into(&mut store).map_err(|e| weights(&e))?;
    Ok(store.get_bytes().map_err(|e| weights(&e))?.to_vec())
}

fn load_module<M: Module>(mut m: M, bytes: Vec<u8>) -> std::result::Result<M, StateError> {
    let mut store = BurnpackStore::from_bytes(Some(Bytes::from_bytes_vec(bytes)));
    let res = m
        .load_from(&mut store)
        .map_err(|e| StateError::Weights(e.to_string()))?;
    if !res.missing.is_empty() || !res.errors.is_empty() {
        return Err(StateError::Mismatch {
            missing: res.missing.iter().map(|m| format!("{m:?}")).collect(),
            errors: res.errors.iter().map(|e| format!("{e:?}")).collect(),
        });
    }
    Ok(m)
}

fn parse_header<T: serde::de::DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| AntError::data(path, format!("bad checkpoint header: {e}")))
}

/// Sections, each prefixed by its length, after a magic number.
fn write_container(path: &Path, parts: &[&[u8]]) -> Result<()> {
    let mut out = Vec::with_capacity(16 + parts.iter().map(|p| p.len() + 8).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(parts.len() as u64).to_le_bytes());
    for p in parts {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p);
    }
    write_atomic(path, &out)
}

fn read_container(path: &Path) -> Result<Vec<Vec<u8>>> {
    // A checkpoint is never a device or an endless stream (its size is the model's).
    let bytes = crate::store::atomic::read_bounded(path, u64::MAX).map_err(|e| AntError::io(path, e))?;
    let bad = |m: &str| AntError::data(path, format!("corrupt checkpoint: {m}"));
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(bad("not an ant checkpoint"));
    }
    let word = |at: usize| -> Option<u64> {
        bytes
            .get(at..at + 8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
    };
    let n = word(8).ok_or_else(|| bad("truncated"))?;
    if n > 16 {
        return Err(bad("too many sections"));
    }
    let mut at = 16;
    let mut parts = vec![];
    for _ in 0..n {
        let len = word(at).ok_or_else(|| bad("truncated"))? as usize;
        at += 8;
        let part = at
            .checked_add(len)
            .and_then(|end| bytes.get(at..end))
            .ok_or_else(|| bad("truncated"))?;
        parts.push(part.to_vec());
        at += len;
    }
    if at != bytes.len() || parts.is_empty() {
        return Err(bad("trailing bytes"));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_round_trips_and_refuses_damage() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.ckpt");
        write_container(&p, &[b"{}", b"", b"abc"]).unwrap();
        let parts = read_container(&p).unwrap();
        assert_eq!(parts, vec![b"{}".to_vec(), vec![], b"abc".to_vec()]);
        let bytes = std::fs::read(&p).unwrap();
        for cut in [0, 7, 16, bytes.len() - 1] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let e = read_container(&p).unwrap_err().to_string();
            assert!(e.contains("x.ckpt"), "{e}");
        }
    }
}
