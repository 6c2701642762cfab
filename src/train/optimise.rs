//! The one optimisation loop: Adam, shuffled mini-batches, validation every epoch,
//! best-validation weights kept, optional patience and step learning-rate decay.

use std::time::Instant;

use burn::module::Module;
use burn::optim::GradientsParams;
use burn::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::checkpoint::{Checkpoints, Start};
use super::state::{Fitted, LoopState, Select};
use crate::error::{AntError, Result};
use crate::modules;
use crate::observe::{EpochRecord, Observer, Stage};

/// What a loop optimises: a loss on training mini-batches and a validation score.
pub trait Objective<M> {
    /// Training samples available.
    fn n_train(&self) -> usize;
    /// The device the training samples are on.
    fn device(&self) -> Device;
    /// An epoch's order of training rows (and what augmenting them needs), on the device.
    fn upload_epoch(&self, order: &[usize]) -> EpochOnDevice {
        EpochOnDevice {
            order: modules::index_tensor(order, &self.device()),
            shifts: None,
        }
    }
    /// Mean loss on the training samples of `batch` (autodiff graph attached).
    fn batch_loss(&self, model: &M, batch: &Batch) -> Tensor<1>;
    /// Validation (NLL, metric) of a model without autodiff.
    fn validate(&self, model: &M) -> (f64, f64);
}

/// One mini-batch: its training rows on the host and on the device. The epoch's order
/// goes to the device once and each batch is a slice of it: an upload per batch would
/// wait for the GPU to finish every step queued before it (LibTorch synchronises host
/// to device copies).
pub struct Batch<'a> {
    pub rows: &'a [usize],
    pub on_device: Tensor<1, Int>,
    /// The rows' augmentation draws (`[B,3]`: dy, dx, flip), where images are augmented
    /// on the device; `None`: on the host, or not at all.
    pub shifts: Option<Tensor<2, Int>>,
}

impl<'a> Batch<'a> {
    /// A batch of `rows` uploaded on its own, outside an epoch.
    pub fn upload(rows: &'a [usize], device: &Device) -> Self {
        Batch {
            rows,
            on_device: modules::index_tensor(rows, device),
            shifts: None,
        }
    }
}

/// An epoch's rows on the device, and their augmentation draws where images are
/// augmented there ([`Batch`]).
pub struct EpochOnDevice {
    pub order: Tensor<1, Int>,
    pub shifts: Option<Tensor<2, Int>>,
}

/// Loop settings.
#[derive(Clone, Debug)]
pub struct OptimiseOptions {
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
    /// Which validation score picks the best epoch.
    pub select: Select,
}

/// Train `model` on `obj`. With `ckpt`, the state is saved after every epoch and an
/// optimisation that finished (or was in progress) before an interruption is replayed
/// (or resumed) from there; a checkpoint (or epoch record) that cannot be written is an
/// error that stops the loop, the checkpoints written before it intact.
pub fn optimise<M: Module>(
    model: M,
    obj: &dyn Objective<M>,
    opts: &OptimiseOptions,
    observer: &mut dyn Observer,
    ckpt: Option<&Checkpoints>,
) -> Result<Fitted<M>> {
    let mut state = match ckpt.map_or(Start::Fresh, |c| c.begin(&model)) {
        Start::Replay(f) => return Ok(f),
        Start::Resume(r) => r,
        Start::Fresh => LoopState::fresh(model, opts.start),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut order: Vec<usize> = (0..obj.n_train()).collect();
    // The shuffles of the epochs already done, so a resumed loop draws the same batches.
    for _ in 0..state.epoch {
        order.shuffle(&mut rng);
    }
    observer.phase_start(opts.stage, opts.max_epochs);
    if state.epoch > 0 {
        observer.phase_resumed(state.epoch);
    }
    while state.epoch < opts.max_epochs {
        order.shuffle(&mut rng);
        let record = run_epoch(&mut state, obj, opts, &order, observer)?;
        observer.epoch(&record);
        if let Some(c) = ckpt {
            c.record_written(&record)?;
        }
        if !record.train_loss.is_finite() || opts.patience.is_some_and(|p| state.since_best >= p) {
            break;
        }
        // Only a loop that goes on needs its state: a finished one saves its outcome.
        if let Some(c) = ckpt
            && state.epoch < opts.max_epochs
        {
            c.save_epoch(&state)?;
        }
    }
    observer.phase_end();
    let fitted = state.into_fitted();
    if let Some(c) = ckpt {
        c.finish(&fitted)?;
    }
    Ok(fitted)
}

/// One epoch: Adam steps over the mini-batches of `order`, then validation. The
/// observer is asked before every mini-batch whether to stop ([`AntError::Interrupted`]).
fn run_epoch<M: Module>(
    state: &mut LoopState<M>,
    obj: &dyn Objective<M>,
    opts: &OptimiseOptions,
    order: &[usize],
    observer: &mut dyn Observer,
) -> Result<EpochRecord> {
    let t0 = Instant::now();
    let lr = match opts.lr_step {
        Some(s) if s > 0 => opts.lr * 0.1f64.powi((state.epoch / s) as i32),
        _ => opts.lr,
    };
    // The batches' losses stay on the device until the epoch ends: reading each one
    // back would wait for its step to finish (on a GPU, a synchronisation per step).
    let mut losses = Vec::new();
    let chunks = order.chunks(opts.batch_size.max(1));
    let epoch = obj.upload_epoch(order);
    let mut start = 0;
    for rows in chunks.clone() {
        if observer.should_stop() {
            return Err(AntError::Interrupted);
        }
        let batch = Batch {
            rows,
            on_device: epoch.order.clone().narrow(0, start, rows.len()),
            shifts: epoch.shifts.as_ref().map(|s| s.clone().narrow(0, start, rows.len())),
        };
        start += rows.len();
        let loss = obj.batch_loss(&state.model, &batch);
        let grads = GradientsParams::from_grads(loss.backward(), &state.model);
        losses.push(loss.inner());
        state.model = state.optim.step(lr, state.model.clone(), grads);
    }
    let (mut loss_sum, mut seen) = (0.0f64, 0usize);
    if !losses.is_empty() {
        let values = modules::to_vec(Tensor::cat(losses, 0));
        for (loss, chunk) in values.into_iter().zip(chunks) {
            loss_sum += loss as f64 * chunk.len() as f64;
            seen += chunk.len();
        }
    }
    let train_loss = loss_sum / seen.max(1) as f64;
    let (valid_loss, valid_metric) = obj.validate(&state.model.valid());
    state.scored(valid_loss, valid_metric, opts.select);
    Ok(EpochRecord {
        phase: opts.stage.phase(),
        node: opts.stage.node(),
        candidate: opts.stage.candidate(),
        epoch: state.epoch,
        train_loss,
        valid_loss,
        valid_metric,
        lr,
        seconds: t0.elapsed().as_secs_f64(),
    })
}
