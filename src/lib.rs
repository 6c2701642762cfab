//! # ant: Adaptive Neural Trees
//!
//! A Rust implementation of Adaptive Neural Trees (Tanno, Arulkumaran, Alexander,
//! Criminisi, Nori, ICML 2019) on [burn](https://burn.dev): trees of small neural
//! modules, grown from the data and then refined end to end.
//!
//! Every edge holds a *transformer*, every internal node a *router* (the probability of
//! going left) and every leaf a *solver*. Predictions mix all leaves, weighted by the
//! probability of reaching them (multi-path), or follow the more likely branch at each
//! router (single-path). Growth starts from a root and tries, level by level, to split
//! or deepen each leaf, training only the new modules; refinement then trains all.
//!
//! ```
//! use ant::{Ant, AntParams, Dataset, Inference, Preset, Targets};
//! use ant::observe::Silent;
//!
//! # fn main() -> ant::Result<()> {
//! // 400 points in [-1,1]^2, class 1 inside a circle.
//! let x: Vec<f32> = (0..800).map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0).collect();
//! let labels = x.chunks(2).map(|p| u32::from(p[0] * p[0] + p[1] * p[1] < 0.5)).collect();
//! let data = Dataset::new(x, vec![2], Targets::Classes { labels, n_classes: 2 })?;
//!
//! // Unchecked parameters (the defaults, shortened here) -> fitted model.
//! let params = AntParams::new(Preset::Tabular).with_width(16).with_epochs_node(20).with_refine_epochs(Some(5)).with_max_depth(2).with_batch_size(64);
//! let device = ant::default_device();
//! let model = Ant::fit(params, &data, &device, &mut Silent)?;
//!
//! let dir = std::env::temp_dir().join(format!("ant-doc-{}", std::process::id()));
//! model.save(&dir)?;
//! let same = Ant::load(&dir, &device)?;
//! let p = same.predict(&data, Inference::SinglePath)?;
//! assert_eq!(p, model.predict(&data, Inference::SinglePath)?);
//! assert_eq!(p.classes().len(), 400);
//! // The same two files as bytes (for pickling, say), and back.
//! let (tree_json, weights) = model.to_bytes()?;
//! let back = Ant::from_bytes(&tree_json, &weights, &device)?;
//! assert_eq!(back.predict(&data, Inference::SinglePath)?, p);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
//!
//! ## The public API
//!
//! - Parameters: [`AntParams`] (unchecked: defaults, `with_*` setters, a getter per
//!   parameter; the same names are `ant train`'s options and Python's keywords) -> [`AntParams::check`] ->
//!   [`TrainConfig`]; [`Preset`], [`Ablation`], [`Init`], [`RouterInit`], [`Augment`],
//!   [`ImageNorm`], [`Select`], all [`Named`]; [`Task`] / [`TaskKind`]; [`PoolRule`] (where transformers pool: the authors' rule by
//!   default), [`Accept`] (when growth keeps a candidate: any gain of the
//!   validation NLL by default, as the paper, or one above Z standard errors); [`Baseline`] (`linear`, `mlp-K`,
//!   `cnn`): a fixed architecture trained by the same code instead of an ANT.
//! - The model: [`Ant::fit`] (or [`Ant::fit_checkpointed`] with [`Checkpoints`]),
//!   [`Ant::predict`] with an [`Inference`] mode, [`Ant::evaluate`] ([`Evaluation`]),
//!   [`Ant::save`] / [`Ant::load`] (or [`Ant::to_bytes`] / [`Ant::from_bytes`]),
//!   [`Ant::pruned`] ([`PruneReport`]); [`ModelMeta`] is what `tree.json` stores beside the tree
//!   ([`Provenance`]: where the rows came from).
//! - Data: [`Dataset`] / [`Targets`]; [`data::source`] reads any `--data` path (IDX,
//!   CIFAR-10, MAT, CSV tables, by format detection), [`data::tabular`] says how a table
//!   is read; [`predict`] reads and writes prediction files.
//! - Runs in a directory, resumable: [`run::Run`]; training events: [`observe`].
//! - Ensembles (the paper's Tables 7 and 8): [`ensemble::Ensemble`] (`load`, `predict`,
//!   `evaluate`) over members that are ordinary models; [`ensemble`] holds
//!   `ensemble.json` and how member K's seed and rows are chosen.
//! - A saved directory, one tree or an ensemble: [`saved::SavedModel`], with [`saved::prune`]
//!   and [`saved::describe`] for either.
//! - The tree's shape: [`Ant::topology`], a [`tree::Topology`] (an arena of
//!   [`tree::Node`]s, each with its module's [`spec::BlockSpec`]); the router and solver
//!   of each preset ([`Preset::router`], [`Preset::solver`]). The weights and the two
//!   passes are the crate's own (public with `internals`).
//! - Pictures: [`viz`] (SVG, DOT; PNG with the `raster` feature).
//! - Downloads: `fetch` (with the `fetch` feature): `fetch::fetch` with its limits in
//!   `fetch::FetchOptions` (timeouts, minimum speed, redirects).
//! - Devices: [`ComputeDevice`] (`cpu`, and with the `torch` feature `torch` and
//!   `cuda:N`) gives the burn device that `fit`, `load` and the rest take.
//! - Errors: [`AntError`] and [`Result`].
//!
//! Each public type has one path: the root for the types above, the module otherwise.
//! The building blocks under them (losses, burn modules, the numerics, the training
//! loop, file names and atomic writes) are crate-private; the `internals` feature makes
//! them public for the crate's own tests and benches.
/// Declares modules that are public with the `internals` feature (the crate's own
/// tests and benches use it) and crate-private otherwise: the algorithm's building
/// blocks, with no stability promise.
macro_rules! internal_mods {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        #[cfg(feature = "internals")]
        pub mod $name;
        $(#[$m])*
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    )*};
}

