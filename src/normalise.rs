//! Input and target scaling, learned on the training split and stored in the model:
//! images are mean-subtracted per channel (the paper), flat features and regression
//! targets standardised per column.

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::{Dataset, Targets};
use crate::loss::Target;
use crate::modules::Repr;
use crate::spec::Shape;
use crate::train::DeviceSet;

/// Input and target scaling learned from the training split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Normalisation {
    /// Subtracted from inputs: per channel (images) or per feature.
    pub x_mean: Vec<f32>,
    /// Inputs are divided by this: 1 for images (mean subtraction, as the paper), the
    /// per-feature standard deviation for flat data.
    pub x_std: Vec<f32>,
    /// Regression targets are standardised with these (empty for classification).
    pub y_mean: Vec<f32>,
    pub y_std: Vec<f32>,
}

impl Normalisation {
    /// Statistics of `data` for inputs of shape `shape`.
    pub fn fit(data: &Dataset, shape: Shape) -> Normalisation {
        let n = data.len().max(1);
        let (x_mean, x_std) = match shape {
            Shape::Image { c, h, w } => {
                let hw = h * w;
                let mut m = vec![0f64; c];
                for s in data.x.chunks(c * hw) {
                    for (ch, plane) in s.chunks(hw).enumerate() {
                        m[ch] += plane.iter().map(|&v| v as f64).sum::<f64>();
                    }
                }
                (
                    m.iter().map(|v| (v / (n * hw) as f64) as f32).collect(),
                    vec![1.0; c],
                )
            }
            Shape::Flat { d } => column_stats(&data.x, d),
        };
        let (y_mean, y_std) = match &data.targets {
            Targets::Values { values, dim } => column_stats(values, *dim),
            Targets::Classes { .. } => (vec![], vec![]),
        };
        Normalisation {
            x_mean,
            x_std,
            y_mean,
            y_std,
        }
    }

    /// Regression outputs `[N, dim]` (standardised) back in the targets' units.
    pub fn restore_y(&self, values: &mut [f32], dim: usize) {
        for row in values.chunks_mut(dim) {
            row.iter_mut()
                .enumerate()
                .for_each(|(j, v)| *v = *v * self.y_std[j] + self.y_mean[j]);
        }
    }

    /// Inputs of shape `shape` (row-major samples), normalised.
    pub fn apply_x(&self, x: &[f32], shape: Shape) -> Vec<f32> {
        match shape {
            Shape::Image { c, h, w } => {
                let hw = h * w;
                let mut out = x.to_vec();
                for s in out.chunks_mut(c * hw) {
                    for (ch, plane) in s.chunks_mut(hw).enumerate() {
                        plane
                            .iter_mut()
                            .for_each(|v| *v = (*v - self.x_mean[ch]) / self.x_std[ch]);
                    }
                }
                out
            }
            Shape::Flat { d } => standardise(x, d, &self.x_mean, &self.x_std),
        }
    }
}

fn column_stats(v: &[f32], d: usize) -> (Vec<f32>, Vec<f32>) {
    let n = (v.len() / d.max(1)).max(1) as f64;
    let mut mean = vec![0f64; d];
    for row in v.chunks(d) {
        row.iter()
            .enumerate()
            .for_each(|(j, &x)| mean[j] += x as f64);
    }
    mean.iter_mut().for_each(|m| *m /= n);
    let mut var = vec![0f64; d];
    for row in v.chunks(d) {
        row.iter()
            .enumerate()
            .for_each(|(j, &x)| var[j] += (x as f64 - mean[j]).powi(2));
    }
    let std = var.iter().map(|s| {
        let s = (s / n).sqrt();
        if s > 1e-8 { s as f32 } else { 1.0 }
    });
    (mean.iter().map(|&m| m as f32).collect(), std.collect())
}

fn standardise(v: &[f32], d: usize, mean: &[f32], std: &[f32]) -> Vec<f32> {
    let mut out = v.to_vec();
    for row in out.chunks_mut(d) {
        row.iter_mut()
            .enumerate()
            .for_each(|(j, x)| *x = (*x - mean[j]) / std[j]);
    }
    out
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
