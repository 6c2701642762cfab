//! Scoring a tree: validation NLL and the task's metric, in chunks without autodiff.

use burn::prelude::*;

use super::device_set::DeviceSet;
use super::optimise::{Batch, EpochOnDevice, Objective};
use crate::loss::{Target, mixture_log_lik, mixture_nll, mixture_prediction};
use crate::task::Task;
use crate::modules::to_vec;
use crate::tree::{Topology, TreeModules, TreeView};

/// `(start, len)` pieces covering `0..n`.
pub fn chunks(n: usize, size: usize) -> impl Iterator<Item = (usize, usize)> {
    let size = size.max(1);
    (0..n).step_by(size).map(move |s| (s, size.min(n - s)))
}

/// How predictions are scored: error in percent, or MSE in original target units.
#[derive(Clone, Debug)]
pub struct MetricCtx {
    pub task: Task,
    /// Per-output standard deviation of regression targets (to undo standardisation).
    pub y_std: Vec<f32>,
}

impl MetricCtx {
    /// Error percent, or mean squared error over all outputs and samples.
    fn finish(&self, acc: f64, n: usize) -> f64 {
        match self.task {
            Task::Classification { .. } => 100.0 * acc / n.max(1) as f64,
            Task::Regression { dim } => acc / (n.max(1) * dim) as f64,
        }
    }
}

/// A validation pass's sums, kept on the device chunk by chunk and read once at the end:
/// reading each chunk's would wait for the device twice a chunk (on a GPU, a
/// synchronisation each).
pub struct Totals<'a> {
    metric: &'a MetricCtx,
    /// Per chunk: the sum of log-likelihoods, and the errors (count) or squared errors.
    ll: Vec<Tensor<1>>,
    scored: Vec<Tensor<1>>,
    n: usize,
}

impl<'a> Totals<'a> {
    pub fn new(metric: &'a MetricCtx) -> Self {
        Totals {
            metric,
            ll: Vec::new(),
            scored: Vec::new(),
            n: 0,
        }
    }

    /// A chunk's log-likelihoods (any shape, one per sample) and predictions for targets
    /// `y`.
    pub fn add<const D: usize>(&mut self, ll: Tensor<D>, pred: Tensor<2>, y: &Target) {
        self.n += pred.dims()[0];
        self.ll.push(ll.sum());
        let scored = match y {
            Target::Classes(c) => pred.argmax(1).not_equal(c.clone()).int().sum().float(),
            // Per output, in standardised units: scaled back in f64 by `finish`, since
            // the squares of large targets (1e19 and up) overflow f32.
            Target::Values(v) => {
                let d = v.dims()[1];
                (pred - v.clone()).powi_scalar(2).sum_dim(0).reshape([d])
            }
        };
        self.scored.push(scored);
    }

    /// Mean NLL and the metric (error percent, or MSE in the targets' units).
    pub fn finish(self) -> (f64, f64) {
        let read = |parts: Vec<Tensor<1>>| match parts.is_empty() {
            true => Vec::new(),
            false => to_vec(Tensor::cat(parts, 0)),
        };
        let nll = read(self.ll).into_iter().fold(0.0, |acc, v| acc - v as f64);
        let y_std = &self.metric.y_std;
        let scale = |i: usize| match self.metric.task {
            Task::Classification { .. } => 1.0,
            Task::Regression { .. } => (y_std[i % y_std.len()] as f64).powi(2),
        };
        let scored = read(self.scored)
            .into_iter()
            .enumerate()
            .fold(0.0, |acc, (i, v)| acc + v as f64 * scale(i));
        (nll / self.n.max(1) as f64, self.metric.finish(scored, self.n))
    }
}

/// Mean NLL and metric of a tree (modules without autodiff) on `set`.
pub fn evaluate(
    tree: TreeView<'_>,
    set: &DeviceSet,
    metric: &MetricCtx,
    chunk: usize,
) -> (f64, f64) {
    let mut totals = Totals::new(metric);
    for (s, len) in chunks(set.n, chunk) {
        let y = set.y.narrow(s, len);
        let (leaves, _) = tree.forward_leaves(set.x.narrow(s, len), None);
        let ll = mixture_log_lik(&leaves, &y);
        totals.add(ll, mixture_prediction(&leaves, metric.task), &y);
    }
    totals.finish()
}

/// Refinement: every parameter of the tree, on the full forward pass.
pub struct TreeObjective<'a> {
    pub topology: &'a Topology,
    pub train: &'a DeviceSet,
    pub valid: &'a DeviceSet,
    pub metric: &'a MetricCtx,
    pub chunk: usize,
}

impl Objective<TreeModules> for TreeObjective<'_> {
    fn n_train(&self) -> usize {
        self.train.n
    }
    fn device(&self) -> Device {
        self.train.y.device()
    }
    fn upload_epoch(&self, order: &[usize]) -> EpochOnDevice {
        self.train.upload_epoch(order)
    }
    fn batch_loss(&self, model: &TreeModules, batch: &Batch) -> Tensor<1> {
        let b = self.train.batch(batch);
        let tree = TreeView {
            topology: self.topology,
            modules: model,
        };
        let (leaves, _) = tree.forward_leaves(b.x.all(b.n), None);
        mixture_nll(&leaves, &b.y)
    }
    fn validate(&self, model: &TreeModules) -> (f64, f64) {
        evaluate(
            TreeView {
                topology: self.topology,
                modules: model,
            },
            self.valid,
            self.metric,
            self.chunk,
        )
    }
}
