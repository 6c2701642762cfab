//! Training parameters: unchecked [`AntParams`] (burn's `Config`: defaults and
//! `with_*` setters) -> validated [`TrainConfig`] (linfa's param-guard idea): a
//! `TrainConfig` cannot be made or changed outside this crate, so it stays consistent.

use burn::config::Config;
use serde::{Deserialize, Serialize};

use crate::baseline::Baseline;
use crate::error::AntError;
pub use crate::model::ValidRows;
use crate::named::named;
pub use crate::normalise::ImageNorm;
use crate::preset::{Ablation, Preset};
use crate::train::Augment;
pub use crate::train::Select;

/// How the two children of a split start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Init {
    /// Both children start from the parent's solver (with a little noise, so the router
    /// gets a gradient). Such a split must also beat the parent's solver trained on
    /// alone for as long, so that its gain comes from routing.
    Inherit,
    /// Freshly initialised solvers (the default: as good on MNIST, smaller and faster).
    #[default]
    Fresh,
}

/// How a split's new router starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouterInit {
    /// Standard random initialisation (as the paper).
    #[default]
    Default,
    /// Rescaled so that it starts by sending half the leaf's training samples each way,
    /// with decisions well away from 0.5 (breaks the symmetry between the new children).
    Centred,
}

named!(Init {
    Inherit => "inherit",
    Fresh => "fresh",
});

named!(RouterInit {
    Default => "default",
    Centred => "centred",
});

/// The widest FC transformer [`AntParams::check`] accepts: wider ones would not fit in
/// memory (the allocation would abort the process) long before they helped.
pub const MAX_WIDTH: usize = 16_384;

/// Validated training settings: made only by [`AntParams::check`], read through
/// [`TrainConfig::params`]; the crate reads the fields directly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    pub(crate) preset: Preset,
    pub(crate) ablation: Ablation,
    pub(crate) init: Init,
    /// Epoch cap per growth candidate (patience usually stops earlier).
    pub(crate) epochs_node: usize,
    pub(crate) patience: usize,
    pub(crate) refine_epochs: usize,
    pub(crate) max_depth: usize,
    /// Width of FC transformers (sarcos, tabular).
    pub(crate) width: usize,
    pub(crate) batch_size: usize,
    pub(crate) lr: f64,
    pub(crate) seed: u64,
    /// Fraction of the training samples held out for validation (seeded; per class for
    /// classification).
    pub(crate) valid_fraction: f64,
    /// Augmentation of training images (the paper's for CIFAR-10: crop + flip).
    #[serde(default)]
    pub(crate) augment: Augment,
    #[serde(default)]
    pub(crate) router_init: RouterInit,
    /// Weight of the load-balancing penalty on a split's new router during growth
    /// (0: off, as the paper).
    #[serde(default)]
    pub(crate) router_balance: f64,
    /// Weight of the decision-entropy penalty on a split's new router during growth
    /// (0: off, as the paper).
    #[serde(default)]
    pub(crate) router_confidence: f64,
    /// A fixed architecture trained instead of growing an ANT (`None`: an ANT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline: Option<Baseline>,
    /// How training images are scaled.
    #[serde(default)]
    pub(crate) image_norm: ImageNorm,
    /// Which validation score picks the best refinement epoch (growth always decides on
    /// the NLL).
    #[serde(default)]
    pub(crate) select: Select,
    /// Which training rows are held out for validation.
    #[serde(default)]
    pub(crate) valid_rows: ValidRows,
}

impl TrainConfig {
    /// The settings as unchecked parameters (every choice explicit).
    pub fn params(&self) -> AntParams {
        let c = self.clone();
        AntParams {
            preset: c.preset,
            ablation: c.ablation,
            init: c.init,
            epochs_node: c.epochs_node,
            patience: c.patience,
            refine_epochs: Some(c.refine_epochs),
            max_depth: c.max_depth,
            width: c.width,
            batch_size: c.batch_size,
            lr: c.lr,
            seed: c.seed,
            valid_fraction: c.valid_fraction,
            augment: Some(c.augment),
            router_init: c.router_init,
            router_balance: c.router_balance,
            router_confidence: c.router_confidence,
            baseline: c.baseline,
            image_norm: c.image_norm,
            select: c.select,
            valid_rows: c.valid_rows,
        }
    }

