//! Training parameters, declared once: [`AntParams`] (unchecked; burn's `Config`: the
//! paper's defaults and `with_*` setters) -> [`AntParams::check`] -> [`TrainConfig`] (a
//! newtype over the same struct, linfa's param-guard idea: made only by `check`, read
//! through `Deref`, never changed). The same field list is `ant train`'s options (clap
//! derives, with the `cli` feature), the Python keyword arguments and their defaults
//! (through serde), and the record in `tree.json` and `run.json`.

use std::ops::Deref;
use std::path::{Path, PathBuf};

use burn::config::Config;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::baseline::Baseline;
use crate::data::split::ValidRows;
use crate::error::AntError;
use crate::choices::{Accept, Augment, ImageNorm, Init, RouterInit, Select};
use crate::pool::PoolRule;
use crate::preset::{Ablation, Preset};

/// The widest FC transformer [`AntParams::check`] accepts: wider ones would not fit in
/// memory (the allocation would abort the process) long before they helped.
pub(crate) const MAX_WIDTH: usize = 16_384;
/// The most epochs a growth candidate or refinement may run (the paper's longest
/// schedule is a few hundred).
pub(crate) const MAX_EPOCHS: usize = 100_000;

/// A model directory a parameter names (`--init-from`): any path the system takes,
/// written in JSON as text, or as its bytes where it is not Unicode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ModelDir(#[serde(with = "crate::path_json")] pub PathBuf);

impl<P: Into<PathBuf>> From<P> for ModelDir {
    fn from(p: P) -> ModelDir {
        ModelDir(p.into())
    }
}

/// The defaults `--help` shows (those that depend on the preset are options left unset).
#[cfg(feature = "cli")]
fn defaults() -> AntParams {
    AntParams::new(Preset::Tabular)
}

