//! Predictions: multi-path, single-path (conditional computation), stochastic and the
//! reference paths, and each node's reach probability.

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::Ant;
use crate::data::Dataset;
use crate::error::Result;
use crate::loss::{leaf_prediction, mixture_prediction};
use crate::modules::{Repr, to_vec};
use crate::task::Task;
use crate::train::EVAL_CHUNK;
use crate::tree::{Routing, chosen_outputs, least_likely_leaves, reach_probs};

/// How a prediction is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Inference {
    /// Every leaf, weighted by its reach probability (the paper's multi-path).
    MultiPath,
    /// The more likely branch at each router; each sample runs only its path's modules.
    SinglePath,
    /// Bernoulli routing with the routers' probabilities (seeded), conditional too.
    Stochastic { seed: u64 },
    /// Greedy single path computed densely (every module run): the reference that
    /// conditional single-path inference must equal.
    DenseSinglePath,
    /// The leaf with the smallest reach probability (the paper's Table 5 sanity check).
    LeastLikelyPath,
}

/// Predictions for a batch of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    /// `[N,K]` row-major: class probabilities, or regression values in original units.
    pub values: Vec<f32>,
    pub k: usize,
    /// The leaf each sample's greedy path reaches.
    pub leaf: Vec<usize>,
}

impl Predictions {
    /// Arg-max class per sample (classification).
    pub fn classes(&self) -> Vec<usize> {
        argmax_rows(&self.values, self.k)
    }
}

/// Every prediction (and every node's reach) leaves through here: a row with a value that is not finite is never
/// a class (the arg-max of NaNs is 0) or a number; the rows are named in the error.
fn check_finite(values: &[f32], k: usize) -> Result<()> {
    let bad: Vec<usize> = values
        .chunks(k.max(1))
        .enumerate()
        .filter(|(_, r)| r.iter().any(|v| !v.is_finite()))
        .map(|(i, _)| i)
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(crate::error::AntError::NotFinite {
        count: bad.len(),
        samples: crate::data::ranges(&bad[..bad.len().min(20)])
            + if bad.len() > 20 { ", ..." } else { "" },
    })
}

/// Arg-max of each row of `k` values (the first on ties).
pub(crate) fn argmax_rows(values: &[f32], k: usize) -> Vec<usize> {
    values
        .chunks(k)
        .map(|r| {
            r.iter()
                .enumerate()
                .fold(0, |b, (i, v)| if *v > r[b] { i } else { b })
        })
        .collect()
}

impl Ant {
    /// Predict `data` (its targets are ignored).
    pub fn predict(&self, data: &Dataset, mode: Inference) -> Result<Predictions> {
        self.check_data(data, false)?;
        let input = self.input_shape();
        let x = self.normalised_inputs(data, input);
        let task = self.task();
        let k = task.outputs();
        let (mut values, mut leaf) = (
            Vec::with_capacity(data.len() * k),
            Vec::with_capacity(data.len()),
        );
        for (c, (s, len)) in crate::train::chunks(data.len(), EVAL_CHUNK).enumerate() {
            let (v, l) = self.predict_chunk(x.narrow(s, len), mode, c as u64);
            values.extend(v);
            leaf.extend(l);
        }
        if let Task::Regression { dim } = task {
            self.meta.normalisation.restore_y(&mut values, dim);
        }
        check_finite(&values, k)?;
        Ok(Predictions { values, k, leaf })
    }

    /// Predictions (normalised units) and greedy leaves of one chunk of inputs; `chunk`
    /// numbers the chunk (stochastic routing draws a stream per chunk).
    fn predict_chunk(&self, x: Repr, mode: Inference, chunk: u64) -> (Vec<f32>, Vec<usize>) {
        let task = self.task();
        let view = self.tree.view();
        let post = |t: Tensor<2>| leaf_prediction(t, task);
        let routing = match mode {
            Inference::Stochastic { seed } => Routing::Stochastic(seed.wrapping_add(chunk)),
            _ => Routing::Greedy,
        };
        match mode {
            Inference::SinglePath | Inference::Stochastic { .. } => {
                let p = view.single_path(x, routing, post);
                (p.out, p.leaf)
            }
            Inference::MultiPath => {
                let greedy = view.greedy_leaves(x.clone());
                let (leaves, _) = view.forward_leaves(x, None);
                (to_vec(mixture_prediction(&leaves, task)), greedy)
            }
            Inference::DenseSinglePath | Inference::LeastLikelyPath => {
                // Every leaf computed; each sample then takes one leaf's prediction.
                let n = x.batch();
                let (leaves, _) = view.forward_leaves(x.clone(), None);
                let chosen = if mode == Inference::DenseSinglePath {
                    view.greedy_leaves(x)
                } else {
                    least_likely_leaves(&leaves, n, &self.device)
                };
                (chosen_outputs(&leaves, &chosen, post), chosen)
            }
        }
    }

    /// Mean reach probability of every node over `data`'s samples.
    pub fn node_reach(&self, data: &Dataset) -> Result<Vec<f64>> {
        self.check_data(data, false)?;
        let x = self.normalised_inputs(data, self.input_shape());
        let view = self.tree.view();
        let leaves_idx = self.tree.topology.leaves();
        let mut sums = vec![0f64; leaves_idx.len()];
        for (s, len) in crate::train::chunks(data.len(), EVAL_CHUNK) {
            let (leaves, _) = view.forward_leaves(x.narrow(s, len), None);
            let r = to_vec(reach_probs(&leaves, len, &self.device));
            for row in r.chunks(leaves.len()) {
                row.iter()
                    .enumerate()
                    .for_each(|(j, p)| sums[j] += *p as f64);
            }
        }
        let n = data.len().max(1) as f64;
        let leaf_reach: Vec<(usize, f64)> = leaves_idx
            .into_iter()
            .zip(sums)
            .map(|(l, s)| (l, s / n))
            .collect();
        Ok(self.tree.topology.node_reach(&leaf_reach))
    }

    /// Per-sample reach probability of every node, row-major `[N][nodes]` (a node's
    /// reach is the sum of its leaves'). A router's left-probability for a sample is
    /// `reach[left] / reach[node]`.
    pub fn node_reach_per_sample(&self, data: &Dataset) -> Result<Vec<f32>> {
        self.check_data(data, false)?;
        let t = &self.tree.topology;
        let m = t.nodes.len();
        let paths: Vec<Vec<usize>> = t.leaves().iter().map(|&l| t.path(l)).collect();
        let x = self.normalised_inputs(data, self.input_shape());
        let view = self.tree.view();
        let mut out = vec![0f32; data.len() * m];
        for (s, len) in crate::train::chunks(data.len(), EVAL_CHUNK) {
            let (leaves, _) = view.forward_leaves(x.narrow(s, len), None);
            let r = to_vec(reach_probs(&leaves, len, &self.device));
            for (b, row) in r.chunks(leaves.len()).enumerate() {
                let o = &mut out[(s + b) * m..(s + b + 1) * m];
                for (j, p) in row.iter().enumerate() {
                    paths[j].iter().for_each(|&n| o[n] += p);
                }
            }
        }
        check_finite(&out, m)?;
        Ok(out)
    }
}
