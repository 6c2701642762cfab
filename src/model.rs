//! The fitted model: a grown and refined tree plus everything needed to use it on new
//! data (normalisation, task, provenance), saved as `tree.json` + `model-<md5>.safetensors`
//! (the weights file is named by its checksum, and `tree.json`, written last, names it).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use burn::module::Module;
use burn::prelude::*;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use serde::{Deserialize, Serialize};

use crate::data::tabular::TargetSpec;
use crate::data::{Dataset, Targets};
use crate::ensemble::Member;
use crate::error::{AntError, Result};
use crate::loss::{leaf_prediction, mixture_prediction, reach_probs};
use crate::modules::Repr;
use crate::normalise::{Normalisation, to_device};
use crate::observe::{Decision, Observer};
use crate::params::{AntParams, TrainConfig};
use crate::persist::{read_bounded, write_atomic};
use crate::preset::{Preset, Task, TaskKind};
use crate::prune::{PruneReport, prune};
use crate::spec::Shape;
use crate::train::{
    Augment, Augmenter, Checkpoints, DeviceSet, EVAL_CHUNK, GrowthData, MetricCtx, evaluate, grow,
    refine, train_fixed,
};
use crate::tree::{Routing, Topology, Tree, TreeModules, chosen_outputs, least_likely_leaves};

pub const TREE_FILE: &str = "tree.json";
/// The weights file of models saved before weights files were named by their checksum
/// (such a `tree.json` names no weights file); still loaded.
pub const LEGACY_WEIGHTS_FILE: &str = "model.safetensors";
const FORMAT: &str = "ant-model-1";

/// The weights file a `tree.json` belongs with: written into it by [`Ant::save`] and
/// checked by [`Ant::load`], so a `tree.json` is never used with another model's weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightsRef {
    /// `model-<first 16 hex digits of the md5>.safetensors`, beside `tree.json`.
    pub file: String,
    /// The hex md5 of the file's bytes.
    pub md5: String,
}

impl WeightsRef {
    fn of(bytes: &[u8]) -> WeightsRef {
        let md5 = crate::data::md5_hex(bytes);
        WeightsRef {
            file: format!("model-{}.safetensors", &md5[..16]),
            md5,
        }
    }

    /// Whether `name` is a weights file of [`Ant::save`] (or the legacy one).
    fn is_weights_name(name: &str) -> bool {
        name == LEGACY_WEIGHTS_FILE
            || (name.starts_with("model-") && name.ends_with(".safetensors"))
    }
}

/// `tree.json` as written: the model's description and the weights file it belongs with.
#[derive(Serialize)]
struct TreeFileOut<'a> {
    #[serde(flatten)]
    meta: &'a ModelMeta,
    weights: &'a WeightsRef,
}

/// The weights reference of a `tree.json` (absent in files of earlier versions).
#[derive(Deserialize)]
struct TreeFileWeights {
    #[serde(default)]
    weights: Option<WeightsRef>,
}

/// How the test set of a data source was chosen (so `eval` picks the same rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TestSplit {
    /// The data's own test files (IDX / CIFAR).
    Files,
    /// A separate test file given with `--test-data`.
    File { path: String },
    /// A seeded fraction of the training file, identified by its checksum.
    Fraction {
        fraction: f64,
        seed: u64,
        file_md5: String,
    },
    /// Not recorded (library use).
    Unknown,
}

/// How the validation rows were chosen among the training rows, so that `prune` (or
/// anything else) rebuilds exactly them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ValidSplit {
    /// The last `fraction` of the rows (models saved before validation rows were drawn).
    Tail { fraction: f64 },
    /// `fraction` of each class's rows, drawn with `seed` (classification).
    Stratified { fraction: f64, seed: u64 },
    /// `fraction` of the rows, drawn with `seed` (regression).
    Shuffled { fraction: f64, seed: u64 },
}

/// Which training rows a run holds out for validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValidRows {
    /// A seeded draw, stratified by class for classification.
    #[default]
    Drawn,
    /// The last rows as they were read (the PyTorch peer's rule; on MNIST, whatever
    /// order the file has).
    Last,
}

