//! # ant: Adaptive Neural Trees
//!
//! A Rust implementation of Adaptive Neural Trees (Tanno, Arulkumaran, Alexander,
//! Criminisi, Nori, ICML 2019) on [burn](https://burn.dev): trees of small neural
//! modules, grown from the data and then refined end to end.
pub mod data;
pub mod error;
pub mod loss;
pub mod model;
pub mod modules;
pub mod observe;
pub mod params;
pub mod persist;
pub mod preset;
pub mod spec;
pub mod train;
pub mod tree;

pub use data::{Dataset, Targets};
pub use error::{AntError, Result};
pub use model::{Ant, Evaluation, Inference, Predictions};
pub use params::{AntParams, Init, TrainConfig};
pub use preset::{Ablation, Preset, Task};

/// The device everything runs on by default: burn's pure-Rust CPU backend.
pub fn default_device() -> burn::prelude::Device {
    burn::prelude::Device::flex()
}
