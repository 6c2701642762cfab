//! Samples on the training device: normalised inputs and targets, batched (and, for
//! images with augmentation, augmented) per step.

use std::sync::Arc;

use burn::prelude::*;

use super::augment::Augmenter;
use super::fit::Batch;
use crate::loss::Target;
use crate::data::{Dataset, Targets};
use crate::modules::Repr;
use crate::normalise::{Normalisation, standardise};
use crate::spec::Shape;

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

    /// The training batch `batch` (augmented when the set says so: drawn on the host).
    pub fn batch(&self, batch: &Batch) -> DeviceSet {
        let (rows, i) = (batch.rows, batch.on_device.clone());
        let x = match (&self.augment, &self.x) {
            (Some(a), Repr::Image(t)) => {
                let [_, c, h, w] = t.dims();
                Repr::Image(Tensor::from_data(
                    TensorData::new(a.batch(rows), [rows.len(), c, h, w]),
                    &self.y.device(),
                ))
            }
            _ => self.x.select(i.clone()),
        };
        DeviceSet::new(x, self.y.select(i), rows.len())
    }
}

/// Normalise `data` and put it on `device`.
pub fn to_device(data: &Dataset, norm: &Normalisation, input: Shape, device: &Device) -> DeviceSet {
    let n = data.len();
    let x = Repr::from_vec(norm.apply_x(&data.x, input), n, input, device);
    let y = match &data.targets {
        Targets::Classes { labels, .. } => {
            let v: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
            Target::Classes(Tensor::from_data(TensorData::new(v, [n, 1]), device))
        }
        Targets::Values { values, dim } => {
            let v = standardise(values, *dim, &norm.y_mean, &norm.y_std);
            Target::Values(Tensor::from_data(TensorData::new(v, [n, *dim]), device))
        }
    };
    DeviceSet::new(x, y, n)
}
