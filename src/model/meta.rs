//! `tree.json`'s description of a model, and its checks.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::split::{Provenance, TestSplit, ValidSplit};
use crate::error::{AntError, Result};
use crate::normalise::Normalisation;
use crate::observe::Decision;
use crate::params::TrainConfig;
use crate::preset::Preset;
use crate::spec::Shape;
use crate::task::Task;
use crate::tree::Topology;

/// Everything in `tree.json` but the topology (the tree's, [`crate::tree::Topology`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    pub format: String,
    pub preset: Preset,
    pub task: Task,
    pub normalisation: Normalisation,
    pub class_names: Option<Vec<String>>,
    pub config: TrainConfig,
    pub provenance: Provenance,
    pub valid_nll: f64,
    /// Validation error % or MSE of the kept model.
    pub valid_metric: f64,
    pub decisions: Vec<Decision>,
    /// What a Python estimator knew of its data beyond the model's own needs (absent
    /// for models of the command line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimator: Option<EstimatorRecord>,
}

/// What `pickle` keeps of a fitted scikit-learn estimator and a model directory must
/// keep too, so that `ant.load` gives back the same estimator.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EstimatorRecord {
    /// The kind of the labels, which `class_names` spell as text (classifiers).
    #[serde(default)]
    pub labels: Option<LabelKind>,
    /// The columns' names of a fitted DataFrame (`feature_names_in_`).
    #[serde(default)]
    pub feature_names: Option<Vec<String>>,
    /// Regression targets were given as `(n, outputs)`, one output included.
    #[serde(default)]
    pub y_2d: bool,
    /// The labels' NumPy dtype (`uint8`, `float32`, `object`, ...), so that they read
    /// back as they went in (classifiers fitted from Python).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
}

/// The kind of a classifier's labels: how its class names read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelKind {
    Bool,
    Int,
    Float,
    /// Strings, kept as written ('01' stays '01').
    Text,
}

impl ModelMeta {
    /// What a table layout recorded by an older build, or by a fit in memory, leaves to
    /// be inferred: a model fitted in memory, or trained with a test file, judges every
    /// file's first row as a fresh file's; one fitted on a DataFrame reads by names.
    ///
    /// A model fitted on a DataFrame reads tables by its columns' names, as a model of a
    /// headed table does (else `ant eval` and `ant predict` would read a file's columns
    /// by position, whatever its header says): the names join its table layout, with
    /// the target after them, named `target` (as scikit-learn's data frames name it;
    /// any one other column stands for it, see [`crate::data::columns::by_names`]).
    /// Names that a table could not tell apart leave the layout as it is.
    pub(crate) fn complete_table_layout(&mut self) {
        // A model fitted in memory read no file; one trained with a test file read two,
        // the test file fresh: later files are judged as those were.
        let fresh = matches!(
            self.provenance.test_split,
            TestSplit::Unknown | TestSplit::File { .. }
        );
        if let Some(spec) = self.provenance.target.as_mut() {
            spec.fresh = fresh;
        }
        self.name_fitted_columns();
    }

    fn name_fitted_columns(&mut self) {
        use crate::data::columns::name_key;
        let names = self
            .estimator
            .as_ref()
            .and_then(|e| e.feature_names.as_ref());
        let (Some(names), Some(spec)) = (names, self.provenance.target.as_mut()) else {
            return;
        };
        if spec.columns.is_some() || spec.index != Some(names.len()) {
            return;
        }
        let keys: std::collections::HashSet<String> = names.iter().map(|n| name_key(n)).collect();
        let target = (0..)
            .map(|k| match k {
                0 => "target".to_string(),
                k => format!("target_{k}"),
            })
            .find(|t| !keys.contains(t))
            .expect("a free name");
        if keys.len() == names.len() {
            spec.columns = Some(names.iter().cloned().chain([target]).collect());
        }
    }

    /// How the validation rows were chosen among the training rows.
    pub fn valid_split(&self) -> ValidSplit {
        self.provenance
            .valid_split
            .clone()
            .unwrap_or(ValidSplit::Tail {
                fraction: self.config.valid_fraction,
            })
    }

    /// Whatever `tree.json` says must be possible: a file edited by hand (or damaged)
    /// is one clear error, never a panic later.
    pub(crate) fn check(&self, topology: &Topology, path: &Path) -> Result<()> {
        self.check_contents(topology)
            .map_err(|why| AntError::data(path, format!("{why}")))
    }

    fn check_contents(
        &self,
        topology: &Topology,
    ) -> std::result::Result<(), Box<dyn std::error::Error>> {
        topology.validate()?;
        self.config.params().check()?;
        let (n, task) = (&self.normalisation, self.task);
        let channels = match topology.input {
            Shape::Image { c, .. } => c,
            Shape::Flat { d } => d,
        };
        let y_dim = match task {
            Task::Regression { dim } => dim,
            Task::Classification { .. } => 0,
        };
        let columns = [
            ("x_mean", &n.x_mean, channels),
            ("x_std", &n.x_std, channels),
            ("y_mean", &n.y_mean, y_dim),
            ("y_std", &n.y_std, y_dim),
        ];
        for (name, v, want) in columns {
            if v.len() != want {
                return Err(format!(
                    "normalisation {name} has {} values, the model needs {want}",
                    v.len()
                )
                .into());
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(format!("normalisation {name} is not finite").into());
            }
        }
        if n.x_std.iter().chain(&n.y_std).any(|s| *s <= 0.0) {
            return Err("normalisation: a standard deviation is not positive".into());
        }
        n.check_scales()?;
        let shapes = topology.shapes();
        for leaf in topology.leaves() {
            let node = &topology.nodes[leaf];
            let out = node.module().out_shape(shapes[leaf]);
            if out.map(|s| s.numel()) != Some(task.outputs()) {
                return Err(format!(
                    "node {leaf}'s solver does not give the task's {} outputs",
                    task.outputs()
                )
                .into());
            }
        }
        crate::data::check_class_names(self.class_names.as_deref(), task)?;
        if let (Some(t), Shape::Flat { d }) = (&self.provenance.target, topology.input) {
            t.check(d)?;
        }
        if let TestSplit::Fraction { fraction, .. } = self.provenance.test_split
            && !(fraction > 0.0 && fraction < 1.0)
        {
            return Err(format!("test fraction {fraction} is not in (0, 1)").into());
        }
        if let Some(fraction) = self.valid_split().fraction()
            && !(fraction > 0.0 && fraction < 1.0)
        {
            return Err(format!("validation fraction {fraction} is not in (0, 1)").into());
        }
        Ok(())
    }
}
