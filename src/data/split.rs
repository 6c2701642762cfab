//! How a model's rows were chosen, recorded so that any command rebuilds exactly them:
//! the test split of a data source ([`TestSplit`]), the validation rows among the
//! training rows ([`ValidSplit`], [`ValidRows`]), an ensemble member's order of the rows
//! ([`Member`]) and all of it together ([`Provenance`]). Plain data, below everything
//! that trains or scores.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::data::tabular::TargetSpec;
use crate::data::{Dataset, Targets};

/// How the test set of a data source was chosen (so `eval` picks the same rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
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
#[non_exhaustive]
pub enum ValidSplit {
    /// The last `fraction` of the rows (models saved before validation rows were drawn).
    Tail { fraction: f64 },
    /// `fraction` of each class's rows, drawn with `seed` (classification).
    Stratified { fraction: f64, seed: u64 },
    /// `fraction` of the rows, drawn with `seed` (regression).
    Shuffled { fraction: f64, seed: u64 },
    /// The data's own validation samples (an image folder's `val/`), read after its
    /// training samples: the last `count` rows.
    OwnFiles { count: usize },
}

/// Which training rows a run holds out for validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
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
    /// The rule training uses on `data` with `rows`, `fraction` and `seed`: by default
    /// seeded, stratified by class for classification.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn for_training(rows: ValidRows, fraction: f64, seed: u64, data: &Dataset) -> ValidSplit {
        if let Some(count) = data.own_validation {
            return ValidSplit::OwnFiles { count };
        }
        match (rows, &data.targets) {
            (ValidRows::Last, _) => ValidSplit::Tail { fraction },
            (ValidRows::Drawn, Targets::Classes { .. }) => {
                ValidSplit::Stratified { fraction, seed }
            }
            (ValidRows::Drawn, Targets::Values { .. }) => ValidSplit::Shuffled { fraction, seed },
        }
    }

    /// The fraction of the rows held out (none when the data's own files are).
    pub fn fraction(&self) -> Option<f64> {
        match *self {
            ValidSplit::Tail { fraction }
            | ValidSplit::Stratified { fraction, .. }
            | ValidSplit::Shuffled { fraction, .. } => Some(fraction),
            ValidSplit::OwnFiles { .. } => None,
        }
    }

    /// `(training rows, validation rows)` of `data`, as training made them.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn apply(&self, data: &Dataset) -> (Dataset, Dataset) {
        let (train, valid) = self.rows(data);
        (data.subset(&train), data.subset(&valid))
    }

    /// The rows of [`Self::apply`]'s two parts, without copying them.
    pub(crate) fn rows(&self, data: &Dataset) -> (Vec<usize>, Vec<usize>) {
        match *self {
            ValidSplit::Tail { fraction } => data.tail_rows(fraction),
            ValidSplit::Stratified { fraction, seed } => data.validation_rows(fraction, seed, true),
            ValidSplit::Shuffled { fraction, seed } => data.validation_rows(fraction, seed, false),
            ValidSplit::OwnFiles { count } => {
                let cut = data.len().saturating_sub(count);
                ((0..cut).collect(), (cut..data.len()).collect())
            }
        }
    }
}

/// Where the model's data came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub data: String,
    pub test_split: TestSplit,
    pub train_limit: Option<usize>,
    pub(crate) n_train: usize,
    pub(crate) n_valid: usize,
    /// How a table was read (`--target` etc.), so `eval` / `predict` read files alike.
    #[serde(default)]
    pub target: Option<TargetSpec>,
    /// How the validation rows were chosen (absent: the last ones, as before).
    #[serde(default)]
    pub valid_split: Option<ValidSplit>,
    /// [`Dataset::checksum`] of the rows training split into training and validation
    /// rows, so they are rebuilt only from the same data (absent in older models).
    #[serde(default)]
    pub(crate) train_checksum: Option<String>,
    /// [`Dataset::row_set_checksum`] of the same rows, which knows them in any order
    /// (absent in older models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) train_row_set: Option<String>,
    /// [`super::row_sketch::sketch_of`] of the same rows: which rows of a file are among
    /// them, when not all are (absent in older models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) train_row_sketch: Option<String>,
    /// The ensemble this model is a member of: its training rows were put in the
    /// member's order before the validation rows were taken (see [`Member::rows`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<Member>,
    /// The size an image folder's images were resized to (`--image-size`): later
    /// images are resized to it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size: Option<crate::data::image_size::ImageSize>,
}

impl Provenance {
    /// A model fitted through the library on `data`, rows of unrecorded origin.
    pub fn library(
        data: &Dataset,
        n_train: usize,
        n_valid: usize,
        valid_split: ValidSplit,
    ) -> Self {
        // Each row read once for both records of the rows.
        let digests = super::row_sketch::row_digests(data);
        Provenance {
            data: String::new(),
            test_split: TestSplit::Unknown,
            train_limit: None,
            n_train,
            n_valid,
            target: None,
            valid_split: Some(valid_split),
            train_checksum: Some(data.checksum()),
            train_row_set: Some(data.row_set_checksum_of(&digests)),
            train_row_sketch: Some(super::row_sketch::sketch_of(&digests)),
            member: None,
            image_size: None,
        }
    }
}

/// Which member of which ensemble a model is (recorded in its run and its model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub index: usize,
    /// Members in the ensemble.
    pub size: usize,
    /// The ensemble's seed: its test split, and the root of the members' seeds.
    pub run_seed: u64,
}

impl Member {
    /// The member's own seed (see `crate::seed`).
    pub fn seed(&self) -> u64 {
        crate::seed::member_seed(self.run_seed, self.index)
    }

    /// The member's training rows: the run's, in an order drawn with the member's seed.
    /// Training then holds out validation rows from them as from any data set, so each
    /// member validates on its own random rows, whether the library takes the last
    /// rows or draws them with the (member's) seed.
    pub fn rows(&self, train: &Dataset) -> Dataset {
        // The data's own validation samples stay last, and stay its validation samples.
        let own = train.own_validation.unwrap_or(0);
        let n = train.len() - own;
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(self.seed()));
        order.extend(n..train.len());
        let mut rows = train.subset(&order);
        rows.own_validation = train.own_validation;
        rows
    }
}