crate::named::named!(ValidRows {
    Drawn => "drawn",
    Last => "last",
});

impl ValidSplit {
    /// The rule training with `cfg` uses on `data`: by default seeded, stratified by
    /// class for classification.
    pub fn for_training(cfg: &TrainConfig, data: &Dataset) -> ValidSplit {
        let (fraction, seed) = (cfg.valid_fraction, cfg.seed);
        match (cfg.valid_rows, &data.targets) {
            (ValidRows::Last, _) => ValidSplit::Tail { fraction },
            (ValidRows::Drawn, Targets::Classes { .. }) => {
                ValidSplit::Stratified { fraction, seed }
            }
            (ValidRows::Drawn, Targets::Values { .. }) => ValidSplit::Shuffled { fraction, seed },
        }
    }

    pub fn fraction(&self) -> f64 {
        match *self {
            ValidSplit::Tail { fraction }
            | ValidSplit::Stratified { fraction, .. }
            | ValidSplit::Shuffled { fraction, .. } => fraction,
        }
    }

    /// `(training rows, validation rows)` of `data`, as training made them.
    pub fn apply(&self, data: &Dataset) -> (Dataset, Dataset) {
        match *self {
            ValidSplit::Tail { fraction } => data.split_tail(fraction),
            ValidSplit::Stratified { fraction, seed } => {
                data.validation_split(fraction, seed, true)
            }
            ValidSplit::Shuffled { fraction, seed } => data.validation_split(fraction, seed, false),
        }
    }
}

/// Where the model's data came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub data: String,
    pub test_split: TestSplit,
    pub train_limit: Option<usize>,
    pub n_train: usize,
    pub n_valid: usize,
    /// How a table was read (`--target` etc.), so `eval` / `predict` read files alike.
    #[serde(default)]
    pub target: Option<TargetSpec>,
    /// How the validation rows were chosen (absent: the last ones, as before).
    #[serde(default)]
    pub valid_split: Option<ValidSplit>,
    /// [`Dataset::checksum`] of the rows training split into training and validation
    /// rows, so they are rebuilt only from the same data (absent in older models).
    #[serde(default)]
    pub train_checksum: Option<String>,
    /// The ensemble this model is a member of: its training rows were put in the
    /// member's order before the validation rows were taken (see [`Member::rows`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Member>,
}

impl Provenance {
    /// A model fitted through the library on `data`, rows of unrecorded origin.
    fn library(data: &Dataset, n_train: usize, n_valid: usize, valid_split: ValidSplit) -> Self {
        Provenance {
            data: String::new(),
            test_split: TestSplit::Unknown,
            train_limit: None,
            n_train,
            n_valid,
            target: None,
            valid_split: Some(valid_split),
            train_checksum: Some(data.checksum()),
            member: None,
        }
    }
}

/// Everything in `tree.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    pub format: String,
    pub preset: Preset,
    pub task: Task,
    pub topology: Topology,
    pub normalisation: Normalisation,
    pub class_names: Option<Vec<String>>,
    pub config: TrainConfig,
    pub provenance: Provenance,
    pub valid_nll: f64,
    /// Validation error % or MSE of the kept model.
    pub valid_metric: f64,
    pub decisions: Vec<Decision>,
}

impl ModelMeta {
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
    fn check(&self, path: &Path) -> Result<()> {
        self.check_contents()
            .map_err(|why| AntError::data(path, format!("{why}")))
    }

