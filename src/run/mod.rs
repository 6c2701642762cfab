//! Run directories: what training writes into its output directory, and how an
//! interrupted run continues from there. Any front end (such as the CLI) gets resumable
//! runs by going through [`Run`]:
//!
//! ```text
//! OUT/tree.json, OUT/model-<md5>.safetensors   the model (Ant::save: one unit)
//! OUT/records.jsonl        one EpochRecord per line, appended as it ends
//! OUT/report.json          test scores, accounting, training seconds
//! OUT/checkpoint/          while training: run.json + per-epoch state
//! ```
//!
//! Every file is written atomically, and a write that fails (a full disk) stops the run
//! with an error naming the file: the model saved before and the last checkpoint stay,
//! so the run resumes once the problem is fixed. The checkpoint directory appears with
//! its `run.json` and disappears as one step.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

use crate::data::Dataset;
use crate::data::source::{TestSide, load_source};
use crate::data::split::Member;
use crate::data::tabular::TargetSpec;
use crate::error::{AntError, Result};
use crate::model::{Ant, Evaluation, TestSplit, missing_classes_warning};
use crate::named::Named;
use crate::observe::{EpochRecord, Observer};
use crate::params::AntParams;
use crate::store::atomic::{append_line, remove_dir_atomic, remove_stale_temps};
pub use crate::store::lock::DirLock;
use crate::store::lock::{lock, lock_checked};
use crate::train::{Checkpoints, FailedWrite};

mod file;
use crate::data::row_checks::{
    check_read_as_sarcos, check_two_classes, warn_of_test_classes_not_trained,
    warn_of_test_rows_trained_on,
};
internal_use!(file::{DataChecksums, RunFile});

pub(crate) use crate::store::file_names::{
    CHECKPOINT_DIR, LOCK_FILE, RECORDS_FILE, REPORT_FILE, RUN_FILE,
};
/// The most bytes `records.jsonl` is read as (a few hundred bytes an epoch).
pub(crate) const MAX_RECORDS_BYTES: u64 = 1 << 30;
/// Inside the checkpoint folder of a run that replaces a model (`--force`): that
/// model's `records.jsonl`, put back if the run diverges and the model stays.
const REPLACED_RECORDS: &str = "replaced-records.jsonl";
/// The most bytes `run.json` is read as.
const MAX_RUN_FILE_BYTES: u64 = 16 << 20;

/// What [`Run::start`] does with a directory that holds a finished model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Refuse: the model there is kept.
    Refuse,
    /// Replace it when the new run saves its model.
    Replace,
}

/// Where a run's samples come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataSpec {
    /// A data file or directory (see [`crate::data::source`]).
    #[serde(with = "crate::path_json")]
    pub path: PathBuf,
    /// A separate test file (else the data's own test files, else `test_fraction`).
    #[serde(with = "crate::path_json::option", default)]
    pub test_data: Option<PathBuf>,
    /// Seeded fraction of the file held out as the test set when it has none.
    pub test_fraction: f64,
    /// How a table is read (target column and task).
    pub target: Option<TargetSpec>,
    /// Use only the first N training samples.
    pub train_limit: Option<usize>,
    /// The size an image folder's images are resized to (`--image-size HxW`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size: Option<crate::data::image_size::ImageSize>,
}

/// The fraction of a data file held out as its test set when it has no test file.
pub const DEFAULT_TEST_FRACTION: f64 = 0.2;

/// Everything a run is started with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub data: DataSpec,
    /// Read as recorded: options newer than the file take what ran then.
    #[serde(deserialize_with = "crate::params::recorded")]
    pub params: AntParams,
    /// Set when the run trains one member of an ensemble (`params.seed` is then the
    /// member's seed, and the test split the ensemble's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Member>,
}

