//! A model directory as `ant` saves it: one tree ([`Ant`]) or an ensemble of trees
//! ([`Ensemble`]). Commands and front ends load a directory as a [`Model`] and match on
//! it once, where the two differ.

use std::path::Path;

use burn::prelude::Device;

use crate::data::Dataset;
use crate::ensemble::{Ensemble, is_ensemble};
use crate::error::Result;
use crate::model::Ant;

/// A saved model: one tree, or an ensemble of them.
#[non_exhaustive]
#[derive(Clone, Debug)]
// Loaded once per command, never moved in bulk: boxing the tree would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Model {
    Single(Ant),
    Ensemble(Ensemble),
}

impl Model {
    /// The model saved in `dir`: an ensemble when it holds `ensemble.json`.
    pub fn load(dir: &Path, device: &Device) -> Result<Model> {
        Ok(if is_ensemble(dir) {
            Model::Ensemble(Ensemble::load(dir, device)?)
        } else {
            Model::Single(Ant::load(dir, device)?)
        })
    }

    /// The trees: one, or the ensemble's members in order.
    pub fn trees(&self) -> &[Ant] {
        match self {
            Model::Single(a) => std::slice::from_ref(a),
            Model::Ensemble(e) => &e.members,
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
            Model::Single(a) => crate::run::report(a, &a.evaluate(test)?),
            Model::Ensemble(e) => e.report(&e.evaluate(test)?),
        })
    }

    /// The tree's outline, or a line naming the ensemble.
    pub fn outline(&self) -> String {
        match self {
            Model::Single(a) => a.tree().topology.outline(),
            Model::Ensemble(e) => format!("ensemble of {} members\n", e.members.len()),
        }
    }
}