    fn check_contents(&self) -> std::result::Result<(), Box<dyn std::error::Error>> {
        self.topology.validate()?;
        self.config.params().check()?;
        let (n, task) = (&self.normalisation, self.task);
        let channels = match self.topology.input {
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
        for leaf in self.topology.leaves() {
            let node = &self.topology.nodes[leaf];
            let out = node.module().out_shape(self.topology.shape_at(leaf));
            if out.map(|s| s.numel()) != Some(task.outputs()) {
                return Err(format!(
                    "node {leaf}'s solver does not give the task's {} outputs",
                    task.outputs()
                )
                .into());
            }
        }
        if let TestSplit::Fraction { fraction, .. } = self.provenance.test_split
            && !(fraction > 0.0 && fraction < 1.0)
        {
            return Err(format!("test fraction {fraction} is not in (0, 1)").into());
        }
        crate::data::check_class_names(self.class_names.as_deref(), task)?;
        let fraction = self.valid_split().fraction();
        if !(fraction > 0.0 && fraction < 1.0) {
            return Err(format!("validation fraction {fraction} is not in (0, 1)").into());
        }
        Ok(())
    }
}

/// How a prediction is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    pub multi: Predictions,
    pub single: Predictions,
    pub least: Predictions,
}

/// Test-set scores of a model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    pub task: TaskKind,
    /// Error % (classification) or MSE (regression), multi-path.
    pub multi_path: f64,
    pub single_path: f64,
    /// Predicting with each sample's least likely leaf.
    pub least_likely_path: f64,
    pub test_samples: usize,
    pub params_total: usize,
    /// Parameters on the path each test sample uses, averaged.
    pub params_single_path_avg: f64,
    /// FLOPs per sample (see [`crate::metrics`]).
    pub flops_multi_path: f64,
    pub flops_single_path: f64,
    /// Test samples reaching each leaf under greedy single-path routing.
    pub leaf_reach: BTreeMap<String, usize>,
}

/// A fitted Adaptive Neural Tree.
#[derive(Clone, Debug)]
pub struct Ant {
    pub tree: Tree,
    pub meta: ModelMeta,
    device: Device,
}

/// The sample shape, if the preset can take it and there is enough data (of two
/// classes at least, for classification).
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
            labels[0]
        );
        return Err(AntError::param(msg));
    }
    if !has_validation_rows(cfg, data) {
        let msg = format!(
            "no validation samples: a seeded {} of the {} training samples (of each class \
             of two samples or more) is held out for validation, and that is none of them",
            cfg.valid_fraction,
            data.len()
        );
        return Err(AntError::param(msg));
    }
    Ok(input)
}

/// Whether the validation rows [`ValidSplit::for_training`] takes from `data` are not
/// none: a class of two samples gives one; regression and the last rows hold out
/// `round(fraction * n)`.
fn has_validation_rows(cfg: &TrainConfig, data: &Dataset) -> bool {
    match &data.targets {
        Targets::Classes { labels, n_classes } if cfg.valid_rows == ValidRows::Drawn => {
            let mut count = vec![0usize; *n_classes];
            labels.iter().for_each(|&l| count[l as usize] += 1);
            count.iter().any(|&m| m >= 2)
        }
        _ => (cfg.valid_fraction * data.len() as f64).round() >= 1.0,
    }
}

