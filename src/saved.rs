//! A model directory as `ant` saves it: one tree ([`Ant`]) or an ensemble of trees
//! ([`Ensemble`]). Commands and front ends load a directory as a [`SavedModel`] and match on
//! it once, where the two differ; [`prune`] and [`describe`] work on either.

use std::path::Path;

use burn::prelude::Device;

use crate::data::Dataset;
use crate::data::tabular::FileReading;
use crate::ensemble::{Ensemble, EnsembleFile, MemberState, is_ensemble, member_dir, member_state};
use crate::error::{AntError, Result};
use crate::model::Ant;

/// A saved model: one tree, or an ensemble of them.
#[derive(Clone, Debug)]
// Loaded once per command, never moved in bulk: boxing the tree would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum SavedModel {
    Single(Ant),
    Ensemble(Ensemble),
}

impl SavedModel {
    /// The model saved in `dir`: an ensemble when it holds `ensemble.json`.
    pub fn load(dir: &Path, device: &Device) -> Result<SavedModel> {
        Ok(if is_ensemble(dir) {
            SavedModel::Ensemble(Ensemble::load(dir, device)?)
        } else {
            SavedModel::Single(Ant::load(dir, device)?)
        })
    }

    /// [`SavedModel::load`], the model then reading table files as `reading` says (how
    /// every command that reads files for a saved model loads it); a model that reads
    /// no table refuses such options.
    pub fn load_reading(dir: &Path, device: &Device, reading: FileReading) -> Result<SavedModel> {
        let mut model = SavedModel::load(dir, device)?;
        let given = reading.delimiter.is_some() || reading.skip_rows.is_some();
        if given && model.first().meta().provenance.target.is_none() {
            let msg = "reads no table with a target column (images, SARCOS files, or rows of several outputs fitted in memory): --delimiter and --skip-rows do not apply";
            return Err(AntError::data(dir, msg));
        }
        match &mut model {
            SavedModel::Single(a) => a.read_files_as(reading),
            SavedModel::Ensemble(e) => e.read_files_as(reading),
        }
        Ok(model)
    }

    /// The trees: one, or the ensemble's members in order.
    pub fn trees(&self) -> &[Ant] {
        match self {
            SavedModel::Single(a) => std::slice::from_ref(a),
            SavedModel::Ensemble(e) => e.members(),
        }
    }

    /// The tree whose records say how data is read and which rows are the test rows
    /// (the members of an ensemble share them).
    pub fn first(&self) -> &Ant {
        &self.trees()[0]
    }

    /// The test rows of the data at `path` (see [`Ant::test_rows`]).
    pub fn test_rows(&self, path: &Path) -> Result<(Dataset, Option<String>)> {
        self.first().test_rows(path)
    }

    /// `report.json`'s scores of the model on `test`.
    pub fn report(&self, test: &Dataset) -> Result<serde_json::Value> {
        Ok(match self {
            SavedModel::Single(a) => crate::run::report(a, &a.evaluate(test)?),
            SavedModel::Ensemble(e) => e.report(&e.evaluate(test)?),
        })
    }

    /// The tree's outline, or a line naming the ensemble.
    pub fn outline(&self) -> String {
        match self {
            SavedModel::Single(a) => a.tree().topology.outline(),
            SavedModel::Ensemble(e) => format!("ensemble of {} members\n", e.members().len()),
        }
    }
}

/// What `ant prune` prunes: the model in `model`, trained on `data` (tested on
/// `test_data` when given, else on what it records), without the subtrees that fewer
/// than `min_reach` of its validation rows reach, into `out` (`force`: replace a model
/// there).
pub struct PruneJob<'a> {
    pub model: &'a Path,
    pub data: &'a Path,
    pub test_data: Option<&'a Path>,
    pub min_reach: f64,
    pub out: &'a Path,
    pub force: bool,
}

