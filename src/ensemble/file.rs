//! `ensemble.json` and the member directories beside it: what every member is trained
//! with, and where each member's training stands.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Member;
use crate::error::{AntError, Result};
use crate::model::TREE_FILE;
use crate::preset::Preset;
use crate::run::{CHECKPOINT_DIR, RUN_FILE, RunSpec};
use crate::store::checksum::file_md5;
use crate::store::file_names::ENSEMBLE_FILE;

/// The most members an ensemble may have (the paper's have 8): a count from a flag or
/// a file is checked against it before anything is allocated for it.
pub(crate) const MAX_MEMBERS: usize = 1000;
/// The most bytes an `ensemble.json` of [`MAX_MEMBERS`] members can take, with room.
const MAX_FILE_BYTES: u64 = 16 << 20;
const FORMAT: &str = crate::store::file_names::ENSEMBLE_FORMAT;

/// Member `k`'s run directory.
pub(crate) fn member_dir(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("member-{k}"))
}

/// Where a member's training stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberState {
    /// Its model is saved.
    Trained,
    /// Its run started and has not finished (running, or interrupted: resumable).
    Started,
    /// Nothing is there yet.
    Missing,
}

/// Where member `k` of the ensemble in `dir` stands.
pub(crate) fn member_state(dir: &Path, k: usize) -> MemberState {
    let d = member_dir(dir, k);
    if d.join(CHECKPOINT_DIR).join(RUN_FILE).is_file() {
        MemberState::Started
    } else if d.join(TREE_FILE).is_file() {
        MemberState::Trained
    } else {
        MemberState::Missing
    }
}

/// `ensemble.json`: what every member is trained with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnsembleFile {
    pub format: String,
    /// Members.
    pub size: usize,
    pub preset: Preset,
    /// MD5 of the training data when it is one file (a directory has none).
    pub(crate) data_md5: Option<String>,
    /// The ensemble's run: data, parameters, and in `params.seed` the run's seed.
    pub spec: RunSpec,
    /// The directory the spec's relative paths start from.
    #[serde(with = "crate::path_json")]
    pub cwd: PathBuf,
    /// Member K's seed, derived from the run's seed and K.
    pub(crate) member_seeds: Vec<u64>,
    /// Whether each member starts from a CNN of its own (`--ensemble N --member K
    /// --init-from DIR`, the CNN trained as member K): `spec` then names no start
    /// (each member's run and model name theirs), and `spec.params.init_from` is, in
    /// memory, the start of the member this command trains.
    #[serde(default)]
    pub(crate) member_starts: bool,
}

impl EnsembleFile {
    /// The ensemble of `size` members of `spec` (paths relative to `cwd`).
    pub fn new(spec: RunSpec, size: usize, cwd: PathBuf) -> Result<EnsembleFile> {
        if size == 0 {
            return Err(AntError::invalid("ensemble", "must be at least 1"));
        }
        if size > MAX_MEMBERS {
            let reason = format!("must be at most {MAX_MEMBERS} (members of one ensemble)");
            return Err(AntError::invalid("ensemble", reason));
        }
        let data = cwd.join(&spec.data.path);
        // A missing file is left to the data loader, whose error says more.
        let data_md5 = if data.is_file() {
            Some(file_md5(&data)?)
        } else {
            None
        };
        let seed = spec.params.seed;
        Ok(EnsembleFile {
            format: FORMAT.into(),
            size,
            preset: spec.params.preset,
            data_md5,
            member_seeds: (0..size)
                .map(|k| crate::seed::member_seed(seed, k))
                .collect(),
            member_starts: spec.params.init_from.is_some(),
            spec: RunSpec {
                member: None,
                ..spec
            },
            cwd,
        })
    }

    /// The `ensemble.json` of `dir`.
    pub fn open(dir: &Path) -> Result<EnsembleFile> {
        let path = dir.join(ENSEMBLE_FILE);
        let text = crate::store::atomic::read_bounded(&path, MAX_FILE_BYTES)
            .map_err(|e| AntError::io(&path, e))?;
        let mut file: EnsembleFile = serde_json::from_slice(&text)
            .map_err(|e| AntError::data(&path, format!("not an ensemble file: {e}")))?;
        // A file that names a start (written when a member started from one) is a file
        // of members that start each from their own.
        if file.spec.params.init_from.take().is_some() {
            file.member_starts = true;
        }
        if file.format != FORMAT {
            let msg = format!("unknown format {:?}", file.format);
            return Err(AntError::data(&path, msg));
        }
        if file.size == 0 || file.size > MAX_MEMBERS || file.member_seeds.len() != file.size {
            let msg = format!(
                "its size {} is not a member count (1 to {MAX_MEMBERS}) matching its {} member seeds",
                file.size,
                file.member_seeds.len()
            );
            return Err(AntError::data(&path, msg));
        }
        let seeds: Vec<u64> = (0..file.size)
            .map(|k| crate::seed::member_seed(file.spec.params.seed, k))
            .collect();
        if file.size == 0 || file.member_seeds != seeds {
            let msg = "its size and member seeds do not follow from its spec (size at least 1)";
            return Err(AntError::data(&path, msg));
        }
        if file.preset != file.spec.params.preset {
            let msg = "its preset and its spec's preset differ";
            return Err(AntError::data(&path, msg));
        }
        Ok(file)
    }