/// Unchecked training parameters, with the paper's defaults (one definition each, here).
/// `AntParams::new(preset).with_max_depth(4)...`; [`AntParams::check`] validates.
/// Each field is also the `ant train` option of the same name (`--epochs-node`) and the
/// Python keyword (`epochs_node`).
#[derive(Config, Debug, PartialEq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AntParams {
    /// Module preset (paper, Table 2).
    // `resume` is `ant train --resume`, which takes every parameter from its run.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_enum, required_unless_present = "resume")
    )]
    pub(crate) preset: Preset,
    /// Which growth options exist: none (split and deepen), no-router (only deepen: a
    /// grown CNN), no-transformer (only split, identity edges: an HME).
    #[config(default = "Ablation::None")]
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = defaults().ablation))]
    pub(crate) ablation: Ablation,
    /// How split children start: from the parent's solver, or fresh.
    #[config(default = "Init::Fresh")]
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = defaults().init))]
    pub(crate) init: Init,
    /// Epoch cap per growth candidate (patience usually stops earlier).
    #[config(default = 100)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().epochs_node))]
    pub(crate) epochs_node: usize,
    /// Epochs without a validation improvement before a candidate (or a baseline) stops
    /// (default: the paper's 5).
    #[cfg_attr(feature = "cli", arg(long))]
    pub(crate) patience: Option<usize>,
    /// Refinement epochs (default: the paper's for the preset: sarcos 300, mnist 100,
    /// cifar10 200); lr /10 at every multiple of 50.
    #[cfg_attr(feature = "cli", arg(long))]
    pub(crate) refine_epochs: Option<usize>,
    /// Levels of growth at most.
    #[config(default = 10)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().max_depth))]
    pub(crate) max_depth: usize,
    /// Width of FC transformers (sarcos, tabular).
    #[config(default = "crate::preset::DEFAULT_WIDTH")]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().width))]
    pub(crate) width: usize,
    /// Adam's batch size.
    #[config(default = 512)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().batch_size))]
    pub(crate) batch_size: usize,
    /// Adam's learning rate (epsilon 1e-8, as PyTorch).
    #[config(default = 1e-3)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().lr))]
    pub(crate) lr: f64,
    /// Seed of every random draw (initial weights, batches, validation rows).
    #[config(default = 0)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().seed))]
    pub(crate) seed: u64,
    /// Fraction of the training samples held out for validation.
    #[config(default = 0.1)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().valid_fraction))]
    pub(crate) valid_fraction: f64,
    /// Training-image augmentation, images only: `none` (the paper's MNIST; mnist presets'
    /// default), `crop-flip` (the paper's CIFAR-10; cifar10 presets' default) or `shift`
    /// (up to 2 pixels, the authors' code's MNIST option).
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    pub(crate) augment: Option<Augment>,
    /// How a split's router starts: `default` (random, as the paper) or `centred` (splits
    /// the leaf's samples in half with confident decisions).
    #[config(default = "RouterInit::Default")]
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = defaults().router_init))]
    pub(crate) router_init: RouterInit,
    /// Weight of a load-balancing penalty on each new router during growth (Frosst &
    /// Hinton): asks it to send, on average, half the reaching mass each way. 0: off.
    #[config(default = 0.0)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().router_balance))]
    pub(crate) router_balance: f64,
    /// Weight of a penalty on the entropy of each new router's decisions during growth:
    /// with --router-balance, the router learns to partition its samples. 0: off.
    #[config(default = 0.0)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults().router_confidence))]
    pub(crate) router_confidence: f64,
    /// Train a fixed architecture instead of growing an ANT, with the same data, Adam,
    /// checkpoints and model files: linear, mlp-K (K hidden layers of --width tanh
    /// units) or cnn (the preset's transformer repeated along one path). Trained for at
    /// most --refine-epochs epochs, stopped by --patience; the best on validation is kept.
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    pub(crate) baseline: Option<Baseline>,
    /// How images are scaled: `mean` subtracts each channel's mean (the paper), `mean-std`
    /// also divides by its standard deviation (the authors' code).
    #[config(default = "ImageNorm::Mean")]
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = defaults().image_norm))]
    pub(crate) image_norm: ImageNorm,
    /// Which validation score keeps the best refinement epoch (and decides whether
    /// refinement beat the grown tree): `metric` (error or MSE, ties by NLL; the paper's
    /// "validation accuracy"), or `nll`.
    #[config(default = "Select::Metric")]
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = defaults().select))]
    pub(crate) select: Select,
    /// Which training rows are held out for validation: `drawn` (seeded, stratified by
    /// class for classification) or `last` (the last --valid-fraction of the rows as read).
    #[config(default = "ValidRows::Drawn")]
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = defaults().valid_rows))]
    pub(crate) valid_rows: ValidRows,
    /// Which image transformers end in a 2x2 max pool: `authors-N` (the authors' code:
    /// the root's pools, then one after every N that do not; `authors` = `authors-1`) or
    /// `every` (the k-th of a path pools when k is a multiple of the preset's frequency).
    #[config(default = "PoolRule::Authors { interval: 1 }")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "RULE", default_value_t = defaults().pool_rule))]
    pub(crate) pool_rule: PoolRule,
    /// When growth keeps a split or deepen: `paper` (any gain of the validation NLL, the
    /// paper's rule) or `z:Z` (a mean per-row validation gain above Z standard errors of
    /// the paired per-row differences: smaller trees, but worse on full MNIST's held-out
    /// rows, docs/RESULTS.md).
    #[config(default = "Accept::Paper")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "RULE", default_value_t = defaults().accept))]
    pub(crate) accept: Accept,
    /// Start from a trained single-path CNN (the paper's `*` rows): DIR holds a model of
    /// `--baseline cnn` or `--ablation no-router` of the same preset on the same data.
    /// The transformer growth adds at depth k starts from the CNN's k-th, a solver on the
    /// CNN head's input from its head, a router from the CNN's next convolution.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR", value_parser = clap::builder::TypedValueParser::map(clap::builder::PathBufValueParser::new(), ModelDir)))]
    pub(crate) init_from: Option<ModelDir>,
}

/// Read access to each parameter, named as its field and its `ant train` option (set
/// them with the `with_*` methods). Options left to the preset (`patience`,
/// `refine_epochs`, `augment`) are `None` here; [`TrainConfig`] has their values.
impl AntParams {
    pub fn preset(&self) -> Preset {
        self.preset
    }

    pub fn ablation(&self) -> Ablation {
        self.ablation
    }

    pub fn init(&self) -> Init {
        self.init
    }

    pub fn epochs_node(&self) -> usize {
        self.epochs_node
    }

    pub fn patience(&self) -> Option<usize> {
        self.patience
    }