/// A run that owns its output directory: data loaded, checkpoints ready.
pub struct Run {
    out: PathBuf,
    /// Locked while the run lives: a second run into the same directory is refused.
    _lock: File,
    spec: RunSpec,
    source: TestSide,
    train: Dataset,
    checkpoints: Checkpoints,
    resumed: bool,
    started: Instant,
}

/// A finished run: the saved model and its test scores.
pub struct Finished {
    pub model: Ant,
    pub evaluation: Evaluation,
    /// Training seconds over every attempt of the run (each up to its last checkpoint).
    pub seconds: f64,
}

impl Run {
    /// A new run of `spec` into `out`. Refuses a directory that holds an interrupted
    /// run, one that another run is using, and (with [`Existing::Refuse`]) one that holds
    /// a finished model; bad parameters and unreadable data are errors before anything
    /// is written.
    pub fn start(out: &Path, spec: RunSpec, existing: Existing) -> Result<Run> {
        let cwd = std::env::current_dir().map_err(|e| AntError::io(".", e))?;
        // A member joins its ensemble as `ensemble.json` records it (checked so when
        // the ensemble started).
        if spec.member.is_none() {
            crate::store::outputs::check_not_a_part(out)?;
            check_new_run(&spec, &cwd)?;
        }
        Self::start_from(out, spec, existing, cwd)
    }

    /// [`Run::start`] with the spec's relative paths taken from `cwd` (an ensemble
    /// trains a missing member from the directory it was started in).
    pub(crate) fn start_from(
        out: &Path,
        spec: RunSpec,
        existing: Existing,
        cwd: PathBuf,
    ) -> Result<Run> {
        check_not_an_input(out, &spec, &cwd)?;
        // A directory in use is refused first: its checkpoints are that run's.
        let held = if out.is_dir() {
            Some(lock_checked(out, false)?)
        } else {
            None
        };
        if let Err(e) = check_free(out, existing) {
            // Refused: leave the directory as it was (the lock is ours, so no run uses it).
            if held.is_some() {
                let _ = std::fs::remove_file(out.join(LOCK_FILE));
            }
            return Err(e);
        }
        let (source, train) = match load(&spec, &cwd) {
            Ok(loaded) => loaded,
            Err(e) => {
                // Nothing can train: leave the directory as it was.
                if held.is_some() {
                    let _ = std::fs::remove_file(out.join(LOCK_FILE));
                }
                return Err(e);
            }
        };
        crate::store::atomic::create_dir_all(out)?;
        let lock = match held {
            Some(l) => l,
            None => {
                let l = lock(out)?;
                // Again under the lock: a run may have started meanwhile.
                check_free(out, existing)?;
                l
            }
        };
        remove_stale_temps(out, crate::store::file_names::is_model_owned)?;
        let ckdir = out.join(CHECKPOINT_DIR);
        let checksums = Some(DataChecksums::of_run(&source, &train, &spec, &cwd));
        let file = RunFile {
            spec: spec.clone(),
            cwd,
            checksums,
        };
        let json = serde_json::to_vec_pretty(&file).map_err(|e| AntError::model(e.to_string()))?;
        // The records of a model this run replaces: the run starts its own.
        let replaced = match existing {
            Existing::Replace if out.join(crate::model::TREE_FILE).is_file() => {
                crate::store::atomic::read_bounded(&out.join(RECORDS_FILE), MAX_RECORDS_BYTES).ok()
            }
            _ => None,
        };
        let mut files: Vec<(&str, &[u8])> = vec![(RUN_FILE, &json)];
        if let Some(r) = &replaced {
            files.push((REPLACED_RECORDS, r));
        }
        // The checkpoint directory exists only with its run.json: it can be resumed.
        let checkpoints = Checkpoints::create_with(&ckdir, &files)?;
        Ok(Run {
            out: out.to_path_buf(),
            _lock: lock,
            spec,
            source,
            train,
            checkpoints,
            resumed: false,
            started: Instant::now(),
        })
    }

