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

mod file;
mod train;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::prelude::Device;

use crate::data::Dataset;
use crate::data::split::Member;
use crate::error::{AntError, Result};
use crate::model::{Ant, Evaluation, Inference, TestSplit, argmax_rows, score};
use crate::named::Named;
use crate::run::{DEFAULT_TEST_FRACTION, DataSpec, RunSpec};
use crate::task::Task;
internal_use!(file::{EnsembleFile, MemberState});

/// Whether `dir` holds an ensemble (its `ensemble.json`).
pub fn is_ensemble(dir: &Path) -> bool {
    dir.join(crate::store::file_names::ENSEMBLE_FILE).is_file()
}
pub(crate) use file::{member_dir, member_state};
pub use train::{resume_members, train_members};

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
    file: EnsembleFile,
    members: Vec<Ant>,
}

impl Ensemble {
    /// `ensemble.json`'s description of the ensemble.
    pub(crate) fn file(&self) -> &EnsembleFile {
        &self.file
    }

    /// The members, member 0 first.
    pub fn members(&self) -> &[Ant] {
        &self.members
    }

    /// Reads the table files given to the members as `reading` says
    /// ([`Ant::read_files_as`]).
    pub fn read_files_as(&mut self, reading: crate::data::tabular::FileReading) {
        self.members
            .iter_mut()
            .for_each(|m| m.read_files_as(reading));
    }

    /// The members, taken out of the ensemble.
    pub fn into_members(self) -> Vec<Ant> {
        self.members
    }

    /// The ensemble whose members are `members` (trained apart, e.g. from Python, as
    /// members 0 to n-1 of one ensemble); its data path is read from `cwd`.
    pub fn from_members(members: Vec<Ant>, cwd: PathBuf) -> Result<Ensemble> {
        let n = members.len();
        let not_members = || {
            let reason = format!(
                "must be members 0 to {} of one ensemble, each once (as `ant train --ensemble {n} --member K` trains them); these {n} models are not",
                n.max(1) - 1
            );
            AntError::invalid("members", reason)
        };
        let first = members.first().ok_or_else(not_members)?;
        let run_seed = first
            .meta()
            .provenance
            .member
            .ok_or_else(not_members)?
            .run_seed;
        for (k, m) in members.iter().enumerate() {
            let member = m.meta().provenance.member.ok_or_else(not_members)?;
            if (member.index, member.size, member.run_seed) != (k, n, run_seed) {
                return Err(not_members());
            }
        }
        let file = EnsembleFile::new(run_spec(first, run_seed), n, cwd)?;
        // What loading the saved ensemble will ask of its members, asked now.
        for (k, m) in members.iter().enumerate() {
            check_member(&file, k, m, (k > 0).then_some(first))
                .map_err(|why| AntError::invalid("members", why))?;
        }
        Ok(Ensemble::of(file, members))
    }

    /// Saves the ensemble into `dir` (`ensemble.json` and `member-K/`), as `ant train
    /// --ensemble N` leaves it, holding `dir`'s lock.
    pub fn save(&self, dir: &Path) -> Result<()> {
        // As `ant train --ensemble` checks its --out: no model, ensemble or run there.
        let saved = crate::store::outputs::Saved::Ensemble;
        crate::store::outputs::check_model_dir(dir, saved, false, &[])?;
        crate::store::atomic::create_dir_all(dir)?;
        let _lock = crate::run::DirLock::take(dir, false)?;
        for (k, m) in self.members.iter().enumerate() {
            m.save(member_dir(dir, k))?;
        }
        // Last: a directory is an ensemble once all its members are there.
        self.file.save(dir)
    }

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
            check_member(&file, k, &ant, members.first()).map_err(|msg| AntError::data(&d, msg))?;
            members.push(ant);
        }
        Ok(Ensemble::of(file, members))
    }

    /// The ensemble of `members`, which say once, together, that inputs are on another
    /// scale (not once a member).
    fn of(file: EnsembleFile, mut members: Vec<Ant>) -> Ensemble {
        let said = crate::model::ScaleSaid::default();
        for m in &mut members {
            m.share_scale_warning(&said);
        }
        Ensemble { file, members }
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

/// The run of the ensemble `first` is a member of, as `first` records it.
fn run_spec(first: &Ant, run_seed: u64) -> RunSpec {
    let meta = first.meta();
    let mut params = meta.config.params();
    params.seed = run_seed;
    RunSpec {
        data: DataSpec {
            path: PathBuf::from(&meta.provenance.data),
            test_data: None,
            test_fraction: DEFAULT_TEST_FRACTION,
            target: meta.provenance.target.clone(),
            train_limit: None,
            image_size: meta.provenance.image_size,
        },
        params,
        member: None,
    }
}

/// Member `k` must be what `ensemble.json` says, and fit `first`; else why not.
pub(crate) fn check_member(
    file: &EnsembleFile,
    k: usize,
    ant: &Ant,
    first: Option<&Ant>,
) -> std::result::Result<(), String> {
    let meta = &ant.meta();
    let wrong = |msg: String| Err(msg);
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
        assert_ne!(a.x(), b.x());
        assert_eq!(a.x(), m(0).rows(&d).x());
        // The same rows, with their own labels.
        let mut sorted = a.x().into_owned();
        sorted.sort_by(f32::total_cmp);
        assert_eq!(d.x(), sorted);
        let Targets::Classes { labels, .. } = &a.targets else {
            unreachable!()
        };
        assert!(a.x().iter().zip(labels).all(|(x, l)| *x as u32 % 2 == *l));
    }

    #[test]
    fn mean_of_sums() {
        let mut s = Vec::new();
        add(&mut s, &[1.0, 2.0]);
        add(&mut s, &[3.0, 6.0]);
        assert_eq!(mean(s, 2), vec![2.0, 4.0]);
    }
}
