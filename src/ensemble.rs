//! Ensembles of ANTs (the paper's Tables 7 and 8): N members, each trained with its own
//! seed on its own seeded order of the training rows (so on its own random validation
//! rows), predicting with the mean of their predictive distributions.
//!
//! ```text
//! DIR/ensemble.json                 size, the shared spec (preset, data, its MD5,
//!                                   parameters, the run's seed), the members' seeds
//! DIR/member-0 ... DIR/member-{N-1} ordinary run directories (each resumable)
//! ```
//!
//! Member K is a function of the spec and K alone, so members trained one after the
//! other, in separate processes or on separate machines make the same ensemble.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

pub use crate::data::split::Member;
use crate::data::{Dataset, file_md5};
use crate::error::{AntError, Result};
use crate::model::{Ant, Evaluation, Inference, TREE_FILE, TestSplit, argmax_rows, score};
use crate::named::Named;
use crate::persist::write_atomic;
use crate::preset::{Preset, Task};
use crate::run::{CHECKPOINT_DIR, RUN_FILE, RunSpec};

pub use crate::layout::ENSEMBLE_FILE;
/// The most members an ensemble may have (the paper's have 8): a count from a flag or
/// a file is checked against it before anything is allocated for it.
pub const MAX_MEMBERS: usize = 1000;
/// The most bytes an `ensemble.json` of [`MAX_MEMBERS`] members can take, with room.
const MAX_FILE_BYTES: u64 = 16 << 20;
const FORMAT: &str = crate::layout::ENSEMBLE_FORMAT;

/// Member `k`'s run directory.
pub fn member_dir(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("member-{k}"))
}