    pub fn refine_epochs(&self) -> Option<usize> {
        self.refine_epochs
    }

    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    pub fn lr(&self) -> f64 {
        self.lr
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn valid_fraction(&self) -> f64 {
        self.valid_fraction
    }

    pub fn augment(&self) -> Option<Augment> {
        self.augment
    }

    pub fn router_init(&self) -> RouterInit {
        self.router_init
    }

    pub fn router_balance(&self) -> f64 {
        self.router_balance
    }

    pub fn router_confidence(&self) -> f64 {
        self.router_confidence
    }

    pub fn baseline(&self) -> Option<Baseline> {
        self.baseline
    }

    pub fn image_norm(&self) -> ImageNorm {
        self.image_norm
    }

    pub fn select(&self) -> Select {
        self.select
    }

    pub fn valid_rows(&self) -> ValidRows {
        self.valid_rows
    }

    pub fn pool_rule(&self) -> PoolRule {
        self.pool_rule
    }

    pub fn accept(&self) -> Accept {
        self.accept
    }

    pub fn init_from(&self) -> Option<&Path> {
        self.init_from.as_ref().map(|d| d.0.as_path())
    }
}

/// Validated training settings: made only by [`AntParams::check`] (which also fills in
/// the preset's defaults), read through `Deref` and [`TrainConfig::refine_epochs`] /
/// [`TrainConfig::augment`] / [`TrainConfig::patience`], never changed.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig(AntParams);

impl Deref for TrainConfig {
    type Target = AntParams;
    fn deref(&self) -> &AntParams {
        &self.0
    }
}

impl TrainConfig {
    /// The settings as unchecked parameters (every choice explicit).
    pub fn params(&self) -> AntParams {
        self.0.clone()
    }

    /// Refinement epochs (the preset's when none were asked for).
    pub fn refine_epochs(&self) -> usize {
        self.0.refine_epochs.expect("check fills it in")
    }

    /// Training-image augmentation (the preset's when none was asked for).
    pub fn augment(&self) -> Augment {
        self.0.augment.expect("check fills it in")
    }

    /// Growth's patience (and a baseline's): the default for the augmentation when none
    /// was asked for.
    pub fn patience(&self) -> usize {
        self.0.patience.expect("check fills it in")
    }
}

impl Serialize for TrainConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A record is checked again when read: a hand-edited file cannot make a bad config.
impl<'de> Deserialize<'de> for TrainConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = recorded(d)?;
        p.check().map_err(serde::de::Error::custom)
    }
}

/// Parameters as a file recorded them (`run.json`, `tree.json`, `ensemble.json`): a key
/// the file lacks (it predates the option) takes the value that reproduces what ran
/// then, [`AntParams::legacy`].
pub(crate) fn recorded<'de, D: Deserializer<'de>>(d: D) -> Result<AntParams, D::Error> {
    use serde::de::Error;
    let mut v = serde_json::Value::deserialize(d)?;
    let obj = v
        .as_object_mut()
        .ok_or_else(|| D::Error::custom("training parameters must be a JSON object"))?;
    let preset = obj
        .get("preset")
        .cloned()
        .ok_or_else(|| D::Error::missing_field("preset"))?;
    let preset: Preset = serde_json::from_value(preset).map_err(D::Error::custom)?;
    let legacy = serde_json::to_value(AntParams::legacy(preset)).map_err(D::Error::custom)?;
    for (k, x) in legacy.as_object().expect("a struct is an object") {
        obj.entry(k.clone()).or_insert_with(|| x.clone());
    }
    serde_json::from_value(v).map_err(D::Error::custom)
}

