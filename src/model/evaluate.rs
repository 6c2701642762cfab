//! Scores: test error or MSE along the three paths, and the paper's accounting of
//! parameters and FLOPs.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Ant, Inference, Predictions, argmax_rows};
use crate::data::{Dataset, Targets};
use crate::error::{AntError, Result};
use crate::task::TaskKind;

/// Error % (arg-max of each row of class probabilities) or MSE (original units) of
/// predictions `values` against `data`'s targets.
pub(crate) fn score(data: &Dataset, values: &[f32]) -> f64 {
    match &data.targets {
        Targets::Classes { labels, .. } => {
            let k = (values.len() / labels.len().max(1)).max(1);
            let wrong = argmax_rows(values, k)
                .iter()
                .zip(labels)
                .filter(|(a, b)| **a != **b as usize)
                .count();
            100.0 * wrong as f64 / data.len().max(1) as f64
        }
        Targets::Values { values: y, .. } => {
            let se: f64 = values
                .iter()
                .zip(y)
                .map(|(a, b)| ((a - b) as f64).powi(2))
                .sum();
            se / y.len().max(1) as f64
        }
    }
}

/// A model's predictions of one data set in the three ways [`Ant::evaluate`] scores.
pub(crate) struct PathPredictions {
    pub(crate) multi: Predictions,
    pub(crate) single: Predictions,
    pub(crate) least: Predictions,
}

/// Test-set scores of a model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    pub task: TaskKind,
    /// Error % (classification) or MSE (regression), multi-path.
    pub multi_path: f64,
    pub single_path: f64,
    /// Predicting with each sample's least likely leaf.
    pub(crate) least_likely_path: f64,
    pub test_samples: usize,
    pub params_total: usize,
    /// Parameters on the path each test sample uses, averaged.
    pub params_single_path_avg: f64,
    /// FLOPs per sample (see `crate::metrics`).
    pub flops_multi_path: f64,
    pub flops_single_path: f64,
    /// Test samples reaching each leaf under greedy single-path routing.
    pub leaf_reach: BTreeMap<String, usize>,
}

impl Ant {
    /// Test scores (multi-path, single-path, least-likely path) and the paper's
    /// accounting of parameters and FLOPs.
    pub fn evaluate(&self, data: &Dataset) -> Result<Evaluation> {
        let p = self.predict_paths(data)?;
        Ok(self.evaluation_of(data, &p))
    }

    /// The predictions [`Ant::evaluate`] scores (`data` must have targets and samples).
    pub(crate) fn predict_paths(&self, data: &Dataset) -> Result<PathPredictions> {
        self.check_data(data, true)?;
        if data.is_empty() {
            // No score at all, rather than a 0% error on nothing.
            return Err(AntError::param("there are no samples to evaluate"));
        }
        Ok(PathPredictions {
            multi: self.predict(data, Inference::MultiPath)?,
            single: self.predict(data, Inference::SinglePath)?,
            least: self.predict(data, Inference::LeastLikelyPath)?,
        })
    }

    /// Scores and accounting of predictions made by [`Ant::predict_paths`].
    pub(crate) fn evaluation_of(&self, data: &Dataset, p: &PathPredictions) -> Evaluation {
        let t = &self.tree.topology;
        let n = data.len().max(1) as f64;
        let mut leaf_reach: BTreeMap<String, usize> =
            t.leaves().iter().map(|l| (l.to_string(), 0)).collect();
        let (mut params, mut flops) = (0.0, 0.0);
        for &l in &p.single.leaf {
            *leaf_reach.entry(l.to_string()).or_default() += 1;
            let c = t.path_cost(l);
            params += c.params as f64;
            flops += c.flops as f64;
        }
        let total = t.total_cost();
        Evaluation {
            task: self.task().kind(),
            multi_path: score(data, &p.multi.values),
            single_path: score(data, &p.single.values),
            least_likely_path: score(data, &p.least.values),
            test_samples: data.len(),
            params_total: total.params,
            params_single_path_avg: params / n,
            flops_multi_path: total.flops as f64,
            flops_single_path: flops / n,
            leaf_reach,
        }
    }
}
