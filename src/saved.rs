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

/// `ant prune`: the model in `model` (trained on `data`) without the subtrees that
/// fewer than `min_reach` of its validation rows reach, saved into `out` with a
/// `prune.json` per tree (an ensemble: each member into `out/member-K`). `out` is
/// checked first (`force`: replace a model there) and locked while written. Returns
/// the summary: nodes and parameters removed, scores before and after.
pub fn prune(
    model: &Path,
    data: &Path,
    min_reach: f64,
    out: &Path,
    force: bool,
    device: &Device,
    reading: FileReading,
) -> Result<serde_json::Value> {
    crate::store::outputs::check_prune_out(model, data, out, force)?;
    // Held while the pruned model is written: two prunes into one directory would mix
    // one's tree.json with the other's weights.
    let _lock = crate::run::DirLock::take(out, false)?;
    crate::store::outputs::check_prune_out(model, data, out, force)?;
    match SavedModel::load_reading(model, device, reading)? {
        SavedModel::Single(m) => prune_tree(&m, data, min_reach, out),
        SavedModel::Ensemble(ens) => {
            let mut members = Vec::new();
            for (k, m) in ens.members().iter().enumerate() {
                let mut summary = prune_tree(m, data, min_reach, &member_dir(out, k))?;
                summary["member"] = serde_json::json!(k);
                members.push(summary);
            }
            ens.file().save(out)?;
            Ok(serde_json::json!({ "min_reach": min_reach, "members": members }))
        }
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
fn prune_tree(model: &Ant, data: &Path, min_reach: f64, out: &Path) -> Result<serde_json::Value> {
    let (valid, test) = model.recorded_rows(data)?;
    let (pruned, report) = model.pruned(&valid, min_reach)?;
    crate::model::save_model(&pruned, None, out, crate::store::outputs::Records::Old)?;
    let (v0, v1) = (model.evaluate(&valid)?, pruned.evaluate(&valid)?);
    // A model fitted through the library has no test rows: those scores are null.
    let scores = |m: &Ant| test.as_ref().map(|t| m.evaluate(t)).transpose();
    let (t0, t1) = (scores(model)?, scores(&pruned)?);
    let multi = |e: &Option<crate::model::Evaluation>| e.as_ref().map(|e| e.multi_path);
    let single = |e: &Option<crate::model::Evaluation>| e.as_ref().map(|e| e.single_path);
    let summary = serde_json::json!({
        "min_reach": min_reach,
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
    crate::store::manifest::write(out, crate::store::file_names::PRUNE_FILE, json.as_bytes())?;
    Ok(summary)
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