    /// The interrupted run in `out`, ready to continue where its checkpoints end.
    pub fn resume(out: &Path) -> Result<Run> {
        crate::model::check_is_a_folder(out)?;
        let ckdir = out.join(CHECKPOINT_DIR);
        let path = ckdir.join(RUN_FILE);
        let text = crate::store::atomic::read_bounded(&path, MAX_RUN_FILE_BYTES).map_err(|e| {
            if out.join(crate::model::TREE_FILE).exists() && !ckdir.exists() {
                AntError::data(
                    out,
                    "holds a finished model and no interrupted run (no checkpoint/): nothing to resume",
                )
            } else if e.kind() == std::io::ErrorKind::NotFound {
                let what = format!(
                    "holds no interrupted run (no {}/{RUN_FILE}): nothing to resume",
                    CHECKPOINT_DIR
                );
                AntError::data(out, what)
            } else {
                AntError::io(&path, e)
            }
        })?;
        let file: RunFile = serde_json::from_slice(&text)
            .map_err(|e| AntError::data(&path, format!("not a run file: {e}")))?;
        let lock = lock(out)?;
        remove_stale_temps(out, crate::store::file_names::is_model_owned)?;
        // Everything in the checkpoint folder is the run's.
        remove_stale_temps(&ckdir, |_| true)?;
        let (source, train) = load(&file.spec, &file.cwd)?;
        if let Some(started) = &file.checksums {
            let now = DataChecksums::of_run(&source, &train, &file.spec, &file.cwd);
            check_same_data(out, &file, started, &now)?;
        }
        let checkpoints = Checkpoints::open(&ckdir)?;
        Ok(Run {
            out: out.to_path_buf(),
            _lock: lock,
            spec: file.spec,
            source,
            train,
            checkpoints,
            resumed: true,
            started: Instant::now(),
        })
    }

    pub fn spec(&self) -> &RunSpec {
        &self.spec
    }

    pub fn out(&self) -> &Path {
        &self.out
    }

    /// The samples growth and refinement use (validation rows included).
    pub fn train_set(&self) -> &Dataset {
        &self.train
    }

    pub fn test_set(&self) -> &Dataset {
        &self.source.test
    }

    /// The observer that appends every epoch to `records.jsonl`: a new run starts the
    /// file afresh; a resumed one keeps the records up to its last checkpoint.
    pub fn records_log(&self) -> Result<RecordsLog> {
        let path = self.out.join(RECORDS_FILE);
        if self.resumed && self.checkpoints.records() > 0 {
            // Records that are not the run's cannot be fixed by resuming again: the
            // error says what can be done instead.
            let kept = self.kept_records(&path).map_err(|why| {
                let msg = format!(
                    "{why}: restore the file as the run wrote it, or train anew into another directory"
                );
                AntError::data(&path, msg)
            })?;
            self.checkpoints.records_kept(kept.as_bytes());
            crate::store::manifest::write(&self.out, RECORDS_FILE, kept.as_bytes())
                .map_err(|e| stopped(&self.out, e))?;
        }
        self.open_records_log().map_err(|e| stopped(&self.out, e))
    }