/// Re-exports items that are public with the `internals` feature and crate-private
/// otherwise (the tree's weights and passes, say: the model's own machinery).
macro_rules! internal_use {
    ($($path:tt)*) => {
        #[cfg(feature = "internals")]
        pub use $($path)*;
        #[cfg(not(feature = "internals"))]
        #[allow(unused_imports)]
        pub(crate) use $($path)*;
    };
}

pub mod data;
pub mod digits;
pub mod ensemble;
pub mod env;
pub mod export;
#[cfg(feature = "fetch")]
pub mod fetch;
mod model;
pub mod observe;
pub mod predict;
pub mod run;
pub mod saved;
pub mod spec;
pub mod tree;
pub mod viz;

internal_mods! {
    /// `--baseline`: fixed architectures trained by the same code.
    baseline;
    /// The named choices of training (`Init`, `Augment`, `Accept`, ...).
    choices;
    /// `--device`: which burn device computes.
    device;
    /// The error type.
    error;
    /// The mixture's likelihood and prediction.
    loss;
    /// glibc allocator settings for burn-flex's large buffers.
    malloc;
    /// Parameter and FLOP counts.
    metrics;
    /// The burn modules built from specs.
    modules;
    /// Names of enum values on the command line and in files.
    named;
    /// Input and target scaling.
    normalise;
    /// The door to the hand-written numerics: kernels, fused activations, LibTorch calls.
    ops;
    /// Training parameters: unchecked, then checked.
    params;
    /// Where image transformers pool.
    pool;
    /// The module presets of Table 2.
    preset;
    /// Paths in JSON files: text, or a non-Unicode path's bytes.
    path_json;
    /// Pruning subtrees that few validation rows reach.
    prune;
    /// Seeds derived from the run's seed.
    seed;
    /// Everything that owns files on disk: atomic writes, the manifest, the output door
    /// and its name rules, file names, a directory's lock.
    store;
    /// What an ANT predicts.
    task;
    /// Growth, refinement and the optimisation loop.
    train;
}
pub(crate) mod os;

pub use baseline::Baseline;
pub use choices::{Accept, Augment, ImageNorm, Init, RouterInit, Select};
pub use data::dataset::{Dataset, Targets};
pub use device::ComputeDevice;
pub use error::{AntError, Result};
pub use malloc::keep_large_buffers;
pub use model::{
    Ant, EstimatorRecord, Evaluation, Inference, LabelKind, Member, ModelMeta, Predictions,
    Provenance, TestSplit, ValidRows, ValidSplit,
};
pub use named::Named;
pub use os::{file_size_limit_is_an_error, out_of_memory_is_an_error};
pub use params::{AntParams, TrainConfig};
pub use pool::PoolRule;
pub use store::outputs::stdin_input;
internal_use!(pool::PathPos);
pub use preset::{Ablation, Preset};
pub use prune::PruneReport;
pub use task::{Task, TaskKind};
pub use train::{Checkpoints, FailedWrite};

/// The device everything runs on by default: burn's pure-Rust CPU backend (see
/// [`device::ComputeDevice`] for the others).
pub fn default_device() -> burn::prelude::Device {
    burn::prelude::Device::flex()
}
