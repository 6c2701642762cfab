//! The one optimisation loop: Adam, shuffled mini-batches, validation every epoch,
//! best-validation weights kept, optional patience and step learning-rate decay.

use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::checkpoint::{Checkpoints, Start};
use crate::observe::{EpochRecord, Observer, Stage};

/// What a loop optimises: a loss on training mini-batches and a validation score.
pub trait Objective<M> {
    /// Training samples available.
    fn n_train(&self) -> usize;
    /// Mean loss on the training samples `idx` (autodiff graph attached).
    fn batch_loss(&self, model: &M, idx: &[usize]) -> Tensor<1>;
    /// Validation (NLL, metric) of a model without autodiff.
    fn validate(&self, model: &M) -> (f64, f64);
}

/// Loop settings.
#[derive(Clone, Debug)]
pub struct FitOptions {
    /// What is optimised (for observers and records).
    pub stage: Stage,
    /// The (validation NLL, metric) to beat, e.g. the tree's before refinement; without
    /// it the first epoch always counts.
    pub start: Option<(f64, f64)>,
    pub max_epochs: usize,
    /// Stop after this many epochs without a validation improvement (`None`: never).
    pub patience: Option<usize>,
    pub lr: f64,
    pub batch_size: usize,
    /// Divide the learning rate by 10 at every multiple of this many epochs.
    pub lr_step: Option<usize>,
    pub seed: u64,
}

/// The outcome: the best-validation model and its scores.
pub struct Fitted<M> {
    pub model: M,
    pub valid_nll: f64,
    pub valid_metric: f64,
    pub epochs: usize,
    /// Whether any epoch beat the starting point given to [`fit`].
    pub improved: bool,
}

/// Adam with PyTorch's epsilon (burn's default is 1e-5).
pub fn adam() -> AdamConfig {
    AdamConfig::new().with_epsilon(1e-8)
}

/// Train `model` on `obj`. With `ckpt`, the state is saved after every epoch and an
/// optimisation that finished (or was in progress) before an interruption is replayed
/// (or resumed) from there.
pub fn fit<M: Module>(
    model: M,
    obj: &dyn Objective<M>,
    opts: &FitOptions,
    observer: &mut dyn Observer,
    ckpt: Option<&Checkpoints>,
) -> Fitted<M> {
    let begin = ckpt.map_or(Start::Fresh, |c| c.begin(&model));
    let (best_start, metric_start) = opts.start.unwrap_or((f64::INFINITY, f64::NAN));
    let (mut model, mut optim, mut best, mut best_nll, mut best_metric, mut since_best, first) =
        match begin {
            Start::Replay(f) => return f,
            Start::Resume(r) => (
                r.model,
                r.optim,
                r.best,
                r.best_nll,
                r.best_metric,
                r.since_best,
                r.epoch,
            ),
            Start::Fresh => (model, adam().init(), None, best_start, metric_start, 0, 0),
        };
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut order: Vec<usize> = (0..obj.n_train()).collect();
    // The shuffles of the epochs already done, so a resumed loop draws the same batches.
    for _ in 0..first {
        order.shuffle(&mut rng);
    }
    let mut epochs = first;
    observer.phase_start(opts.stage, opts.max_epochs);
    if first > 0 {
        observer.phase_resumed(first);
    }
    for epoch in first..opts.max_epochs {
        let t0 = Instant::now();
        let lr = match opts.lr_step {
            Some(s) if s > 0 => opts.lr * 0.1f64.powi((epoch / s) as i32),
            _ => opts.lr,
        };
        order.shuffle(&mut rng);
        let (mut loss_sum, mut seen) = (0.0f64, 0usize);
        for chunk in order.chunks(opts.batch_size.max(1)) {
            let loss = obj.batch_loss(&model, chunk);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            // The loss value is read after backward so both reuse one graph.
            loss_sum += loss.into_scalar::<f32>() as f64 * chunk.len() as f64;
            seen += chunk.len();
            model = optim.step(lr, model, grads);
        }
        let train_loss = loss_sum / seen.max(1) as f64;
        let (v_nll, v_metric) = obj.validate(&model.valid());
        epochs = epoch + 1;
        let better = v_nll < best_nll;
        if better {
            best_nll = v_nll;
            best_metric = v_metric;
            best = Some(model.clone());
            since_best = 0;
        } else {
            since_best += 1;
        }
        observer.epoch(&EpochRecord {
            phase: opts.stage.phase(),
            node: opts.stage.node(),
            candidate: opts.stage.candidate(),
            epoch: epoch + 1,
            train_loss,
            valid_loss: v_nll,
            valid_metric: v_metric,
            lr,
            seconds: t0.elapsed().as_secs_f64(),
        });
        if let Some(c) = ckpt {
            c.record_written();
        }
        if !train_loss.is_finite() || opts.patience.is_some_and(|p| since_best >= p) {
            break;
        }
        // Only a loop that goes on needs its state: a finished one saves its outcome.
        if let Some(c) = ckpt
            && epochs < opts.max_epochs
        {
            c.save_epoch(
                epochs,
                &model,
                best.as_ref(),
                &optim,
                best_nll,
                best_metric,
                since_best,
            );
        }
    }
    observer.phase_end();
    let improved = best.is_some();
    let fitted = Fitted {
        model: best.unwrap_or(model),
        valid_nll: best_nll,
        valid_metric: best_metric,
        epochs,
        improved,
    };
    if let Some(c) = ckpt {
        c.finish(&fitted);
    }
    fitted
}

/// Indices as an Int tensor on `device`.
pub fn index_tensor(idx: &[usize], device: &Device) -> Tensor<1, Int> {
    let v: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
    Tensor::from_data(TensorData::new(v, [idx.len()]), device)
}