/// `ant prune`: the pruned model saved into `job.out` with a `prune.json` per tree (an
/// ensemble: each member into `out/member-K`). `out` is checked first and locked while
/// written. Returns the summary (nodes and parameters removed, scores before and after)
/// and a warning when the test rows could not be read (their scores are then null).
pub fn prune(
    job: &PruneJob,
    device: &Device,
    reading: FileReading,
) -> Result<(serde_json::Value, Option<String>)> {
    let inputs: Vec<&Path> = std::iter::once(job.data).chain(job.test_data).collect();
    crate::store::outputs::check_prune_out(job.model, &inputs, job.out, job.force)?;
    // Held while the pruned model is written: two prunes into one directory would mix
    // one's tree.json with the other's weights.
    let _lock = crate::run::DirLock::take(job.out, false)?;
    crate::store::outputs::check_prune_out(job.model, &inputs, job.out, job.force)?;
    match SavedModel::load_reading(job.model, device, reading)? {
        SavedModel::Single(m) => prune_tree(&m, job, job.out),
        SavedModel::Ensemble(ens) => {
            let pruned = prune_members(&ens, job);
            if pruned.is_err() {
                take_back_ensemble(job.out, ens.members().len());
            }
            pruned
        }
    }
}

/// Each member of `ens` pruned into `out/member-K`, then `ensemble.json`.
fn prune_members(ens: &Ensemble, job: &PruneJob) -> Result<(serde_json::Value, Option<String>)> {
    let (mut members, mut warning) = (Vec::new(), None);
    for (k, m) in ens.members().iter().enumerate() {
        let (mut summary, w) = prune_tree(m, job, &member_dir(job.out, k))?;
        summary["member"] = serde_json::json!(k);
        members.push(summary);
        // The members share their test rows: one warning says it for all.
        warning = warning.or(w);
    }
    ens.file().save(job.out)?;
    let summary = serde_json::json!({ "min_reach": job.min_reach, "members": members });
    Ok((summary, warning))
}

/// Takes back a pruned ensemble whose saving failed: its `ensemble.json` first (then no
/// ensemble is there), then its members. An ensemble is never written over another,
/// so nothing of the user's was there; plain removals, which a full disk allows.
fn take_back_ensemble(out: &Path, members: usize) {
    use crate::store::file_names::ENSEMBLE_FILE;
    if std::fs::remove_file(out.join(ENSEMBLE_FILE)).is_ok() || !out.join(ENSEMBLE_FILE).exists() {
        for k in 0..members {
            let _ = crate::store::atomic::remove_dir_atomic(&member_dir(out, k));
        }
        let _ = crate::store::manifest::remove(out, ENSEMBLE_FILE);
    }
}

/// Saves `model` into `dir` as `ant train --out` does, holding the directory's lock: a
/// directory that holds a model is refused unless `overwrite` (`--force`), and then
/// what described the old model (its records, report, pruning summary, grown model)
/// goes before the switch; an ensemble, a run or files `ant` did not write there are
/// refused either way.
pub fn save(model: &Ant, dir: &Path, overwrite: bool) -> Result<()> {
    use crate::model::save_model;
    use crate::store::outputs::{Records, Saved, check_model_dir};
    check_model_dir(dir, Saved::Model, overwrite, &[])?;
    let _lock = crate::run::DirLock::take(dir, false)?;
    check_model_dir(dir, Saved::Model, overwrite, &[])?;
    save_model(model, None, dir, Records::Old)
}