    /// The records a resumed run keeps: the lines its last checkpoint counted, which
    /// must be those it wrote (their MD5 is in the checkpoint); lines after them (the
    /// epochs since, which the run trains again) must be epoch records. Else why not.
    fn kept_records(&self, path: &Path) -> std::result::Result<String, String> {
        let keep = self.checkpoints.records();
        let bytes = crate::store::atomic::read_bounded(path, MAX_RECORDS_BYTES)
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_string())?;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if lines.len() < keep {
            return Err(format!(
                "has {} records, the checkpoint counted {keep}",
                lines.len()
            ));
        }
        let kept: String = lines[..keep].concat();
        let md5 = crate::store::checksum::md5_hex(kept.as_bytes());
        if self.checkpoints.records_md5().is_some_and(|m| m != md5) {
            return Err(format!(
                "its first {keep} records are not those the run wrote (a line changed, added or removed)"
            ));
        }
        // A last line without its newline is a write cut short. Whole lines after the
        // checkpoint's: the run records an epoch, then checkpoints it, so a kill leaves
        // one at most, an epoch record.
        let whole: Vec<&&str> = lines[keep..].iter().filter(|l| l.ends_with('\n')).collect();
        let later = whole
            .iter()
            .position(|l| serde_json::from_str::<EpochRecord>(l).is_err());
        if let Some(k) = later.or((whole.len() > 1).then_some(1)) {
            return Err(format!(
                "line {} is no epoch record of the run",
                keep + k + 1
            ));
        }
        Ok(kept)
    }

    fn open_records_log(&self) -> Result<RecordsLog> {
        let path = self.out.join(RECORDS_FILE);
        if !(self.resumed && self.checkpoints.records() > 0) {
            crate::store::manifest::write(&self.out, RECORDS_FILE, b"")?;
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| AntError::io(&path, e))?;
        Ok(RecordsLog {
            file,
            path,
            failed: self.checkpoints.failed_writes(),
        })
    }

    /// Train (or continue training), then save the model and `report.json` and remove
    /// the checkpoints, which have served their purpose.
    pub fn train(self, device: &Device, observer: &mut dyn Observer) -> Result<Finished> {
        let Run {
            out,
            spec,
            source,
            train,
            checkpoints,
            started,
            ..
        } = self;
        let ckdir = out.join(CHECKPOINT_DIR);
        warn_of_data(&spec, &source, &train, observer);
        let res = (|| {
            // The run's data goes to training by value: it is dropped once split.
            let data = std::borrow::Cow::Owned(train);
            let fitted = Ant::fit_stages(spec.params, data, device, observer, &checkpoints);
            let (mut model, mut grown) = match fitted {
                // Resuming would diverge the same way: nothing there is worth keeping.
                Err(e @ AntError::Diverged { .. }) => {
                    drop(checkpoints);
                    // A model this run was to replace stays: so do its records.
                    let saved = ckdir.join(REPLACED_RECORDS);
                    if out.join(crate::model::TREE_FILE).is_file()
                        && let Ok(records) =
                            crate::store::atomic::read_bounded(&saved, MAX_RECORDS_BYTES)
                    {
                        crate::store::manifest::write(&out, RECORDS_FILE, &records)?;
                    } else if out.join(RECORDS_FILE).is_file() {
                        // The diverged run's own records stay, stamped whole: no run
                        // appends to them any more.
                        crate::store::manifest::stamp_log(&out, RECORDS_FILE)?;
                    }
                    remove_dir_atomic(&ckdir)?;
                    // No run goes on here: its lock says nothing any more.
                    crate::store::atomic::remove_file(&out.join(LOCK_FILE))?;
                    return Err(e);
                }
                other => other?,
            };
            for m in std::iter::once(&mut model).chain(grown.as_mut()) {
                let p = &mut m.meta_mut().provenance;
                p.data = spec.data.path.display().to_string();
                p.test_split = source.split.clone();
                p.train_limit = spec.data.train_limit;
                p.target = source.target.clone();
                p.member = spec.member;
                p.image_size = spec.data.image_size;
                m.meta_mut().class_names = source.class_names.clone();
            }
            // The run's checkpoints stand until after the final model's switch, so a
            // kill anywhere in the save resumes and saves again.
            let records = crate::store::outputs::Records::Ours;
            crate::model::save_model(&model, grown.as_ref(), &out, records)?;
            let evaluation = model.evaluate(&source.test)?;
            let seconds = checkpoints.seconds_before() + started.elapsed().as_secs_f64();
            let mut report = report(&model, &evaluation);
            report["train_seconds"] = serde_json::json!(seconds);
            let text = serde_json::to_string_pretty(&report)
                .map_err(|e| AntError::model(e.to_string()))?;
            // The records are whole: stamped as they are, no line is added to them now.
            crate::store::manifest::stamp_log(&out, RECORDS_FILE)?;
            crate::store::manifest::write(&out, REPORT_FILE, text.as_bytes())?;
            drop(checkpoints);
            remove_dir_atomic(&ckdir)?;
            crate::store::atomic::remove_file(&out.join(LOCK_FILE))?;
            Ok(Finished {
                model,
                evaluation,
                seconds,
            })
        })();
        res.map_err(|e| stopped(&out, e))
    }
}