/// The training split on the device, with the paper's augmentation when asked for.
fn training_set(
    cfg: &TrainConfig,
    train: &Dataset,
    norm: &Normalisation,
    input: Shape,
    device: &Device,
) -> DeviceSet {
    let mut set = to_device(train, norm, input, device);
    if let (Augment::CropFlip, Shape::Image { c, h, w }) = (cfg.augment, input) {
        let x = norm.apply_x(&train.x, input);
        set.augment = Some(Arc::new(Augmenter::new(x, c, h, w, 4, cfg.seed ^ 0xA5A5)));
    }
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

impl Ant {
    /// Grow and refine an ANT (or, with [`AntParams::baseline`], train that fixed
    /// architecture) on `data` (a seeded `valid_fraction` of it, of each class
    /// for classification, is held out for validation: see [`ValidSplit`]). `device` is a plain device (e.g. `Device::flex()`); autodiff is added
    /// for training.
    pub fn fit(
        params: AntParams,
        data: &Dataset,
        device: &Device,
        observer: &mut dyn Observer,
    ) -> Result<Ant> {
        Self::fit_inner(params, data, device, observer, None)
    }

    /// [`Ant::fit`], saving its state after every epoch in `checkpoints`. Given the
    /// checkpoints of an interrupted run ([`Checkpoints::open`]) and the same parameters,
    /// data and thread count, it continues that run from its last saved epoch and ends
    /// with the tree the uninterrupted run would have grown.
    pub fn fit_checkpointed(
        params: AntParams,
        data: &Dataset,
        device: &Device,
        observer: &mut dyn Observer,
        checkpoints: &Checkpoints,
    ) -> Result<Ant> {
        Self::fit_inner(params, data, device, observer, Some(checkpoints))
    }

    fn fit_inner(
        params: AntParams,
        data: &Dataset,
        device: &Device,
        observer: &mut dyn Observer,
        checkpoints: Option<&Checkpoints>,
    ) -> Result<Ant> {
        let cfg = params.check()?;
        let input = check_training_data(&cfg, data)?;
        let task = task_of(data);
        let (provenance, train, valid) = validation_rows(&cfg, data, observer);
        let norm = Normalisation::fit(&train, input, cfg.image_norm);
        let metric = MetricCtx {
            task,
            y_std: norm.y_std.clone(),
        };
        let base = device.clone().without_autodiff();
        let tset = training_set(&cfg, &train, &norm, input, &base);
        let vset = to_device(&valid, &norm, input, &base);
        let ad = base.clone().autodiff();
        crate::device::seed_draws(cfg.seed);
        let data = GrowthData {
            task,
            train: &tset,
            valid: &vset,
            metric: &metric,
            device: &ad,
            checkpoints,
        };
        if let Some(c) = checkpoints {
            c.track_augmenter(tset.augment.clone());
        }
        let ((tree, valid_nll, valid_metric), decisions) = match cfg.baseline {
            Some(b) => {
                let fixed = train_fixed(&cfg, input, data, observer)?;
                let why = || format!("baseline {b} does not fit inputs of shape {input}");
                (fixed.ok_or_else(|| AntError::param(why()))?, vec![])
            }
            None => {
                let grown = grow(&cfg, data, input, observer)?;
                let decisions = grown.decisions.clone();
                (refine(&cfg, grown, data, observer)?, decisions)
            }
        };
        if !valid_nll.is_finite() || !valid_metric.is_finite() {
            return Err(AntError::Diverged {
                valid_nll,
                valid_metric,
            });
        }
        let meta = ModelMeta {
            format: FORMAT.into(),
            preset: cfg.preset,
            task,
            topology: tree.topology.clone(),
            normalisation: norm,
            class_names: None,
            config: cfg,
            provenance,
            valid_nll,
            valid_metric,
            decisions,
        };
        Ok(Ant {
            tree: Tree::new(tree.topology, tree.modules.valid()),
            meta,
            device: base,
        })
    }

    pub fn task(&self) -> Task {
        self.meta.task
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    fn input_shape(&self) -> Shape {
        self.tree.topology.input
    }

    /// Check that `data` fits the model's input (and targets, when `with_targets`).
    fn check_data(&self, data: &Dataset, with_targets: bool) -> Result<()> {
        crate::data::check_fits(data, self.input_shape(), self.task(), with_targets)?;
        Ok(())
    }

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
                (to_f32(mixture_prediction(&leaves, task)), greedy)
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

    /// Mean reach probability of every node over `data`'s samples.
    pub fn node_reach(&self, data: &Dataset) -> Result<Vec<f64>> {
        self.check_data(data, false)?;
        let x = self.normalised_inputs(data, self.input_shape());
        let view = self.tree.view();
        let leaves_idx = self.tree.topology.leaves();
        let mut sums = vec![0f64; leaves_idx.len()];
        for (s, len) in crate::train::chunks(data.len(), EVAL_CHUNK) {
            let (leaves, _) = view.forward_leaves(x.narrow(s, len), None);
            let r = to_f32(reach_probs(&leaves, len, &self.device));
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
            let r = to_f32(reach_probs(&leaves, len, &self.device));
            for (b, row) in r.chunks(leaves.len()).enumerate() {
                let o = &mut out[(s + b) * m..(s + b + 1) * m];
                for (j, p) in row.iter().enumerate() {
                    paths[j].iter().for_each(|&n| o[n] += p);
                }
            }
        }
        Ok(out)
    }

    /// A copy without the subtrees whose mean reach over `valid` is below `min_reach`.
    pub fn pruned(&self, valid: &Dataset, min_reach: f64) -> Result<(Ant, PruneReport)> {
        if !(0.0..=1.0).contains(&min_reach) {
            let reason = format!("must be in [0, 1], got {min_reach}");
            return Err(AntError::invalid("min_reach", reason));
        }
        let reach = self.node_reach(valid)?;
        let (tree, report) = prune(&self.tree, &reach, min_reach);
        let mut meta = self.meta.clone();
        meta.topology = tree.topology.clone();
        Ok((
            Ant {
                tree,
                meta,
                device: self.device.clone(),
            },
            report,
        ))
    }

    /// Mean NLL and metric on `data` (multi-path), as during training.
    pub fn score_nll(&self, data: &Dataset) -> Result<(f64, f64)> {
        self.check_data(data, true)?;
        let set = to_device(
            data,
            &self.meta.normalisation,
            self.input_shape(),
            &self.device,
        );
        let metric = MetricCtx {
            task: self.task(),
            y_std: self.meta.normalisation.y_std.clone(),
        };
        Ok(evaluate(self.tree.view(), &set, &metric, EVAL_CHUNK))
    }

    fn normalised_inputs(&self, data: &Dataset, input: Shape) -> Repr {
        let x = self.meta.normalisation.apply_x(&data.x, input);
        Repr::from_vec(x, data.len(), input, &self.device)
    }

    /// Save the model into `dir` as one unit: the weights go to a new file named by their
    /// checksum, then `tree.json`, which names that file, replaces the old one (the one
    /// atomic switch), then the weights files no `tree.json` names any more are removed.
    /// Interrupted at any point, `dir` holds the old model or the new one, whole.
    pub fn save(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| AntError::io(dir, e))?;
        let bytes = self.weights_bytes()?;
        let weights = WeightsRef::of(&bytes);
        let wp = dir.join(&weights.file);
        // The same weights may be there already (the same model saved again).
        let new = !wp.exists();
        write_atomic(&wp, &bytes)?;
        let json = self.tree_json(&weights)?;
        if let Err(e) = write_atomic(&dir.join(TREE_FILE), &json) {
            // Not switched: the old model stays, alone.
            if new {
                let _ = std::fs::remove_file(&wp);
            }
            return Err(e);
        }
        // The old model's weights (and those of interrupted saves) are no longer named.
        let entries = std::fs::read_dir(dir).map_err(|e| AntError::io(dir, e))?;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if WeightsRef::is_weights_name(&name) && name != weights.file {
                crate::persist::remove_file(&e.path())?;
            }
        }
        Ok(())
    }

    /// The bytes [`Ant::save`] writes: `tree.json` (which names the weights file by its
    /// checksum) and the weights file. [`Ant::from_bytes`] reads them back.
    pub fn to_bytes(&self) -> Result<(Vec<u8>, Vec<u8>)> {
        let bytes = self.weights_bytes()?;
        let json = self.tree_json(&WeightsRef::of(&bytes))?;
        Ok((json, bytes))
    }

    /// The weights as a safetensors file: the same weights give the same bytes.
    fn weights_bytes(&self) -> Result<Vec<u8>> {
        // One metadata entry: burn's default entries are a hash map, written in a random
        // order, and the same weights must give the same bytes (the file is named by them).
        let mut store = SafetensorsStore::from_bytes(None)
            .skip_enum_variants(true)
            .clear_metadata()
            .metadata("producer", "ant");
        self.tree
            .modules
            .save_into(&mut store)
            .map_err(|e| AntError::model(format!("saving weights: {e}")))?;
        store
            .get_bytes()
            .map_err(|e| AntError::model(format!("saving weights: {e}")))
    }

    /// `tree.json`: the model's description, naming the weights file it belongs with.
    fn tree_json(&self, weights: &WeightsRef) -> Result<Vec<u8>> {
        let file = TreeFileOut {
            meta: &self.meta,
            weights,
        };
        serde_json::to_vec_pretty(&file).map_err(|e| AntError::model(e.to_string()))
    }

    /// Load a model saved by [`Ant::save`]. The weights must be the ones `tree.json`
    /// names (same checksum): a `tree.json` beside another model's weights is refused.
    pub fn load(dir: impl AsRef<Path>, device: &Device) -> Result<Ant> {
        let (meta, wp, bytes) = read_model_files(dir.as_ref())?;
        Ant::assemble(meta, &wp, bytes, device)
    }

    /// A model from the bytes of a `tree.json` and of its weights file, checked as
    /// [`Ant::load`] checks files, but for the weights' checksum (that ties two files
    /// together; here the caller holds both).
    pub fn from_bytes(tree_json: &[u8], weights: &[u8], device: &Device) -> Result<Ant> {
        let meta = parse_meta(tree_json, Path::new(TREE_FILE))?;
        Ant::assemble(meta, Path::new("weights"), weights.to_vec(), device)
    }

    /// The model `meta` describes with the weights `bytes` (read from `wp`).
    fn assemble(meta: ModelMeta, wp: &Path, bytes: Vec<u8>, device: &Device) -> Result<Ant> {
        // Checked before any allocation: a small file cannot ask for a huge model.
        let params = meta.topology.num_params();
        if bytes.len() / 4 < params {
            let msg = format!(
                "holds {} bytes, too few for the {params} weights tree.json describes",
                bytes.len()
            );
            return Err(AntError::data(wp, msg));
        }
        let device = device.clone().without_autodiff();
        let mut modules = TreeModules::init(&meta.topology, &device);
        let mut store = SafetensorsStore::from_bytes(Some(bytes)).skip_enum_variants(true);
        let res = modules
            .load_from(&mut store)
            .map_err(|e| AntError::data(wp, format!("bad weights: {e}")))?;
        if !res.missing.is_empty() || !res.errors.is_empty() {
            return Err(AntError::data(
                wp,
                format!(
                    "weights do not match tree.json (missing {:?}, errors {:?})",
                    res.missing, res.errors
                ),
            ));
        }
        if !all_finite(&modules) {
            return Err(AntError::data(
                wp,
                "holds weights that are not finite (NaN or inf)",
            ));
        }
        let tree = Tree::new(meta.topology.clone(), modules);
        Ok(Ant { tree, meta, device })
    }
}