impl AntParams {
    /// The names each named parameter accepts (`preset`: `sarcos`, `tabular`, ...), from
    /// the same declarations as `ant train`'s `--help`: for front ends (Python).
    #[cfg(feature = "cli")]
    pub fn choices() -> Vec<(String, Vec<String>)> {
        let cmd = <AntParams as clap::Args>::augment_args(clap::Command::new("ant"));
        cmd.get_arguments()
            .filter_map(|a| {
                let names: Vec<String> = a
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_string())
                    .collect();
                (!names.is_empty()).then(|| (a.get_id().to_string(), names))
            })
            .collect()
    }

    /// The parameters of a run recorded before the options that have since changed their
    /// default existed: the pooling rule was `every`, growth accepted any gain, MNIST was
    /// not augmented, patience was 5, refinement kept its best epoch by validation NLL.
    pub(crate) fn legacy(preset: Preset) -> AntParams {
        AntParams::new(preset)
            .with_pool_rule(PoolRule::Every)
            .with_accept(Accept::Paper)
            .with_augment(Some(default_augment(preset)))
            .with_patience(Some(PAPER_PATIENCE))
            .with_select(Select::Nll)
    }

    /// Check every setting and fill in the preset's defaults; the error names the first
    /// bad parameter.
    pub fn check(mut self) -> crate::error::Result<TrainConfig> {
        let c = &self;
        let at_least_1 = [
            ("epochs_node", c.epochs_node),
            ("patience", c.patience.unwrap_or(1)), // None: filled in below
            ("width", c.width),
            ("batch_size", c.batch_size),
        ];
        for (name, v) in at_least_1 {
            if v == 0 {
                return Err(AntError::invalid(name, "must be at least 1"));
            }
        }
        // A count of epochs past any run's length is a typo, not a schedule: refused
        // rather than trained until the machine is switched off.
        for (name, v) in [("epochs_node", c.epochs_node), ("refine_epochs", c.refine_epochs.unwrap_or(0))] {
            if v > MAX_EPOCHS {
                let reason = format!("must be at most {MAX_EPOCHS}, got {v}");
                return Err(AntError::invalid(name, reason));
            }
        }
        if c.width > MAX_WIDTH {
            let reason = format!(
                "must be at most {MAX_WIDTH}, got {} (a {MAX_WIDTH}x{MAX_WIDTH} layer already \
                 holds 268 million weights)",
                c.width
            );
            return Err(AntError::invalid("width", reason));
        }
        check_floats(c)?;
        check_uses(c)?;
        if !(c.valid_fraction > 0.0 && c.valid_fraction < 1.0) {
            let reason = format!("must be in (0, 1), got {}", crate::digits::number(c.valid_fraction));
            return Err(AntError::invalid("valid_fraction", reason));
        }
        // The parsers bound these; a struct built in code is checked here.
        if let Err(reason) = c.pool_rule.to_string().parse::<PoolRule>() {
            return Err(AntError::invalid("pool_rule", reason));
        }
        if let Err(reason) = c.accept.to_string().parse::<Accept>() {
            return Err(AntError::invalid("accept", reason));
        }
        let preset = c.preset;
        let refine_epochs = c.refine_epochs.unwrap_or(preset.paper_refine_epochs());
        if let Some(b) = c.baseline {
            check_baseline(b, c.ablation, refine_epochs)?;
        }
        self.refine_epochs = Some(refine_epochs);
        let augment = self.augment.unwrap_or(default_augment(preset));
        self.augment = Some(augment);
        self.patience = Some(self.patience.unwrap_or(PAPER_PATIENCE));
        Ok(TrainConfig(self))
    }
}

/// Training computes in f32: a float flag must be a finite f32 (1e40 is infinite there,
/// 1e-50 zero).
fn check_floats(c: &AntParams) -> crate::error::Result<()> {
    // Normal f32 values: the range the message gives is the range accepted (a
    // subnormal 1e-40 does not train), and a value is echoed in scientific notation
    // (1e-300 is not echoed as 300 digits).
    let lr32 = c.lr as f32;
    if !(c.lr.is_finite() && lr32.is_normal() && lr32 > 0.0) {
        let reason = format!(
            "must be a positive number that f32 holds ({:e} to {:e}), got {}",
            f32::MIN_POSITIVE,
            f32::MAX,
            crate::digits::number(c.lr)
        );
        return Err(AntError::invalid("lr", reason));
    }
    for (name, w) in [
        ("router_balance", c.router_balance),
        ("router_confidence", c.router_confidence),
    ] {
        if !(w.is_finite() && w >= 0.0 && (w as f32).is_finite()) {
            let reason = format!(
                "must be a number >= 0 that f32 holds (at most {:e}), got {}",
                f32::MAX,
                crate::digits::number(w)
            );
            return Err(AntError::invalid(name, reason));
        }
    }
    Ok(())
}