/// Says what the run's data may mislead about: test rows without a class the training
/// rows have, or a `--target N` whose number also names another column.
fn warn_of_data(spec: &RunSpec, source: &TestSide, train: &Dataset, observer: &mut dyn Observer) {
    let data_path = Path::new(&spec.data.path);
    let warnings = [
        missing_classes_warning(train, &source.test, "test"),
        source
            .target
            .as_ref()
            .and_then(|t| t.index_also_a_name(data_path)),
    ];
    for msg in warnings.iter().flatten() {
        observer.warning(msg);
    }
}

/// An error after the run in `out` saved its state (a failed write, say): it can go on.
fn stopped(out: &Path, e: AntError) -> AntError {
    match e {
        AntError::Diverged { .. } | AntError::Stopped { .. } => e,
        e if out.join(CHECKPOINT_DIR).is_dir() => AntError::Stopped {
            dir: out.to_path_buf(),
            source: Box::new(e),
        },
        e => e,
    }
}

/// The run's inputs (`--data`, `--test-data`, `--init-from`, relative to `cwd`) are never
/// its output `out`: a CNN it starts from replaced under it could never be resumed from.
fn check_not_an_input(out: &Path, spec: &RunSpec, cwd: &Path) -> Result<()> {
    use crate::store::outputs::{Input, Kind, check};
    let data = cwd.join(&spec.data.path);
    let test = spec.data.test_data.as_ref().map(|t| cwd.join(t));
    let start = spec.params.init_from().map(|d| cwd.join(d));
    let inputs: Vec<Input> = std::iter::once(Input::Data(&data))
        .chain(test.as_deref().map(Input::Data))
        .chain(start.as_deref().map(Input::Model))
        .collect();
    check(out, Kind::Dir, &inputs).map(drop)
}

/// Refuse `out` if it holds an interrupted run, or a finished model that is to be kept.
fn check_free(out: &Path, existing: Existing) -> Result<()> {
    // The grown model a new run replaces must be all ant's.
    crate::store::outputs::check_grown_dir(out)?;
    let ckdir = out.join(CHECKPOINT_DIR);
    // Only a run that finished an epoch has something to lose.
    if Checkpoints::has_progress(&ckdir) {
        return Err(AntError::data(
            out,
            format!(
                "holds an interrupted run: continue it with `ant train --resume {}`, or delete {} to start over",
                out.display(),
                ckdir.display()
            ),
        ));
    }
    if out.join(crate::store::file_names::ENSEMBLE_FILE).exists() {
        return Err(AntError::data(
            out,
            "holds an ensemble (ensemble.json), which would hide a model trained here: choose another directory, or train a member with --ensemble N --member K",
        ));
    }
    if existing == Existing::Refuse && out.join(crate::model::TREE_FILE).exists() {
        return Err(AntError::data(
            out,
            "holds a trained model: choose another directory, or replace it (--force)",
        ));
    }
    Ok(())
}