/// `tree.json`'s model description, checked: anything it says must be possible.
fn parse_meta(text: &[u8], tp: &Path) -> Result<ModelMeta> {
    let meta: ModelMeta = serde_json::from_slice(text)
        .map_err(|e| AntError::data(tp, format!("not a model file: {e}")))?;
    if meta.format != FORMAT {
        return Err(AntError::data(
            tp,
            format!("unknown format {:?}", meta.format),
        ));
    }
    meta.check(tp)?;
    Ok(meta)
}

/// The most bytes a `tree.json` can take (its topology and growth decisions, with room).
const MAX_TREE_BYTES: u64 = 256 << 20;

/// The most bytes the weights of `meta`'s tree can take: its weights as f32 (f64 at
/// most) and the safetensors header, with room.
fn max_weights_bytes(meta: &ModelMeta) -> u64 {
    (meta.topology.num_params() as u64).saturating_mul(8) + (64 << 20)
}

/// `tree.json` (checked) and the bytes of the weights file it belongs with, and that
/// file's path. A save that switches the model meanwhile may remove the weights the
/// `tree.json` read first names: the files are then read again.
fn read_model_files(dir: &Path) -> Result<(ModelMeta, std::path::PathBuf, Vec<u8>)> {
    let tp = dir.join(TREE_FILE);
    let read_tree = |tp: &Path| read_bounded(tp, MAX_TREE_BYTES).map_err(|e| AntError::io(tp, e));
    let mut text = read_tree(&tp)?;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let meta = parse_meta(&text, &tp)?;
        let weights = serde_json::from_slice::<TreeFileWeights>(&text)
            .map_err(|e| AntError::data(&tp, format!("not a model file: {e}")))?
            .weights;
        let Some(w) = weights else {
            let wp = dir.join(LEGACY_WEIGHTS_FILE);
            let bytes =
                read_bounded(&wp, max_weights_bytes(&meta)).map_err(|e| AntError::io(&wp, e))?;
            return Ok((meta, wp, bytes));
        };
        if !WeightsRef::is_weights_name(&w.file) || w.file.contains(['/', '\\']) {
            let msg = format!(
                "names {:?} as its weights file: not a weights file name",
                w.file
            );
            return Err(AntError::data(&tp, msg));
        }
        let wp = dir.join(&w.file);
        let bytes = match read_bounded(&wp, max_weights_bytes(&meta)) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt <= 3 => {
                let again = read_tree(&tp)?;
                if again == text {
                    let msg = format!(
                        "the weights file {} that tree.json names is missing",
                        w.file
                    );
                    return Err(AntError::data(&tp, msg));
                }
                text = again;
                continue;
            }
            Err(e) => return Err(AntError::io(&wp, e)),
        };
        let md5 = crate::data::md5_hex(&bytes);
        if md5 != w.md5 {
            let msg = format!(
                "does not belong with {}: its checksum is {md5}, tree.json expects {}",
                tp.display(),
                w.md5
            );
            return Err(AntError::data(&wp, msg));
        }
        return Ok((meta, wp, bytes));
    }
}

