//! Scoring a tree: validation NLL and the task's metric, in chunks without autodiff.

use burn::prelude::*;

use super::device_set::DeviceSet;
use super::fit::{Batch, EpochOnDevice, Objective};
use crate::loss::{Target, mixture_log_lik, mixture_nll, mixture_prediction};
use crate::preset::Task;
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
    pub fn zero(&self) -> f64 {
        0.0
    }
    /// Add a chunk's errors (count) or squared errors (sum) to `acc`.
    pub fn accumulate(&self, acc: &mut f64, pred: Tensor<2>, y: &Target) {
        match y {
            Target::Classes(c) => {
                let wrong = pred
                    .argmax(1)
                    .not_equal(c.clone())
                    .int()
                    .sum()
                    .into_scalar::<i64>();
                *acc += wrong as f64;
            }
            Target::Values(v) => {
                let dev = v.device();
                let d = self.y_std.len();
                let s = Tensor::<1>::from_data(TensorData::new(self.y_std.clone(), [d]), &dev)
                    .reshape([1, d]);
                let e = ((pred - v.clone()) * s)
                    .powi_scalar(2)
                    .sum()
                    .into_scalar::<f32>();
                *acc += e as f64;
            }
        }
    }
    /// Error percent, or mean squared error over all outputs and samples.
    pub fn finish(&self, acc: f64, n: usize) -> f64 {
        match self.task {
            Task::Classification { .. } => 100.0 * acc / n.max(1) as f64,
            Task::Regression { dim } => acc / (n.max(1) * dim) as f64,
        }
    }
}

/// Mean NLL and metric of a tree (modules without autodiff) on `set`.
pub fn evaluate(
    tree: TreeView<'_>,
    set: &DeviceSet,
    metric: &MetricCtx,
    chunk: usize,
) -> (f64, f64) {
    let (mut nll, mut m) = (0.0, 0.0);
    for (s, len) in chunks(set.n, chunk) {
        let y = set.y.narrow(s, len);
        let (leaves, _) = tree.forward_leaves(set.x.narrow(s, len), None);
        nll -= mixture_log_lik(&leaves, &y).sum().into_scalar::<f32>() as f64;
        metric.accumulate(&mut m, mixture_prediction(&leaves, metric.task), &y);
    }
    (nll / set.n.max(1) as f64, metric.finish(m, set.n))
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
        let (leaves, _) = tree.forward_leaves(b.x, None);
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