/// Refuse to resume the run in `out` (started as `file` says, on data with the checksums
/// `started`) on data that has changed since (`now`): it would not continue that run.
fn check_same_data(
    out: &Path,
    file: &RunFile,
    started: &DataChecksums,
    now: &DataChecksums,
) -> Result<()> {
    let d = &file.spec.data;
    if let (Some(was), Some(dir)) = (&started.start, file.spec.params.init_from()) {
        let is = now.start.as_deref().unwrap_or("none: no model there");
        if Some(was) != now.start.as_ref() {
            return Err(AntError::data(
                file.cwd.join(dir),
                format!(
                    "changed since the run started from it (--init-from; checksum of its tree.json {was}, now {is}): resuming would not continue that run; restore it, or start a new run (delete {})",
                    out.join(CHECKPOINT_DIR).display()
                ),
            ));
        }
    }
    let (path, what, was, is) = if started.train != now.train {
        (&d.path, "training", &started.train, &now.train)
    } else if started.test != now.test {
        (
            d.test_data.as_ref().unwrap_or(&d.path),
            "test",
            &started.test,
            &now.test,
        )
    } else {
        return Ok(());
    };
    Err(AntError::data(
        file.cwd.join(path),
        format!(
            "gives other {what} samples than when the run started (checksum {was}, now {is}): the file changed, or the settings in checkpoint/run.json that pick its rows (--seed, --train-limit, --test-fraction) did; resuming would not continue that run; restore them, or start a new run (delete {})",
            out.join(CHECKPOINT_DIR).display()
        ),
    ))
}

/// What a new run (or ensemble) is refused that one started before goes on with: an
/// option that would do nothing, a table read as SARCOS for want of `--target`. The
/// parameters' own errors come first (a clash names both options).
pub(crate) fn check_new_run(spec: &RunSpec, cwd: &Path) -> Result<()> {
    let cfg = spec.params.clone().check()?;
    spec.params.check_has_effect()?;
    check_read_as_sarcos(
        cfg.preset,
        spec.data.target.as_ref(),
        &cwd.join(&spec.data.path),
    )
}

/// Check the parameters, then read the data (paths relative to `cwd`) and check that
/// training can start on it: what would stop training before its first epoch stops
/// it here, before anything is written.
fn load(spec: &RunSpec, cwd: &Path) -> Result<(TestSide, Dataset)> {
    let cfg = spec.params.clone().check()?;
    let d = &spec.data;
    if d.train_limit == Some(0) {
        return Err(AntError::invalid("train_limit", "must be at least 1"));
    }
    let test_data = d.test_data.as_ref().map(|p| cwd.join(p));
    // Every member of an ensemble is tested on the ensemble's test split.
    let seed = spec.member.map_or(spec.params.seed, |m| m.run_seed);
    let (all, mut source) = load_source(
        &cwd.join(&d.path),
        test_data.as_deref(),
        d.test_fraction,
        seed,
        d.target.as_ref(),
        d.image_size,
    )?
    .into_parts();
    // Provenance names the test file by its absolute path (not made canonical: a
    // link stays the link given), so that `ant prune` finds it from any directory.
    if let (TestSplit::File { path }, Some(given)) = (&mut source.split, &d.test_data) {
        *path = cwd.join(given).display().to_string();
    }
    let train = match d.train_limit {
        // The first rows kept where they are: a data set is not copied to limit it.
        Some(n) => all.first_for_training(n),
        None => all,
    };
    let train = match spec.member {
        Some(m) => m.rows(&train),
        None => train,
    };
    // Messages about classes then name them by their labels.
    let train = match source.class_names.as_deref() {
        Some(names) => train.with_class_names(names),
        None => train,
    };
    warn_of_test_rows_trained_on(&source, &train, d.test_data.as_deref());
    check_two_classes(
        &train,
        source.class_names.as_deref(),
        d.train_limit,
        &cwd.join(&d.path),
    )?;
    warn_of_test_classes_not_trained(&source, &train, d.train_limit);
    let input = crate::train::check_training_data(&cfg, &train)?;
    // Checked here too, to name the file: a model that would not load is never trained.
    let norm = crate::normalise::Normalisation::from_data(&train, input, cfg.image_norm);
    norm.check_scales().map_err(|why| {
        let msg = format!("its values cannot be standardised in f32: {why}");
        AntError::data(cwd.join(&d.path), msg)
    })?;
    if let Some(start) = crate::model::start_model(&cfg.params(), &Device::flex())? {
        crate::train::check_start(&start, &cfg, &train)?;
    }
    check_memory(&cfg, &train)?;
    // A bad budget in the environment is refused before the run writes anything.
    crate::train::growth_cache_budget(0)?;
    Ok((source, train))
}