/// The training and validation rows training splits `data` into, and the provenance
/// that records how; a validation set without some of the classes is warned about.
fn validation_rows(
    cfg: &TrainConfig,
    data: &Dataset,
    observer: &mut dyn Observer,
) -> (Provenance, Dataset, Dataset) {
    let rule = ValidSplit::for_training(cfg, data);
    let (train, valid) = rule.apply(data);
    if let Some(msg) = missing_classes_warning(&train, &valid, "validation", None) {
        tracing::warn!("{msg}");
        observer.warning(&msg);
    }
    let provenance = Provenance::library(data, train.len(), valid.len(), rule);
    (provenance, train, valid)
}

/// A warning when `set` (named `what`) lacks classes that `train` has: its scores then
/// say nothing about them. `names` are the class names, when known.
pub fn missing_classes_warning(
    train: &Dataset,
    set: &Dataset,
    what: &str,
    names: Option<&[String]>,
) -> Option<String> {
    let missing = train.classes_missing_from(set);
    if missing.is_empty() {
        return None;
    }
    let names: Vec<String> = missing
        .iter()
        .map(|&c| match names.and_then(|n| n.get(c)) {
            Some(name) if *name != c.to_string() => format!("{c} ({name})"),
            _ => c.to_string(),
        })
        .collect();
    Some(format!(
        "the {what} set ({} samples) has no samples of class {} that the training set has: its scores say nothing about them",
        set.len(),
        names.join(", ")
    ))
}

/// Whether every weight of `modules` is a finite number.
fn all_finite(modules: &TreeModules) -> bool {
    struct Finite(bool);
    impl burn::module::ModuleVisitor for Finite {
        fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
            let t = param.val();
            self.0 &= !(t.clone().is_nan().any().into_scalar::<bool>()
                || t.is_inf().any().into_scalar::<bool>());
        }
    }
    let mut v = Finite(true);
    modules.visit(&mut v);
    v.0
}

fn to_f32(t: Tensor<2>) -> Vec<f32> {
    t.into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .expect("f32 data")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AntParams, Preset};

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
        let last = ValidSplit::for_training(&cfg(ValidRows::Last), &data);
        assert_eq!(last, ValidSplit::Tail { fraction: 0.1 });
        let (train, valid) = last.apply(&data);
        assert_eq!(firsts(&valid), vec![36, 37, 38, 39]);
        assert_eq!(train.len(), 36);
        let drawn = ValidSplit::for_training(&cfg(ValidRows::Drawn), &data);
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
