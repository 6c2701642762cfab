//! Training parameters: unchecked [`AntParams`] -> validated [`TrainConfig`] (linfa's
//! param-guard idea): a `TrainConfig` is always consistent.

use serde::{Deserialize, Serialize};

use crate::error::{AntError, Result};
use crate::preset::{Ablation, Preset};
use crate::train::Augment;

/// How the two children of a split start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum RouterInit {
    /// Standard random initialisation (as the paper).
    #[default]
    Default,
    /// Rescaled so that it starts by sending half the leaf's training samples each way,
    /// with decisions well away from 0.5 (breaks the symmetry between the new children).
    Centred,
}

/// Validated training settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    pub preset: Preset,
    pub ablation: Ablation,
    pub init: Init,
    /// Epoch cap per growth candidate (patience usually stops earlier).
    pub epochs_node: usize,
    pub patience: usize,
    pub refine_epochs: usize,
    pub max_depth: usize,
    /// Width of FC transformers (sarcos, tabular).
    pub width: usize,
    pub batch_size: usize,
    pub lr: f64,
    pub seed: u64,
    /// Fraction of the training samples held out (the last ones) for validation.
    pub valid_fraction: f64,
    /// Augmentation of training images (the paper's for CIFAR-10: crop + flip).
    #[serde(default)]
    pub augment: Augment,
    #[serde(default)]
    pub router_init: RouterInit,
    /// Weight of the load-balancing penalty on a split's new router during growth
    /// (0: off, as the paper).
    #[serde(default)]
    pub router_balance: f64,
    /// Weight of the decision-entropy penalty on a split's new router during growth
    /// (0: off, as the paper).
    #[serde(default)]
    pub router_confidence: f64,
}

/// Unchecked training parameters with the paper's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct AntParams(TrainConfig);

impl AntParams {
    /// The paper's defaults for `preset`.
    pub fn preset(preset: Preset) -> Self {
        AntParams(TrainConfig {
            preset,
            ablation: Ablation::None,
            init: Init::default(),
            epochs_node: 100,
            patience: 5,
            refine_epochs: preset.paper_refine_epochs(),
            max_depth: 10,
            width: crate::preset::DEFAULT_WIDTH,
            batch_size: 512,
            lr: 1e-3,
            seed: 0,
            valid_fraction: 0.1,
            router_init: RouterInit::Default,
            router_balance: 0.0,
            router_confidence: 0.0,
            augment: if preset.name().starts_with("cifar") {
                Augment::CropFlip
            } else {
                Augment::None
            },
        })
    }
    pub fn ablation(mut self, a: Ablation) -> Self {
        self.0.ablation = a;
        self
    }
    pub fn init(mut self, i: Init) -> Self {
        self.0.init = i;
        self
    }
    pub fn epochs_node(mut self, n: usize) -> Self {
        self.0.epochs_node = n;
        self
    }
    pub fn patience(mut self, n: usize) -> Self {
        self.0.patience = n;
        self
    }
    pub fn refine_epochs(mut self, n: usize) -> Self {
        self.0.refine_epochs = n;
        self
    }
    pub fn max_depth(mut self, n: usize) -> Self {
        self.0.max_depth = n;
        self
    }
    pub fn width(mut self, n: usize) -> Self {
        self.0.width = n;
        self
    }
    pub fn batch_size(mut self, n: usize) -> Self {
        self.0.batch_size = n;
        self
    }
    pub fn lr(mut self, lr: f64) -> Self {
        self.0.lr = lr;
        self
    }
    pub fn seed(mut self, s: u64) -> Self {
        self.0.seed = s;
        self
    }
    pub fn router_init(mut self, r: RouterInit) -> Self {
        self.0.router_init = r;
        self
    }
    pub fn router_balance(mut self, w: f64) -> Self {
        self.0.router_balance = w;
        self
    }
    pub fn router_confidence(mut self, w: f64) -> Self {
        self.0.router_confidence = w;
        self
    }
    pub fn augment(mut self, a: Augment) -> Self {
        self.0.augment = a;
        self
    }
    pub fn valid_fraction(mut self, f: f64) -> Self {
        self.0.valid_fraction = f;
        self
    }

    /// Check every setting; the error names the first bad one.
    pub fn check(self) -> Result<TrainConfig> {
        let c = self.0;
        let bad = |m: String| Err(AntError::Param(m));
        if c.epochs_node == 0 {
            return bad("--epochs-node must be at least 1".into());
        }
        if c.patience == 0 {
            return bad("--patience must be at least 1".into());
        }
        if c.width == 0 {
            return bad("--width must be at least 1".into());
        }
        if c.batch_size == 0 {
            return bad("--batch-size must be at least 1".into());
        }
        if !(c.lr.is_finite() && c.lr > 0.0) {
            return bad(format!("--lr must be a positive number, got {}", c.lr));
        }
        if !(c.router_balance.is_finite() && c.router_balance >= 0.0) {
            return bad(format!(
                "--router-balance must be a number >= 0, got {}",
                c.router_balance
            ));
        }
        if !(c.router_confidence.is_finite() && c.router_confidence >= 0.0) {
            return bad(format!(
                "--router-confidence must be a number >= 0, got {}",
                c.router_confidence
            ));
        }
        if !(c.valid_fraction > 0.0 && c.valid_fraction < 1.0) {
            return bad(format!(
                "validation fraction must be in (0, 1), got {}",
                c.valid_fraction
            ));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers() {
        let c = AntParams::preset(Preset::MnistC).check().unwrap();
        assert_eq!(
            (c.epochs_node, c.patience, c.batch_size, c.refine_epochs),
            (100, 5, 512, 100)
        );
        assert_eq!(
            AntParams::preset(Preset::Sarcos)
                .check()
                .unwrap()
                .refine_epochs,
            300
        );
        assert_eq!(
            AntParams::preset(Preset::Cifar10A)
                .check()
                .unwrap()
                .refine_epochs,
            200
        );
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(AntParams::preset(Preset::MnistC).lr(-1.0).check().is_err());
        assert!(
            AntParams::preset(Preset::MnistC)
                .batch_size(0)
                .check()
                .is_err()
        );
        assert!(
            AntParams::preset(Preset::MnistC)
                .valid_fraction(1.0)
                .check()
                .is_err()
        );
    }
}