/// Prunes `model` (trained on `data`) into `out` with its `prune.json`; returns it.
/// One tree of `job` pruned into `out`. Its summary is made before anything is saved,
/// and written with the model: a save that fails after the model's switch takes the
/// model back, so that `out` never holds a pruned model without its `prune.json`.
fn prune_tree(
    model: &Ant,
    job: &PruneJob,
    out: &Path,
) -> Result<(serde_json::Value, Option<String>)> {
    let rows = model.recorded_rows(job.data, job.test_data)?;
    let (pruned, report) = model.pruned(&rows.valid, job.min_reach)?;
    let (v0, v1) = (model.evaluate(&rows.valid)?, pruned.evaluate(&rows.valid)?);
    // Without test rows (a model fitted through the library, a test file that cannot
    // be read) those scores are null.
    let scores = |m: &Ant| rows.test.as_ref().map(|t| m.evaluate(t)).transpose();
    let (t0, t1) = (scores(model)?, scores(&pruned)?);
    let multi = |e: &Option<crate::model::Evaluation>| e.as_ref().map(|e| e.multi_path);
    let single = |e: &Option<crate::model::Evaluation>| e.as_ref().map(|e| e.single_path);
    let summary = serde_json::json!({
        "min_reach": job.min_reach,
        "removed": report.removed,
        "nodes_removed": report.nodes_removed,
        "params_removed": report.params_removed,
        "params_before": model.tree().topology.num_params(),
        "params_after": pruned.tree().topology.num_params(),
        "valid_multi_path_before": v0.multi_path, "valid_multi_path_after": v1.multi_path,
        "test_multi_path_before": multi(&t0), "test_multi_path_after": multi(&t1),
        "test_single_path_before": single(&t0), "test_single_path_after": single(&t1),
    });
    let json =
        serde_json::to_string_pretty(&summary).map_err(|e| AntError::model(e.to_string()))?;
    let saved = crate::model::save_model(&pruned, None, out, crate::store::outputs::Records::Old)
        .and_then(|()| {
            crate::store::manifest::write(
                out,
                crate::store::file_names::PRUNE_FILE,
                json.as_bytes(),
            )
        });
    if let Err(e) = saved {
        crate::model::take_back_save(&pruned, out, &[crate::store::file_names::PRUNE_FILE]);
        return Err(e);
    }
    Ok((summary, rows.warning))
}

/// `ant inspect`: the tree in `dir`, one line per node; or the ensemble's spec and
/// each member (trained, still training or missing).
pub fn describe(dir: &Path) -> Result<String> {
    use crate::viz::inspect::inspect_text;
    let device = crate::default_device();
    if !is_ensemble(dir) {
        let model = Ant::load(dir, &device)?;
        let t = &model.tree().topology;
        return Ok(format!("{}{}", baseline_line(&model), inspect_text(t)));
    }
    let file = EnsembleFile::open(dir)?;
    let mut text = format!(
        "ensemble of {} members: preset {}, data {}, seed {}\n",
        file.size,
        file.preset,
        file.spec.data.path.display(),
        file.spec.params.seed
    );
    for k in 0..file.size {
        let mdir = member_dir(dir, k);
        let head = format!(
            "\nmember {k} (seed {}, {})",
            file.member_seeds[k],
            mdir.display()
        );
        match member_state(dir, k) {
            MemberState::Trained => {
                let model = Ant::load(&mdir, &device)?;
                let t = &model.tree().topology;
                let (nodes, leaves, params) = (t.nodes.len(), t.leaves().len(), t.num_params());
                // What `eval` would refuse is said here too (a foreign model in member-0
                // is not listed as the member).
                let foreign = match crate::ensemble::check_member(&file, k, &model, None) {
                    Ok(()) => String::new(),
                    Err(why) => format!("not this ensemble's member: {why}\n"),
                };
                text.push_str(&format!(
                    "{head}: {nodes} nodes, {leaves} leaves, {params} params\n{foreign}{}{}",
                    baseline_line(&model),
                    inspect_text(t)
                ));
            }
            MemberState::Started => text.push_str(&format!(
                "{head}: not finished (resume with `ant train --resume {}`)\n",
                mdir.display()
            )),
            MemberState::Missing => text.push_str(&format!("{head}: missing\n")),
        }
    }
    Ok(text)
}

/// `baseline NAME ...` for a baseline's model, nothing for an ANT.
fn baseline_line(model: &Ant) -> String {
    match model.meta().config.baseline {
        Some(b) => format!("baseline {b}: a fixed architecture, trained without growth\n"),
        None => String::new(),
    }
}
