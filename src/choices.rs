//! The named choices of training: how split children and routers start, augmentation,
//! image scaling, which validation score picks an epoch, and when growth keeps a
//! candidate. Plain values (names on the command line and in files); what they do is
//! in `train/` and `normalise`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::named::named;

/// How the two children of a split start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
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
#[non_exhaustive]
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

/// Which augmentation to apply to training batches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Augment {
    #[default]
    None,
    /// 4-pixel padding, random crop, random horizontal flip (the paper's CIFAR-10).
    CropFlip,
    /// 2-pixel padding and a random crop, no flip: a shift of up to 2 pixels each way
    /// (the authors' code's MNIST augmentation, `RandomCrop(28, padding=2)`).
    Shift,
}

named!(Augment {
    None => "none",
    CropFlip => "crop-flip",
    Shift => "shift",
});

impl Augment {
    /// Pixels of padding around each image before the random crop, and whether images
    /// are also flipped left-right at random; `None` when nothing is augmented.
    pub(crate) fn crop(self) -> Option<(usize, bool)> {
        match self {
            Augment::None => None,
            Augment::CropFlip => Some((4, true)),
            Augment::Shift => Some((2, false)),
        }
    }
}

/// How training images are scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ImageNorm {
    /// Subtract each channel's mean (the paper: MNIST "preprocessed by subtracting the
    /// mean").
    #[default]
    Mean,
    /// Subtract each channel's mean and divide by its standard deviation (the authors'
    /// code and the PyTorch peer: MNIST pixels then span about 3x the range).
    MeanStd,
}

named!(ImageNorm {
    Mean => "mean",
    MeanStd => "mean-std",
});

/// Which validation score picks the best epoch of a loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Select {
    /// The lowest validation NLL (the loss that is trained).
    #[default]
    Nll,
    /// The lowest validation error (classification; MSE for regression), ties broken
    /// by NLL: the paper picks its model "based on the validation accuracy".
    Metric,
}

named!(Select {
    Nll => "nll",
    Metric => "metric",
});

/// The largest `z` [`Accept::Paired`] takes.
pub(crate) const MAX_Z: f64 = 100.0;

/// Which validation gain is enough for growth to keep a candidate.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Accept {
    /// Any decrease of the validation NLL (the paper).
    #[default]
    Paper,
    /// A mean per-row gain larger than `z` standard errors of the paired differences.
    Paired { z: f64 },
}

impl fmt::Display for Accept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Accept::Paper => f.write_str("paper"),
            Accept::Paired { z } => write!(f, "z:{z}"),
        }
    }
}

impl FromStr for Accept {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown acceptance rule {s:?}: use paper, or z:Z (a gain of more than Z standard errors, 0 <= Z <= {MAX_Z})"
            )
        };
        if s == "paper" {
            return Ok(Accept::Paper);
        }
        let z = s.strip_prefix("z:").ok_or_else(bad)?;
        match z.parse::<f64>() {
            Ok(z) if (0.0..=MAX_Z).contains(&z) => Ok(Accept::Paired { z }),
            _ => Err(bad()),
        }
    }
}

crate::named::named_by_string!(Accept);