    /// Write `ensemble.json` into `dir` (atomically).
    pub fn save(&self, dir: &Path) -> Result<()> {
        let mut file = self.clone();
        file.spec.params.init_from = None;
        let json = serde_json::to_vec_pretty(&file).map_err(|e| AntError::model(e.to_string()))?;
        crate::store::manifest::write(dir, ENSEMBLE_FILE, &json)
    }

    /// Member `k` (checked by the caller to be below the size).
    pub fn member(&self, k: usize) -> Member {
        Member {
            index: k,
            size: self.size,
            run_seed: self.spec.params.seed,
        }
    }

    /// The run that trains member `k`: the ensemble's, with the member's seed.
    pub(crate) fn member_spec(&self, k: usize) -> Result<RunSpec> {
        if k >= self.size {
            let reason = format!(
                "{k} is not a member of an ensemble of {} (members are numbered 0 to {})",
                self.size,
                self.size - 1
            );
            return Err(AntError::invalid("member", reason));
        }
        if self.member_starts && self.spec.params.init_from.is_none() {
            let reason = format!(
                "member {k} starts from a CNN of its own, which ensemble.json does not name \
                 (--init-from): train it with --ensemble {} --member {k} --init-from DIR",
                self.size
            );
            return Err(AntError::invalid("member", reason));
        }
        let m = self.member(k);
        let mut spec = self.spec.clone();
        spec.params.seed = m.seed();
        spec.member = Some(m);
        Ok(spec)
    }

    /// Whether `dir` already holds this ensemble (`Ok(false)`: no ensemble there yet).
    /// An ensemble of another size, preset, data or parameters, an `ensemble.json` that
    /// does not parse and a single model in `dir` are errors.
    pub(crate) fn matches_dir(&self, dir: &Path) -> Result<bool> {
        crate::store::outputs::check(dir, crate::store::outputs::Kind::Dir, &[])?;
        if !dir.join(ENSEMBLE_FILE).exists() {
            if dir.join(TREE_FILE).exists() {
                let msg = "holds a single model, not an ensemble: choose another directory";
                return Err(AntError::data(dir, msg));
            }
            return Ok(false);
        }
        let there = EnsembleFile::open(dir)?;
        let path = dir.join(ENSEMBLE_FILE);
        let differs = |what: String| {
            let msg = format!("this ensemble was made with {what}: members must share it");
            Err(AntError::data(&path, msg))
        };
        if there.size != self.size {
            return differs(format!("--ensemble {}, not {}", there.size, self.size));
        }
        if there.preset != self.preset {
            return differs(format!("preset {}, not {}", there.preset, self.preset));
        }
        if there.spec.data.path != self.spec.data.path {
            let (a, b) = (&there.spec.data.path, &self.spec.data.path);
            return differs(format!("data {}, not {}", a.display(), b.display()));
        }
        if there.data_md5 != self.data_md5 {
            let md5 = |m: &Option<String>| m.clone().unwrap_or_else(|| "none".into());
            let (a, b) = (md5(&there.data_md5), md5(&self.data_md5));
            return differs(format!("data of MD5 {a}, this data's is {b}"));
        }
        if there.member_starts != self.member_starts {
            return differs(match there.member_starts {
                true => "members each started from a CNN of its own (--init-from)".into(),
                false => "members trained from new modules (no --init-from)".into(),
            });
        }
        if let Some(what) = first_difference(&there.spec, &self.spec) {
            return differs(what);
        }
        Ok(true)
    }
}

/// The first option in which `there` (an ensemble's spec) and `here` differ, as
/// `--lr 0.001, not 0.01`; `None` when they agree. The start (`init_from`) is each
/// member's own and is not compared.
fn first_difference(there: &RunSpec, here: &RunSpec) -> Option<String> {
    let fields = |s: &RunSpec| {
        let mut s = s.clone();
        s.params.init_from = None;
        let v = serde_json::to_value(&s).unwrap_or_default();
        let part = |k: &str| match v.get(k) {
            Some(serde_json::Value::Object(m)) => m.clone().into_iter().collect::<Vec<_>>(),
            _ => vec![],
        };
        [part("data"), part("params")].concat()
    };
    let (a, b) = (fields(there), fields(here));
    let shown = |v: Option<&serde_json::Value>| match v {
        None | Some(serde_json::Value::Null) => "none".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    let keys: std::collections::BTreeSet<&String> = a.iter().chain(&b).map(|(k, _)| k).collect();
    let value = |f: &[(String, serde_json::Value)], k: &str| {
        f.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    };
    keys.into_iter()
        .find(|k| value(&a, k) != value(&b, k))
        .map(|k| {
            let flag = format!("--{}", k.replace('_', "-"));
            let (x, y) = (value(&a, k), value(&b, k));
            format!("{flag} {}, not {}", shown(x.as_ref()), shown(y.as_ref()))
        })
}
