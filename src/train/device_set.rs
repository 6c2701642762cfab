//! Samples on the training device: normalised inputs and targets, batched (and, for
//! images with augmentation, augmented) per step.

use std::sync::Arc;

use burn::prelude::*;

use super::augment::Augmenter;
use crate::loss::Target;
use crate::modules::{Repr, index_tensor};

/// Samples on a device: inputs (normalised) and targets.
#[derive(Clone, Debug)]
pub struct DeviceSet {
    pub x: Repr,
    pub y: Target,
    pub n: usize,
    /// When set, training batches are augmented copies drawn from here.
    pub augment: Option<Arc<Augmenter>>,
}

impl DeviceSet {
    pub fn new(x: Repr, y: Target, n: usize) -> Self {
        DeviceSet {
            x,
            y,
            n,
            augment: None,
        }
    }

    /// The training batch of samples `idx` (augmented when the set says so).
    pub fn batch(&self, idx: &[usize]) -> DeviceSet {
        let device = self.y.device();
        let i = index_tensor(idx, &device);
        let x = match (&self.augment, &self.x) {
            (Some(a), Repr::Image(t)) => {
                let [_, c, h, w] = t.dims();
                Repr::Image(Tensor::from_data(
                    TensorData::new(a.batch(idx), [idx.len(), c, h, w]),
                    &device,
                ))
            }
            _ => self.x.select(i.clone()),
        };
        DeviceSet::new(x, self.y.select(i), idx.len())
    }
}
