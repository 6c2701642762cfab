//! The refinement phase: every parameter of the grown tree trained together.

use super::eval::TreeObjective;
use super::fit::{FitOptions, fit};
use super::growth::{EVAL_CHUNK, Grown, GrowthData};
use super::seed::{REFINE_SHUFFLE, sub_seed};
use crate::error::Result;
use crate::observe::{Observer, Stage};
use crate::params::TrainConfig;
use crate::tree::Tree;

/// The learning rate is divided by 10 at every multiple of this many epochs (paper).
const LR_STEP: usize = 50;

/// Refinement: all parameters together for `cfg.refine_epochs` epochs, the learning
/// rate divided by 10 at every multiple of 50. Returns the better of the grown tree and
/// the best refined epoch (by validation NLL), with its scores.
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
    if cfg.refine_epochs == 0 {
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
    let opts = FitOptions {
        stage: Stage::Refine,
        start: Some(start),
        max_epochs: cfg.refine_epochs,
        patience: None,
        lr: cfg.lr,
        batch_size: cfg.batch_size,
        lr_step: Some(LR_STEP),
        seed: sub_seed(cfg.seed, usize::MAX >> 8, REFINE_SHUFFLE),
    };
    let f = fit(modules.clone(), &obj, &opts, obs, checkpoints)?;
    Ok(if f.improved {
        (Tree::new(topology, f.model), f.valid_nll, f.valid_metric)
    } else {
        (Tree::new(topology, modules), start.0, start.1)
    })
}
