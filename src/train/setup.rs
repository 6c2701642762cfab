//! Training a model from a data set: the checks on the data, the validation rows, the
//! device sets, then growth and refinement (or a baseline) into an [`Ant`].

use std::sync::Arc;

use burn::prelude::*;

use super::{
    Augmenter, Checkpoints, DeviceSet, GrowthData, MetricCtx, Pretrained, StartModel, grow,
    growth_cache_budget, refine, to_device, train_fixed,
};
use crate::data::split::{Provenance, ValidSplit};
use crate::data::{Dataset, Targets};
use crate::error::{AntError, Result};
use crate::normalise::Normalisation;
use crate::observe::{Decision, Observer};
use crate::params::{AntParams, TrainConfig};
use crate::task::Task;
use crate::spec::Shape;
use crate::tree::Tree;

/// Says a regression target that is one value on every training row: it would train
/// without a word, while one class is refused.
fn warn_of_a_constant_target(data: &Dataset) {
    // Once for the same targets: an ensemble's members train on them one by one.
    static SAID: std::sync::Mutex<Option<(usize, Vec<u32>)>> = std::sync::Mutex::new(None);
    if let Targets::Values { values, dim } = &data.targets
        && !values.is_empty()
        && (0..*dim).all(|j| values.iter().skip(j).step_by(*dim).all(|&v| v == values[j]))
    {
        let key = (values.len(), values[..*dim].iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let mut said = SAID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if said.as_ref() == Some(&key) {
            return;
        }
        *said = Some(key);
        let shown: Vec<String> = values[..*dim].iter().map(|&v| crate::digits::number32(v)).collect();
        tracing::warn!(
            "the training targets are all one value ({}): the model can only learn to predict it",
            shown.join(", ")
        );
    }
}

pub(crate) fn check_training_data(cfg: &TrainConfig, data: &Dataset) -> Result<Shape> {
    let input = Shape::from_dims(&data.sample_shape).ok_or_else(|| {
        AntError::param(format!("unsupported sample shape {:?}", data.sample_shape))
    })?;
    let preset = cfg.preset;
    match (preset.wants_images(), input) {
        (true, Shape::Flat { .. }) => {
            let msg = format!("preset {preset} needs images, the data has flat rows");
            return Err(AntError::param(msg));
        }
        (false, Shape::Image { .. }) => {
            let msg = format!("preset {preset} needs flat rows, the data has images");
            return Err(AntError::param(msg));
        }
        _ => {}
    }
    if let Some(why) = cfg.baseline.and_then(|b| b.misfit(input)) {
        return Err(AntError::param(why));
    }
    if data.len() < 10 {
        let n = data.len();
        let msg = format!(
            "need at least 10 training samples, got {n} sample{}",
            if n == 1 { "" } else { "s" }
        );
        return Err(AntError::param(msg));
    }
    if let Targets::Classes { labels, .. } = &data.targets
        && labels.iter().all(|&l| l == labels[0])
    {
        let msg = format!(
            "the training samples hold a single class ({}); classification needs at least 2",
            data.class_label(labels[0] as usize)
        );
        return Err(AntError::param(msg));
    }
    if input.numel() == 0 {
        let msg = format!("the samples have no values (shape {input}): nothing to train on");
        return Err(AntError::param(msg));
    }
    check_split_sizes(cfg, data)?;
    Ok(input)
}

/// Refuse a split that leaves too little to train on: fewer training or validation rows
/// than classes (at least 2 training rows and 1 validation row for regression), which
/// would train on nothing or validate on nothing.
fn check_split_sizes(cfg: &TrainConfig, data: &Dataset) -> Result<()> {
    let rule = ValidSplit::for_training(cfg.valid_rows, cfg.valid_fraction, cfg.seed, data);
    let (train, valid) = rule.rows(data);
    let (need_train, need_valid, unit) = match &data.targets {
        Targets::Classes { n_classes, .. } => (*n_classes, *n_classes, "one per class"),
        Targets::Values { .. } => (2, 1, "regression"),
    };
    // The stratified split keeps a sample of each class on each side whatever the
    // fraction, so the fraction's own count is judged as regression's is: 0.001 or
    // 0.999 of 120 rows are refused for classes too (they would train on 3 rows, or
    // validate on 3).
    let asked = crate::data::dataset::fraction_count(cfg.valid_fraction, data.len());
    let by_fraction = data.own_validation.is_none() && (asked == 0 || data.len() - asked < 2);
    let (n_train, n_valid) = match by_fraction {
        true => (data.len() - asked, asked),
        false => (train.len(), valid.len()),
    };
    if n_train >= need_train && n_valid >= need_valid {
        return Ok(());
    }
    let what = match (n_train < need_train, n_valid) {
        (_, 0) => "no validation samples",
        (true, _) => "too few samples to train on",
        (false, _) => "too few validation samples",
    };
    let msg = format!(
        "{what}: the {} training samples split into {n_train} for training and {n_valid} for \
         validation (--valid-fraction {}, --valid-rows {}); training needs at least \
         {need_train} and validation {need_valid} ({unit}): use more data or another \
         --valid-fraction",
        data.len(),
        crate::digits::number(cfg.valid_fraction),
        cfg.valid_rows,
    );
    Err(AntError::param(msg))
}

/// Whether the model `start` can start a run of `cfg` on `data` (see [`Pretrained::new`]):
/// checked before a run writes anything.
pub(crate) fn check_start(start: &StartModel, cfg: &TrainConfig, data: &Dataset) -> Result<()> {
    let input = check_training_data(cfg, data)?;
    Pretrained::new(start, cfg, (input, task_of(data)), &data.checksum()).map(|_| ())
}

/// The training split on the device, with augmentation when asked for.
fn training_set(
    cfg: &TrainConfig,
    train: Dataset,
    norm: &Normalisation,
    input: Shape,
    device: &Device,
) -> DeviceSet {
    let augmenter = match (cfg.augment().crop(), input) {
        (Some(crop), Shape::Image { c, h, w }) => {
            let x = norm.apply_x(&train.x(), input);
            // black padding, normalised: the authors' code pads the raw image
            let fill = (0..c).map(|ch| -norm.x_mean[ch] / norm.x_std[ch]).collect();
            Some(Augmenter::new(x, [c, h, w], crop, fill, cfg.seed ^ 0xA5A5))
        }
        _ => None,
    };
    let mut set = to_device(train, norm, input, device);
    set.augment = augmenter.map(Arc::new);
    set
}

fn task_of(data: &Dataset) -> Task {
    match &data.targets {
        Targets::Classes { n_classes, .. } => Task::Classification {
            classes: *n_classes,
        },
        Targets::Values { dim, .. } => Task::Regression { dim: *dim },
    }
}

/// What training made: the tree and everything `tree.json` records about it.
pub(crate) struct Trained {
    pub tree: Tree,
    pub task: Task,
    pub normalisation: Normalisation,
    pub config: TrainConfig,
    pub provenance: Provenance,
    pub valid_nll: f64,
    pub valid_metric: f64,
    pub decisions: Vec<Decision>,
    /// The tree as growth left it, before refinement, with its validation scores (the
    /// paper's Fig. 3 draws both); `None` for a fixed architecture.
    pub grown: Option<(Tree, f64, f64)>,
    /// The plain device the tree lives on.
    pub device: Device,
}

/// Checks `params` and `data`, holds out the validation rows, then grows and refines
/// an ANT (or trains the baseline) on `device`, checkpointing into `checkpoints`. Data
/// given by value is dropped once split: the split's rows are all training holds.
pub(crate) fn train(
    params: AntParams,
    data: std::borrow::Cow<'_, Dataset>,
    device: &Device,
    observer: &mut dyn Observer,
    checkpoints: Option<&Checkpoints>,
    start: Option<StartModel>,
) -> Result<Trained> {
        let cfg = params.check()?;
        let input = check_training_data(&cfg, &data)?;
        warn_of_a_constant_target(&data);
        let _draws = crate::device::hold_draws_for_training(observer)?;
        let task = task_of(&data);
        let (provenance, train, valid) = validation_rows(&cfg, data, observer)?;
        let norm = Normalisation::from_data(&train, input, cfg.image_norm);
        // A model that would not load is never trained.
        norm.check_scales().map_err(|why| {
            AntError::param(format!("the data cannot be standardised in f32: {why}"))
        })?;
        let metric = MetricCtx {
            task,
            y_std: norm.y_std.clone(),
        };
        let base = device.clone().without_autodiff();
        // The split's rows go to the device by value: no host copy outlives this.
        let tset = training_set(&cfg, train, &norm, input, &base);
        let vset = to_device(valid, &norm, input, &base);
        let ad = base.clone().autodiff();
        let pretrained = match (&start, &provenance.train_checksum) {
            (Some(cnn), Some(sum)) => Some(Pretrained::new(cnn, &cfg, (input, task), sum)?),
            _ => None,
        };
        crate::device::seed_draws(cfg.seed);
        let data = GrowthData {
            task,
            train: &tset,
            valid: &vset,
            metric: &metric,
            device: &ad,
            checkpoints,
            pretrained: pretrained.as_ref(),
            cache_budget: growth_cache_budget(tset.n * input.numel() * 4)?,
        };
        if let Some(c) = checkpoints {
            c.track_augmenter(tset.augment.clone());
        }
        let ((tree, valid_nll, valid_metric), decisions, grown) = fit(&cfg, input, data, observer)?;
        if !valid_nll.is_finite() || !valid_metric.is_finite() {
            return Err(AntError::Diverged {
                valid_nll,
                valid_metric,
            });
        }
        Ok(Trained {
            tree: Tree::new(tree.topology, tree.modules.valid()),
            task,
            normalisation: norm,
            config: cfg,
            provenance,
            valid_nll,
            valid_metric,
            decisions,
            grown,
            device: base,
        })
}

/// A tree, its validation NLL and metric, with its growth's decisions and the tree as
/// growth left it (a baseline: trained as it is, neither).
type Fit = ((Tree, f64, f64), Vec<Decision>, Option<(Tree, f64, f64)>);

/// The baseline `cfg` names trained, or an ANT grown then refined, on `data`.
fn fit(cfg: &TrainConfig, input: Shape, data: GrowthData<'_>, observer: &mut dyn Observer) -> Result<Fit> {
    match cfg.baseline {
        Some(b) => {
            let fixed = train_fixed(cfg, input, data, observer)?;
            let why = || format!("baseline {b} does not fit inputs of shape {input}");
            Ok((fixed.ok_or_else(|| AntError::param(why()))?, vec![], None))
        }
        None => {
            let grown = grow(cfg, data, input, observer)?;
            let decisions = grown.decisions.clone();
            let before = (
                Tree::new(grown.tree.topology.clone(), grown.tree.modules.valid()),
                grown.valid_nll,
                grown.valid_metric,
            );
            Ok((refine(cfg, grown, data, observer)?, decisions, Some(before)))
        }
    }
}

/// The training and validation rows training splits `data` into, and the provenance
/// that records how; a validation set without some of the classes is warned about.
/// Data given by value is split where it is: only the validation rows are copied.
fn validation_rows(
    cfg: &TrainConfig,
    data: std::borrow::Cow<'_, Dataset>,
    observer: &mut dyn Observer,
) -> Result<(Provenance, Dataset, Dataset)> {
    let rule = ValidSplit::for_training(cfg.valid_rows, cfg.valid_fraction, cfg.seed, &data);
    let (train_rows, valid_rows) = rule.rows(&data);
    let provenance = Provenance::library(&data, train_rows.len(), valid_rows.len(), rule);
    let (train, valid) = match data {
        std::borrow::Cow::Owned(d) => d.split_rows(&train_rows, &valid_rows),
        std::borrow::Cow::Borrowed(d) => (d.subset(&train_rows), d.subset(&valid_rows)),
    };
    if let Some(msg) = missing_classes_warning(&train, &valid, "validation") {
        observer.warning(&msg);
    }
    // `--valid-rows last` can leave one class to train on.
    if let Targets::Classes { labels, .. } = &train.targets
        && let Some(&first) = labels.first()
        && labels.iter().all(|&l| l == first)
    {
        let msg = format!(
            "the rows left for training once the validation rows are taken hold a single class ({}); classification needs at least 2: take the validation rows another way (--valid-rows) or fewer of them (--valid-fraction)",
            train.class_label(first as usize)
        );
        return Err(AntError::param(msg));
    }
    Ok((provenance, train, valid))
}

/// A warning when `set` (named `what`) lacks classes that `train` has: its scores then
/// say nothing about them. Classes are named by their labels where `train` knows them.
pub fn missing_classes_warning(train: &Dataset, set: &Dataset, what: &str) -> Option<String> {
    let missing = train.classes_missing_from(set);
    if missing.is_empty() {
        return None;
    }
    let names: Vec<String> = missing.iter().map(|&c| train.class_label(c)).collect();
    Some(format!(
        "the {what} set ({} samples) has no samples of class {} that the training set has: its scores say nothing about them",
        set.len(),
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::split::ValidRows;
    use crate::params::AntParams;
    use crate::preset::Preset;

    /// Sample i is [i]; label i % 2.
    fn rows(n: usize) -> Dataset {
        let labels = (0..n).map(|i| (i % 2) as u32).collect();
        let targets = Targets::Classes {
            labels,
            n_classes: 2,
        };
        Dataset::new((0..n).map(|i| i as f32).collect(), vec![1], targets).unwrap()
    }

    #[test]
    fn validation_rows_are_drawn_or_the_last_ones_as_asked() {
        let data = rows(40);
        let firsts =
            |d: &Dataset| -> Vec<usize> { (0..d.len()).map(|i| d.sample(i)[0] as usize).collect() };
        let cfg = |v| {
            AntParams::new(Preset::Tabular)
                .with_valid_rows(v)
                .check()
                .unwrap()
        };
        let rule = |v| {
            let c = cfg(v);
            ValidSplit::for_training(c.valid_rows, c.valid_fraction, c.seed, &data)
        };
        let last = rule(ValidRows::Last);
        assert_eq!(last, ValidSplit::Tail { fraction: 0.1 });
        let (train, valid) = last.apply(&data);
        assert_eq!(firsts(&valid), vec![36, 37, 38, 39]);
        assert_eq!(train.len(), 36);
        let drawn = rule(ValidRows::Drawn);
        assert_eq!(
            drawn,
            ValidSplit::Stratified {
                fraction: 0.1,
                seed: 0
            }
        );
        let (_, valid) = drawn.apply(&data);
        assert_eq!(valid.len(), 4);
        assert_ne!(firsts(&valid), vec![36, 37, 38, 39], "a draw, not the tail");
    }
}
