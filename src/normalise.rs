//! Input and target scaling, learned on the training split and stored in the model:
//! images are mean-subtracted per channel (the paper) or also divided by the standard
//! deviation ([`ImageNorm`]), flat features and regression targets standardised per column.

use serde::{Deserialize, Serialize};

use crate::data::{Dataset, Targets};
use crate::choices::ImageNorm;
use crate::spec::Shape;

/// Input and target scaling learned from the training split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Normalisation {
    /// Subtracted from inputs: per channel (images) or per feature.
    pub x_mean: Vec<f32>,
    /// Inputs are divided by this: for images 1 ([`ImageNorm::Mean`]) or the channel's
    /// standard deviation, for flat data the feature's.
    pub x_std: Vec<f32>,
    /// Regression targets are standardised with these (empty for classification).
    pub y_mean: Vec<f32>,
    pub y_std: Vec<f32>,
}

impl Normalisation {
    /// Statistics of `data` for inputs of shape `shape`, images scaled as `images` says.
    pub fn from_data(data: &Dataset, shape: Shape, images: ImageNorm) -> Normalisation {
        let n = data.len().max(1);
        let (x_mean, x_std) = match shape {
            Shape::Image { c, h, w } => {
                let hw = h * w;
                let (mut sum, mut sq) = (vec![0f64; c], vec![0f64; c]);
                for s in data.x.chunks(c * hw) {
                    for (ch, plane) in s.chunks(hw).enumerate() {
                        for &v in plane {
                            sum[ch] += v as f64;
                            sq[ch] += (v as f64) * (v as f64);
                        }
                    }
                }
                let count = (n * hw) as f64;
                let mean: Vec<f64> = sum.iter().map(|s| s / count).collect();
                let std = match images {
                    ImageNorm::Mean => vec![1.0; c],
                    ImageNorm::MeanStd => (0..c)
                        .map(|ch| {
                            let var = (sq[ch] / count - mean[ch] * mean[ch]).max(0.0);
                            if var.sqrt() > 1e-8 { var.sqrt() as f32 } else { 1.0 }
                        })
                        .collect(),
                };
                (mean.iter().map(|&m| m as f32).collect(), std)
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

pub(crate) fn standardise(v: &[f32], d: usize, mean: &[f32], std: &[f32]) -> Vec<f32> {
    let mut out = v.to_vec();
    for row in out.chunks_mut(d) {
        row.iter_mut()
            .enumerate()
            .for_each(|(j, x)| *x = (*x - mean[j]) / std[j]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per channel (mean, standard deviation) of images normalised by `norm`.
    fn channel_stats(x: &[f32], c: usize, hw: usize) -> Vec<(f64, f64)> {
        (0..c)
            .map(|ch| {
                let v: Vec<f64> = x
                    .chunks(c * hw)
                    .flat_map(|s| &s[ch * hw..(ch + 1) * hw])
                    .map(|&v| v as f64)
                    .collect();
                let m = v.iter().sum::<f64>() / v.len() as f64;
                let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64;
                (m, var.sqrt())
            })
            .collect()
    }

    #[test]
    fn images_are_centred_and_scaled_as_asked() {
        // Two channels with different offsets and spreads, 4 images of 3x3.
        let (c, h, w, n) = (2, 3, 3, 4);
        let x: Vec<f32> = (0..n * c * h * w)
            .map(|i| {
                let ch = (i / (h * w)) % c;
                let v = ((i * 7919) % 13) as f32 / 13.0;
                if ch == 0 { 0.1 + 0.3 * v } else { 5.0 + 4.0 * v }
            })
            .collect();
        let data = Dataset {
            x,
            sample_shape: vec![c, h, w],
            targets: Targets::Classes {
                labels: vec![0, 1, 0, 1],
                n_classes: 2,
            },
        };
        let shape = Shape::Image { c, h, w };
        let raw = channel_stats(&data.x, c, h * w);
        let mean = Normalisation::from_data(&data, shape, ImageNorm::Mean);
        for ((m, s), (_, s0)) in channel_stats(&mean.apply_x(&data.x, shape), c, h * w)
            .into_iter()
            .zip(&raw)
        {
            assert!(m.abs() < 1e-5, "centred: {m}");
            assert!((s - s0).abs() < 1e-5, "spread kept: {s} vs {s0}");
        }
        let std = Normalisation::from_data(&data, shape, ImageNorm::MeanStd);
        for (m, s) in channel_stats(&std.apply_x(&data.x, shape), c, h * w) {
            assert!(m.abs() < 1e-5 && (s - 1.0).abs() < 1e-4, "standardised: {m} {s}");
        }
    }
}