/// Options that would do nothing here: image augmentation of table rows, a pretrained
/// start of a model with no transformers to start.
fn check_uses(c: &AntParams) -> crate::error::Result<()> {
    if !c.preset.wants_images()
        && let Some(a) = c.augment
        && a != Augment::None
    {
        let reason = format!(
            "{a} moves image pixels; preset {} reads table rows (use none)",
            c.preset
        );
        return Err(AntError::invalid("augment", reason));
    }
    if c.init_from.is_some() {
        let clash = match (c.baseline, c.ablation) {
            (Some(b), _) => Some(format!("baseline {b}")),
            (None, Ablation::NoTransformer) => Some("--ablation no-transformer".into()),
            _ => None,
        };
        if let Some(what) = clash {
            let reason = format!("starts an ANT's transformers: {what} has none to start");
            return Err(AntError::invalid("init_from", reason));
        }
    }
    Ok(())
}

impl AntParams {
    /// Refuses an option set to other than its default where this run does nothing with
    /// it (`--image-norm` on table rows, `--width` of a conv preset, growth's options of
    /// a baseline), as `--augment` of table rows is, rather than recording it unused.
    /// Checked when a run starts, not when a saved model loads or a run resumes: those
    /// were started before.
    pub(crate) fn check_has_effect(&self) -> crate::error::Result<()> {
        match self.without_effect().into_iter().next() {
            Some((name, why)) => {
                let reason = format!("does nothing here: it {why}; leave it out");
                Err(AntError::invalid(name, reason))
            }
            None => Ok(()),
        }
    }

    /// The options set to other than their defaults that this run does nothing with,
    /// and what each does. The command line refuses them ([`Self::check_has_effect`]); a library
    /// fit warns of them, since scikit-learn's tools set parameters in bulk (a grid over
    /// presets keeps one `width`), as its estimators ignore what does not apply.
    pub(crate) fn without_effect(&self) -> Vec<(&'static str, String)> {
        let d = AntParams::new(self.preset);
        let grows = self.baseline.is_none();
        self.option_uses(&d, grows)
            .into_iter()
            .filter(|(_, given, used, _)| *given && !used)
            .map(|(name, _, _, why)| (name, why))
            .collect()
    }