/// Whether `dir` holds an ensemble (its `ensemble.json`).
pub fn is_ensemble(dir: &Path) -> bool {
    dir.join(ENSEMBLE_FILE).is_file()
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
pub fn member_state(dir: &Path, k: usize) -> MemberState {
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
    pub data_md5: Option<String>,
    /// The ensemble's run: data, parameters, and in `params.seed` the run's seed.
    pub spec: RunSpec,
    /// The directory the spec's relative paths start from.
    #[serde(with = "crate::run::os_path")]
    pub cwd: PathBuf,
    /// Member K's seed, derived from the run's seed and K.
    pub member_seeds: Vec<u64>,
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
        let text = crate::persist::read_bounded(&path, MAX_FILE_BYTES)
            .map_err(|e| AntError::io(&path, e))?;
        let file: EnsembleFile = serde_json::from_slice(&text)
            .map_err(|e| AntError::data(&path, format!("not an ensemble file: {e}")))?;
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
        let json = serde_json::to_vec_pretty(self).map_err(|e| AntError::model(e.to_string()))?;
        write_atomic(&dir.join(ENSEMBLE_FILE), &json)
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
    pub fn member_spec(&self, k: usize) -> Result<RunSpec> {
        if k >= self.size {
            let reason = format!(
                "{k} is not a member of an ensemble of {} (members are numbered 0 to {})",
                self.size,
                self.size - 1
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
    pub fn matches_dir(&self, dir: &Path) -> Result<bool> {
        crate::outputs::check(dir, crate::outputs::Kind::Dir, &[])?;
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
        if there.spec != self.spec {
            return differs("other data options or training parameters".into());
        }
        Ok(true)
    }
}

/// Predictions of an ensemble: the mean of its members'.
#[derive(Clone, Debug, PartialEq)]
pub struct EnsemblePredictions {
    /// `[N,K]` row-major: mean class probabilities, or mean regression values.
    pub values: Vec<f32>,
    pub k: usize,
    /// `member_leaves[m][i]`: the leaf sample `i`'s greedy path reaches in member `m`.
    pub member_leaves: Vec<Vec<usize>>,
}

impl EnsemblePredictions {
    /// Arg-max class per sample (classification).
    pub fn classes(&self) -> Vec<usize> {
        argmax_rows(&self.values, self.k)
    }
}

/// Test scores of an ensemble and of each member.
#[derive(Clone, Debug, PartialEq)]
pub struct EnsembleEvaluation {
    /// Scores of the mean predictions; parameters and FLOPs summed over the members
    /// (`params_single_path_avg`: the sum of the members' averages); no `leaf_reach`.
    pub ensemble: Evaluation,
    pub members: Vec<Evaluation>,
}

/// A trained ensemble: every member loaded and checked against `ensemble.json`.
#[derive(Clone, Debug)]
pub struct Ensemble {
    pub file: EnsembleFile,
    pub members: Vec<Ant>,
}

impl Ensemble {
    /// Load the ensemble in `dir`: a member missing or unfinished, or one trained with
    /// another preset, data or seed than `ensemble.json` says, is an error naming it.
    pub fn load(dir: &Path, device: &Device) -> Result<Ensemble> {
        let file = EnsembleFile::open(dir)?;
        let mut members: Vec<Ant> = Vec::with_capacity(file.size);
        for k in 0..file.size {
            let d = member_dir(dir, k);
            let n = file.size;
            match member_state(dir, k) {
                MemberState::Trained => {}
                MemberState::Started => {
                    let msg = format!(
                        "member {k} of {n} has not finished training: let it finish, or resume it with `ant train --resume {}`",
                        d.display()
                    );
                    return Err(AntError::data(&d, msg));
                }
                MemberState::Missing => {
                    let msg = format!(
                        "member {k} of {n} is missing: train it with `ant train ... --ensemble {n} --member {k} --out {}`, or `ant train --resume {}`",
                        dir.display(),
                        dir.display()
                    );
                    return Err(AntError::data(&d, msg));
                }
            }
            let ant = Ant::load(&d, device)?;
            check_member(&file, k, &ant, members.first(), &d)?;
            members.push(ant);
        }
        Ok(Ensemble { file, members })
    }

    pub fn task(&self) -> Task {
        self.members[0].task()
    }

    /// The mean of the members' predictions of `data` (`mode` for each member).
    pub fn predict(&self, data: &Dataset, mode: Inference) -> Result<EnsemblePredictions> {
        let mut sum: Vec<f32> = Vec::new();
        let mut member_leaves = Vec::with_capacity(self.members.len());
        let mut k = 1;
        for m in &self.members {
            let p = m.predict(data, mode)?;
            add(&mut sum, &p.values);
            member_leaves.push(p.leaf);
            k = p.k;
        }
        Ok(EnsemblePredictions {
            values: mean(sum, self.members.len()),
            k,
            member_leaves,
        })
    }

    /// Scores of the mean predictions (multi-path, single-path, least-likely path) and
    /// of each member.
    pub fn evaluate(&self, data: &Dataset) -> Result<EnsembleEvaluation> {
        let (mut multi, mut single, mut least) = (Vec::new(), Vec::new(), Vec::new());
        let mut members = Vec::with_capacity(self.members.len());
        for m in &self.members {
            let p = m.predict_paths(data)?;
            add(&mut multi, &p.multi.values);
            add(&mut single, &p.single.values);
            add(&mut least, &p.least.values);
            members.push(m.evaluation_of(data, &p));
        }
        let n = self.members.len();
        let sum = |f: fn(&Evaluation) -> f64| members.iter().map(f).sum::<f64>();
        let ensemble = Evaluation {
            task: self.task().kind(),
            multi_path: score(data, &mean(multi, n)),
            single_path: score(data, &mean(single, n)),
            least_likely_path: score(data, &mean(least, n)),
            test_samples: data.len(),
            params_total: members.iter().map(|e| e.params_total).sum(),
            params_single_path_avg: sum(|e| e.params_single_path_avg),
            flops_multi_path: sum(|e| e.flops_multi_path),
            flops_single_path: sum(|e| e.flops_single_path),
            leaf_reach: BTreeMap::new(),
        };
        Ok(EnsembleEvaluation { ensemble, members })
    }

    /// `ant eval --json` of an ensemble: the usual keys, describing the ensemble (tree
    /// sizes summed over members, `depth` the deepest member's), `ensemble_size`, and
    /// `members`: each member's own report (as a single model's) with its index.
    pub fn report(&self, ev: &EnsembleEvaluation) -> serde_json::Value {
        let (mk, sk, lk) = crate::run::score_keys(self.task());
        let e = &ev.ensemble;
        let tops: Vec<_> = self.members.iter().map(|m| &m.tree().topology).collect();
        let total =
            |f: fn(&crate::tree::Topology) -> usize| tops.iter().map(|t| f(t)).sum::<usize>();
        let members: Vec<serde_json::Value> = self
            .members
            .iter()
            .zip(&ev.members)
            .enumerate()
            .map(|(k, (m, mev))| {
                let mut r = crate::run::report(m, mev);
                r["member"] = serde_json::json!(k);
                r
            })
            .collect();
        serde_json::json!({
            "task": e.task,
            "ensemble_size": self.members.len(),
            mk: e.multi_path,
            sk: e.single_path,
            lk: e.least_likely_path,
            "params_total": e.params_total,
            "params_single_path_avg": e.params_single_path_avg,
            "flops_multi_path": e.flops_multi_path,
            "flops_single_path": e.flops_single_path,
            "nodes": total(|t| t.nodes.len()),
            "leaves": total(|t| t.leaves().len()),
            "routers": total(|t| t.routers()),
            "transformers": total(|t| t.transformers()),
            "depth": tops.iter().map(|t| t.depth()).max().unwrap_or(0),
            "test_samples": e.test_samples,
            "preset": self.file.preset.name(),
            "baseline": self.file.spec.params.baseline,
            "members": members,
        })
    }
}

/// Member `k` (loaded from `dir`) must be what `ensemble.json` says, and fit `first`.
fn check_member(
    file: &EnsembleFile,
    k: usize,
    ant: &Ant,
    first: Option<&Ant>,
    dir: &Path,
) -> Result<()> {
    let meta = &ant.meta();
    let wrong = |msg: String| Err(AntError::data(dir, msg));
    if meta.preset != file.preset {
        let (a, b) = (meta.preset, file.preset);
        return wrong(format!(
            "member {k} has preset {a}, the ensemble (ensemble.json) preset {b}"
        ));
    }
    let prov = &meta.provenance;
    let data = file.spec.data.path.display().to_string();
    if prov.data != data {
        return wrong(format!(
            "member {k} was trained on {}, the ensemble (ensemble.json) on {data}",
            prov.data
        ));
    }
    if let (TestSplit::Fraction { file_md5, .. }, Some(md5)) = (&prov.test_split, &file.data_md5)
        && file_md5 != md5
    {
        return wrong(format!(
            "member {k} was trained on data of MD5 {file_md5}, the ensemble (ensemble.json) on {md5}"
        ));
    }
    if prov.member != Some(file.member(k)) {
        return wrong(format!(
            "was not trained as member {k} of this ensemble of {} (seed {})",
            file.size, file.spec.params.seed
        ));
    }
    if let Some(f) = first {
        let same = f.task() == ant.task()
            && f.tree().topology.input == ant.tree().topology.input
            && f.meta().class_names == meta.class_names
            && f.meta().provenance.test_split == prov.test_split;
        if !same {
            return wrong(format!(
                "member {k}'s task, inputs, classes or test split differ from member 0's"
            ));
        }
    }
    Ok(())
}

/// Adds `v` to `sum` element by element (`sum` empty: becomes `v`).
fn add(sum: &mut Vec<f32>, v: &[f32]) {
    if sum.is_empty() {
        sum.extend_from_slice(v);
    } else {
        sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
    }
}

fn mean(mut sum: Vec<f32>, n: usize) -> Vec<f32> {
    let n = n.max(1) as f32;
    sum.iter_mut().for_each(|s| *s /= n);
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Targets;

    #[test]
    fn members_have_distinct_seeds_and_orders() {
        let m = |index| Member {
            index,
            size: 2,
            run_seed: 7,
        };
        assert_ne!(m(0).seed(), m(1).seed());
        assert_eq!(m(1).seed(), crate::seed::member_seed(7, 1));
        let x: Vec<f32> = (0..50).map(|i| i as f32).collect();
        let labels = (0..50).map(|i| i % 2).collect();
        let targets = Targets::Classes {
            labels,
            n_classes: 2,
        };
        let d = Dataset::new(x, vec![1], targets).unwrap();
        let (a, b) = (m(0).rows(&d), m(1).rows(&d));
        assert_ne!(a.x, b.x);
        assert_eq!(a.x, m(0).rows(&d).x);
        // The same rows, with their own labels.
        let mut sorted = a.x.clone();
        sorted.sort_by(f32::total_cmp);
        assert_eq!(sorted, d.x);
        let Targets::Classes { labels, .. } = &a.targets else {
            unreachable!()
        };
        assert!(a.x.iter().zip(labels).all(|(x, l)| *x as u32 % 2 == *l));
    }

    #[test]
    fn mean_of_sums() {
        let mut s = Vec::new();
        add(&mut s, &[1.0, 2.0]);
        add(&mut s, &[3.0, 6.0]);
        assert_eq!(mean(s, 2), vec![2.0, 4.0]);
    }
}