    pub fn preset(&self) -> Preset {
        self.preset
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn valid_fraction(&self) -> f64 {
        self.valid_fraction
    }

    /// The fixed architecture trained instead of an ANT, if any.
    pub fn baseline(&self) -> Option<Baseline> {
        self.baseline
    }
}

/// Unchecked training parameters, with the paper's defaults (one definition each, here).
/// `AntParams::new(preset).with_max_depth(4)...`; [`AntParams::check`] validates.
#[derive(Config, Debug, PartialEq)]
pub struct AntParams {
    /// The paper's module choices (Table 2).
    pub preset: Preset,
    #[config(default = "Ablation::None")]
    pub ablation: Ablation,
    /// How the two children of a split start.
    #[config(default = "Init::Fresh")]
    pub init: Init,
    /// Epoch cap per growth candidate (patience usually stops earlier).
    #[config(default = 100)]
    pub epochs_node: usize,
    /// Epochs without a validation improvement before a candidate stops.
    #[config(default = 5)]
    pub patience: usize,
    /// Refinement epochs; `None`: the paper's for the preset.
    pub refine_epochs: Option<usize>,
    /// Levels of growth at most.
    #[config(default = 10)]
    pub max_depth: usize,
    /// Width of FC transformers (sarcos, tabular).
    #[config(default = "crate::preset::DEFAULT_WIDTH")]
    pub width: usize,
    #[config(default = 512)]
    pub batch_size: usize,
    /// Adam's learning rate.
    #[config(default = 1e-3)]
    pub lr: f64,
    #[config(default = 0)]
    pub seed: u64,
    /// Fraction of the training samples held out for validation (seeded; per class for
    /// classification).
    #[config(default = 0.1)]
    pub valid_fraction: f64,
    /// Augmentation of training images; `None`: the paper's for the preset (crop + flip
    /// for CIFAR-10, none otherwise).
    pub augment: Option<Augment>,
    /// How a split's new router starts.
    #[config(default = "RouterInit::Default")]
    pub router_init: RouterInit,
    /// Weight of the load-balancing penalty on a split's new router during growth
    /// (0: off, as the paper).
    #[config(default = 0.0)]
    pub router_balance: f64,
    /// Weight of the decision-entropy penalty on a split's new router during growth
    /// (0: off, as the paper).
    #[config(default = 0.0)]
    pub router_confidence: f64,
    /// Train this fixed architecture instead of growing an ANT: no growth, every module
    /// trained together for at most `refine_epochs` epochs, stopped by `patience`.
    pub baseline: Option<Baseline>,
    /// How training images are scaled: the mean subtracted (the paper), or also divided
    /// by the standard deviation.
    #[config(default = "ImageNorm::Mean")]
    pub image_norm: ImageNorm,
    /// Which validation score picks the best refinement epoch, and whether refinement
    /// beat the grown tree: NLL, or the error (ties broken by NLL).
    #[config(default = "Select::Nll")]
    pub select: Select,
    /// Which rows are held out for validation: a seeded draw (stratified by class for
    /// classification), or the last `valid_fraction` of the rows as they were read.
    #[config(default = "ValidRows::Drawn")]
    pub valid_rows: ValidRows,
}

impl AntParams {
    /// Check every setting; the error names the first bad parameter.
    pub fn check(self) -> crate::Result<TrainConfig> {
        let c = self;
        let at_least_1 = [
            ("epochs_node", c.epochs_node),
            ("patience", c.patience),
            ("width", c.width),
            ("batch_size", c.batch_size),
        ];
        for (name, v) in at_least_1 {
            if v == 0 {
                return Err(AntError::invalid(name, "must be at least 1"));
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
        if !(c.lr.is_finite() && c.lr > 0.0) {
            let reason = format!("must be a positive number, got {}", c.lr);
            return Err(AntError::invalid("lr", reason));
        }
        for (name, w) in [
            ("router_balance", c.router_balance),
            ("router_confidence", c.router_confidence),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return Err(AntError::invalid(
                    name,
                    format!("must be a number >= 0, got {w}"),
                ));
            }
        }
        if !(c.valid_fraction > 0.0 && c.valid_fraction < 1.0) {
            let reason = format!("must be in (0, 1), got {}", c.valid_fraction);
            return Err(AntError::invalid("valid_fraction", reason));
        }
        let preset = c.preset;
        let refine_epochs = c.refine_epochs.unwrap_or(preset.paper_refine_epochs());
        if let Some(b) = c.baseline {
            check_baseline(b, c.ablation, refine_epochs)?;
        }
        Ok(TrainConfig {
            preset,
            ablation: c.ablation,
            init: c.init,
            epochs_node: c.epochs_node,
            patience: c.patience,
            refine_epochs,
            max_depth: c.max_depth,
            width: c.width,
            batch_size: c.batch_size,
            lr: c.lr,
            seed: c.seed,
            valid_fraction: c.valid_fraction,
            augment: c.augment.unwrap_or(preset.paper_augment()),
            router_init: c.router_init,
            router_balance: c.router_balance,
            router_confidence: c.router_confidence,
            baseline: c.baseline,
            image_norm: c.image_norm,
            select: c.select,
            valid_rows: c.valid_rows,
        })
    }
}

/// A baseline's settings: it does not grow, and all its training is the refinement loop.
fn check_baseline(b: Baseline, ablation: Ablation, refine_epochs: usize) -> crate::Result<()> {
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

    #[test]
    fn defaults_are_the_papers() {
        let c = AntParams::new(Preset::MnistC).check().unwrap();
        assert_eq!(
            (c.epochs_node, c.patience, c.batch_size, c.refine_epochs),
            (100, 5, 512, 100)
        );
        assert_eq!(
            AntParams::new(Preset::Sarcos)
                .check()
                .unwrap()
                .refine_epochs,
            300
        );
        assert_eq!(
            AntParams::new(Preset::Cifar10A)
                .check()
                .unwrap()
                .refine_epochs,
            200
        );
    }

    #[test]
    fn bad_values_are_refused() {
        let p = || AntParams::new(Preset::MnistC);
        let name = |p: AntParams| match p.check() {
            Err(AntError::InvalidParam { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(name(p().with_lr(-1.0)), "lr");
        assert_eq!(name(p().with_batch_size(0)), "batch_size");
        assert_eq!(name(p().with_valid_fraction(1.0)), "valid_fraction");
        assert_eq!(name(p().with_router_balance(f64::NAN)), "router_balance");
        assert_eq!(name(p().with_width(0)), "width");
        assert_eq!(name(p().with_width(MAX_WIDTH + 1)), "width");
        assert!(p().with_width(MAX_WIDTH).check().is_ok());
        let b = || p().with_baseline(Some(Baseline::Linear));
        assert_eq!(name(b().with_ablation(Ablation::NoRouter)), "ablation");
        assert_eq!(name(b().with_refine_epochs(Some(0))), "refine_epochs");
        let deep = |layers| p().with_baseline(Some(Baseline::Mlp { layers }));
        assert_eq!(name(deep(crate::baseline::MAX_MLP_LAYERS + 1)), "baseline");
        assert_eq!(name(deep(0)), "baseline");
        assert!(b().check().is_ok());
    }

    #[test]
    fn checked_settings_read_back_as_the_same_params() {
        let c = AntParams::new(Preset::Cifar10A)
            .with_seed(3)
            .check()
            .unwrap();
        assert_eq!(c.augment, Augment::CropFlip);
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
    }
}