/// Refuses a width whose layers cannot fit in the memory this process may use (its
/// address-space limit, `ulimit -v`, less what it already uses, and the machine's
/// memory and swap): allocating them would abort the process. Counted low (one FC
/// transformer of `width` inputs and outputs: its weights, their gradient, Adam's two
/// moments and one temporary copy, in f32), so that only a run that cannot fit is
/// refused.
fn check_memory(cfg: &crate::params::TrainConfig, train: &Dataset) -> Result<()> {
    let flat = train.sample_shape.len() == 1;
    if !flat
        || !matches!(
            cfg.preset,
            crate::preset::Preset::Sarcos | crate::preset::Preset::Tabular
        )
    {
        return Ok(()); // Image presets do not use the width.
    }
    let (w, d) = (cfg.width as u64, train.sample_shape[0] as u64);
    let need = w.saturating_mul(w.max(d)).saturating_mul(4 * 5);
    let Some((limit, what)) = crate::os::memory_limit() else {
        return Ok(());
    };
    if need <= limit {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let reason = format!(
        "{w} needs at least {:.1} GiB for one {w}-wide layer (weights, gradients, Adam's moments), more than the {:.1} GiB {what}: choose a smaller width",
        gib(need),
        gib(limit)
    );
    Err(AntError::invalid("width", reason))
}

/// Appends every epoch record to `records.jsonl` as one JSON line; a line that cannot
/// be written stops the run (at the end of its epoch, before the next checkpoint).
pub struct RecordsLog {
    file: File,
    path: PathBuf,
    failed: FailedWrite,
}

impl Observer for RecordsLog {
    fn epoch(&mut self, r: &EpochRecord) {
        let line = r.line();
        if let Err(e) = append_line(&mut self.file, &self.path, line.trim_end_matches('\n')) {
            self.failed.set(e);
        }
    }
}

/// The report's names of the multi-path, single-path and least-likely-path scores.
pub(crate) fn score_keys(task: crate::task::Task) -> (&'static str, &'static str, &'static str) {
    if task.is_classification() {
        (
            "multi_path_error",
            "single_path_error",
            "least_likely_path_error",
        )
    } else {
        ("multi_path_mse", "single_path_mse", "least_likely_path_mse")
    }
}

/// `report.json`: test scores (error or MSE by task), accounting and the tree's size.
pub fn report(ant: &Ant, ev: &Evaluation) -> serde_json::Value {
    let t = &ant.tree().topology;
    let (mk, sk, lk) = score_keys(ant.task());
    serde_json::json!({
        "task": ev.task,
        mk: ev.multi_path,
        sk: ev.single_path,
        lk: ev.least_likely_path,
        "params_total": ev.params_total,
        "params_single_path_avg": ev.params_single_path_avg,
        "flops_multi_path": ev.flops_multi_path,
        "flops_single_path": ev.flops_single_path,
        "nodes": t.nodes.len(),
        "leaves": t.leaves().len(),
        "routers": t.routers(),
        "transformers": t.transformers(),
        "depth": t.depth(),
        "test_samples": ev.test_samples,
        "leaf_reach": ev.leaf_reach,
        "preset": ant.meta().preset.name(),
        "baseline": ant.meta().config.baseline,
        "valid_nll": ant.meta().valid_nll,
        "valid_metric": ant.meta().valid_metric,
    })
}