    /// Each option that only some runs use: whether it differs from `d`'s (the
    /// defaults), whether this run uses it, and what it does.
    fn option_uses(&self, d: &AntParams, grows: bool) -> [(&'static str, bool, bool, String); 10] {
        let images = self.preset.wants_images();
        let routes = grows && self.ablation != Ablation::NoRouter;
        let images_only = format!("applies to images: preset {} reads table rows", self.preset);
        let routing = match grows {
            true => "routes samples: --ablation no-router grows no routers",
            false => "routes samples: a baseline has no routers",
        };
        // FC layers are an MLP baseline's, or the transformers of a flat preset's tree.
        let transformers = self.ablation != Ablation::NoTransformer;
        let fc_width = match self.baseline {
            Some(Baseline::Mlp { .. }) => true,
            Some(_) => false,
            None => !images && transformers,
        };
        let width = match (self.baseline, transformers) {
            (Some(Baseline::Mlp { .. }), _) => "sizes the hidden layers of an MLP".into(),
            (Some(b), _) => format!("sizes FC layers: baseline {b} has none"),
            (None, false) => "sizes FC transformers: --ablation no-transformer grows none".into(),
            (None, true) => format!("sizes FC layers: preset {}'s modules are convolutions", self.preset),
        };
        // Pools end image transformers: a tree's, or the cnn baseline's.
        let pools = images
            && match self.baseline {
                Some(b) => b == Baseline::Cnn,
                None => transformers,
            };
        let pool_why = match images {
            true => "ends image transformers in a pool: this run has none".to_string(),
            false => images_only.clone(),
        };
        let no_growth = |what: &str| format!("{what}: a baseline does not grow");
        [
            ("image_norm", self.image_norm != d.image_norm, images, images_only),
            ("pool_rule", self.pool_rule != d.pool_rule, pools, pool_why),
            ("width", self.width != d.width, fc_width, width),
            ("accept", self.accept != d.accept, grows, no_growth("decides growth")),
            ("init", self.init != d.init, routes, match grows {
                true => "starts a split's children: --ablation no-router never splits".into(),
                false => no_growth("starts a split's children"),
            }),
            ("epochs_node", self.epochs_node != d.epochs_node, grows, no_growth("trains growth's candidates")),
            (
                "max_depth",
                self.max_depth != d.max_depth,
                grows || self.baseline == Some(Baseline::Cnn),
                no_growth("bounds growth and the cnn baseline"),
            ),
            ("router_init", self.router_init != d.router_init, routes, routing.into()),
            ("router_balance", self.router_balance != d.router_balance, routes, routing.into()),
            ("router_confidence", self.router_confidence != d.router_confidence, routes, routing.into()),
        ]
    }
}

/// The paper's patience: growth candidates (and baselines) stop after 5 epochs without a
/// validation improvement, with or without augmentation.
pub(crate) const PAPER_PATIENCE: usize = 5;

/// The paper's augmentation of a preset's training images (section "Data"): CIFAR-10 is
/// padded by 4, randomly cropped and mirrored; MNIST only has its mean subtracted; tables
/// are not images.
pub(crate) fn default_augment(preset: Preset) -> Augment {
    match preset {
        Preset::Cifar10A | Preset::Cifar10B | Preset::Cifar10C => Augment::CropFlip,
        Preset::MnistA | Preset::MnistB | Preset::MnistC | Preset::Sarcos | Preset::Tabular => {
            Augment::None
        }
    }
}

/// A baseline's settings: it does not grow, and all its training is the refinement loop.
fn check_baseline(b: Baseline, ablation: Ablation, refine_epochs: usize) -> crate::error::Result<()> {
    if let Baseline::Mlp { layers } = b
        && !(1..=crate::baseline::MAX_MLP_LAYERS).contains(&layers)
    {
        let reason = format!(
            "mlp-{layers}: an MLP baseline has 1 to {} hidden layers",
            crate::baseline::MAX_MLP_LAYERS
        );
        return Err(AntError::invalid("baseline", reason));
    }
    if ablation != Ablation::None {
        let reason = format!("{ablation} applies to growth: a baseline does not grow");
        return Err(AntError::invalid("ablation", reason));
    }
    if refine_epochs == 0 {
        let reason = "must be at least 1 with a baseline (its only training)";
        return Err(AntError::invalid("refine_epochs", reason));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset's defaults against the paper's protocol (section "Data" and the
    /// training details): Adam 1e-3 in batches of 512, patience 5 on validation NLL, at
    /// most 100 epochs a node, a 10% validation set, refinement 300 / 100 / 200 epochs
    /// (SARCOS / MNIST / CIFAR-10), MNIST mean-subtracted and not augmented, CIFAR-10
    /// padded, cropped and mirrored, the best model kept by validation accuracy.
    #[test]
    fn defaults_are_the_papers() {
        use Preset::*;
        let presets = [
            (Sarcos, 300, Augment::None),
            (Tabular, 300, Augment::None),
            (MnistA, 100, Augment::None),
            (MnistB, 100, Augment::None),
            (MnistC, 100, Augment::None),
            (Cifar10A, 200, Augment::CropFlip),
            (Cifar10B, 200, Augment::CropFlip),
            (Cifar10C, 200, Augment::CropFlip),
        ];
        for (preset, refine, augment) in presets {
            let c = AntParams::new(preset).check().unwrap();
            let got = (
                c.epochs_node,
                c.patience(),
                c.batch_size,
                c.lr,
                c.valid_fraction,
            );
            assert_eq!(got, (100, 5, 512, 1e-3, 0.1), "{preset:?}");
            assert_eq!(
                (c.refine_epochs(), c.augment()),
                (refine, augment),
                "{preset:?}"
            );
            assert_eq!(c.select, Select::Metric, "{preset:?}");
            assert_eq!(c.image_norm, ImageNorm::Mean, "{preset:?}");
            assert_eq!(
                (c.ablation, c.init),
                (Ablation::None, Init::Fresh),
                "{preset:?}"
            );
            assert_eq!(
                (c.router_balance, c.router_confidence),
                (0.0, 0.0),
                "{preset:?}"
            );
            assert_eq!(c.router_init, RouterInit::Default, "{preset:?}");
            assert_eq!(c.baseline, None, "{preset:?}");
            // Growth keeps any gain of the validation NLL, as the paper.
            assert_eq!(c.accept, Accept::Paper, "{preset:?}");
            // Where the paper is silent: the authors' code's pooling.
            assert_eq!(c.pool_rule, PoolRule::Authors { interval: 1 }, "{preset:?}");
        }
        // Augmentation does not change the patience.
        let shifted = AntParams::new(MnistA).with_augment(Some(Augment::Shift));
        assert_eq!(shifted.check().unwrap().patience(), 5);
    }

    #[test]
    fn bad_values_are_refused() {
        let p = || AntParams::new(Preset::MnistC);
        let name = |p: AntParams| match p.check() {
            Err(AntError::InvalidParam {
                name: Some(name), ..
            }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(name(p().with_lr(-1.0)), "lr");
        assert_eq!(name(p().with_batch_size(0)), "batch_size");
        assert_eq!(name(p().with_valid_fraction(1.0)), "valid_fraction");
        assert_eq!(name(p().with_router_balance(f64::NAN)), "router_balance");
        // Finite in f64, not in the f32 that training computes in.
        assert_eq!(name(p().with_router_balance(1e40)), "router_balance");
        assert_eq!(name(p().with_router_confidence(1e39)), "router_confidence");
        assert_eq!(name(p().with_lr(1e40)), "lr");
        assert_eq!(name(p().with_lr(1e-50)), "lr");
        // A subnormal in f32, outside the range the message gives.
        assert_eq!(name(p().with_lr(1e-40)), "lr");
        // Image augmentation on a table does nothing: refused.
        let table = AntParams::new(Preset::Tabular);
        assert_eq!(
            name(table.clone().with_augment(Some(Augment::Shift))),
            "augment"
        );
        assert_eq!(
            name(AntParams::new(Preset::Sarcos).with_augment(Some(Augment::CropFlip))),
            "augment"
        );
        assert!(table.with_augment(Some(Augment::None)).check().is_ok());
        assert_eq!(name(p().with_width(0)), "width");
        assert_eq!(name(p().with_width(MAX_WIDTH + 1)), "width");
        assert!(p().with_width(MAX_WIDTH).check().is_ok());
        let b = || p().with_baseline(Some(Baseline::Linear));
        assert_eq!(name(b().with_ablation(Ablation::NoRouter)), "ablation");
        assert_eq!(name(b().with_refine_epochs(Some(0))), "refine_epochs");
        let deep = |layers| p().with_baseline(Some(Baseline::Mlp { layers }));
        assert_eq!(name(deep(crate::baseline::MAX_MLP_LAYERS + 1)), "baseline");
        assert_eq!(name(deep(0)), "baseline");
        let wide = PoolRule::Authors { interval: 1000 };
        assert_eq!(name(p().with_pool_rule(wide)), "pool_rule");
        assert_eq!(
            name(p().with_accept(Accept::Paired { z: f64::NAN })),
            "accept"
        );
        assert!(b().check().is_ok());
    }

    #[test]
    fn checked_settings_read_back_as_the_same_params() {
        let c = AntParams::new(Preset::Cifar10A)
            .with_seed(3)
            .check()
            .unwrap();
        assert_eq!(c.augment(), Augment::CropFlip);
        let mnist = AntParams::new(Preset::MnistC).check().unwrap();
        assert_eq!(mnist.augment(), Augment::None);
        let table = AntParams::new(Preset::Tabular).check().unwrap();
        assert_eq!(table.augment(), Augment::None);
        assert_eq!(c.params().check().unwrap(), c);
        let b = AntParams::new(Preset::Sarcos)
            .with_baseline(Some(Baseline::Mlp { layers: 3 }))
            .check()
            .unwrap();
        assert_eq!(b.params().check().unwrap(), b);
        let json = serde_json::to_value(&b).unwrap();
        assert_eq!(json["baseline"], "mlp-3");
        // Settings saved before baselines existed read as an ANT's.
        let mut old = serde_json::to_value(&c).unwrap();
        old.as_object_mut().unwrap().remove("baseline");
        let back: TrainConfig = serde_json::from_value(old).unwrap();
        assert_eq!(back.baseline, None);
        // Settings saved before the pooling and acceptance rules existed read as what
        // ran then, not as today's defaults.
        let mut old = serde_json::to_value(&c).unwrap();
        let obj = old.as_object_mut().unwrap();
        obj.remove("pool_rule");
        obj.remove("accept");
        obj.remove("select");
        let back: TrainConfig = serde_json::from_value(old).unwrap();
        assert_eq!(
            (back.pool_rule, back.accept, back.select),
            (PoolRule::Every, Accept::Paper, Select::Nll)
        );
        assert_eq!(back.seed, 3);
        // A hand-edited record is checked again.
        let mut bad = serde_json::to_value(&c).unwrap();
        bad["lr"] = serde_json::json!(-1.0);
        let e = serde_json::from_value::<TrainConfig>(bad).unwrap_err();
        assert!(e.to_string().contains("lr"), "{e}");
    }
}
