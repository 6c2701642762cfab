//! The refinement phase: every parameter of the grown tree trained together.

use super::eval::TreeObjective;
use super::optimise::{OptimiseOptions, optimise};
use super::growth::{EVAL_CHUNK, Grown, GrowthData};
use super::seed::{INIT_ROOT, REFINE_SHUFFLE, sub_seed};
use crate::error::Result;
use crate::observe::{Observer, Stage};
use crate::params::TrainConfig;
use crate::spec::Shape;
use crate::tree::{Tree, TreeModules};

/// The learning rate is divided by 10 at every multiple of this many epochs (paper).
const LR_STEP: usize = 50;

/// Refinement: all parameters together for `cfg.refine_epochs` epochs, the learning
/// rate divided by 10 at every multiple of 50. Returns the better of the grown tree and
/// the best refined epoch (by validation NLL or error, `cfg.select`), with its scores.
pub fn refine(
    cfg: &TrainConfig,
    grown: Grown,
    data: GrowthData<'_>,
    obs: &mut dyn Observer,
) -> Result<(Tree, f64, f64)> {
    let GrowthData {
        train,
        valid,
        metric,
        checkpoints,
        ..
    } = data;
    if cfg.refine_epochs() == 0 {
        return Ok((grown.tree, grown.valid_nll, grown.valid_metric));
    }
    let Tree { topology, modules } = grown.tree;
    let obj = TreeObjective {
        topology: &topology,
        train,
        valid,
        metric,
        chunk: EVAL_CHUNK,
    };
    let start = (grown.valid_nll, grown.valid_metric);
    let opts = OptimiseOptions {
        start: Some(start),
        ..options(cfg, None)
    };
    let f = optimise(modules.clone(), &obj, &opts, obs, checkpoints)?;
    Ok(if f.improved {
        (Tree::new(topology, f.model), f.valid_nll, f.valid_metric)
    } else {
        (Tree::new(topology, modules), start.0, start.1)
    })
}

/// Refinement's loop settings: all epochs unless `patience` stops it earlier.
fn options(cfg: &TrainConfig, patience: Option<usize>) -> OptimiseOptions {
    OptimiseOptions {
        stage: Stage::Refine,
        start: None,
        max_epochs: cfg.refine_epochs(),
        patience,
        lr: cfg.lr,
        batch_size: cfg.batch_size,
        lr_step: Some(LR_STEP),
        seed: sub_seed(cfg.seed, usize::MAX >> 8, REFINE_SHUFFLE),
        select: cfg.select,
    }
}

/// A fixed architecture (a baseline, `cfg.baseline`) trained as refinement trains a
/// grown tree, from fresh weights, but stopped after `cfg.patience` epochs without a
/// validation improvement (as the paper's baselines): the best epoch by validation NLL
/// is kept, with its scores. `None` when the baseline does not fit `input`.
pub fn train_fixed(
    cfg: &TrainConfig,
    input: Shape,
    data: GrowthData<'_>,
    obs: &mut dyn Observer,
) -> Result<Option<(Tree, f64, f64)>> {
    let Some(topology) = cfg.baseline.and_then(|b| {
        b.topology((cfg.preset, cfg.pool_rule), input, data.task, cfg.width, cfg.max_depth)
    }) else {
        return Ok(None);
    };
    // Drawn as the root of a grown tree is: the seed alone decides the weights.
    let _draws = crate::device::hold_draws();
    crate::device::seed_draws(sub_seed(cfg.seed, 0, INIT_ROOT));
    let modules = TreeModules::init(&topology, data.device);
    let obj = TreeObjective {
        topology: &topology,
        train: data.train,
        valid: data.valid,
        metric: data.metric,
        chunk: EVAL_CHUNK,
    };
    let opts = options(cfg, Some(cfg.patience()));
    let f = optimise(modules, &obj, &opts, obs, data.checkpoints)?;
    Ok(Some((
        Tree::new(topology, f.model),
        f.valid_nll,
        f.valid_metric,
    )))
}
