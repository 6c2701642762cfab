//! Input and target scaling, learned on the training split and stored in the model:
//! images are mean-subtracted per channel (the paper) or also divided by the standard
//! deviation ([`ImageNorm`]), flat features and regression targets standardised per column.
//! The warning of inputs on another scale at prediction, and its rules, are in
//! `scale_warning.rs`; the checks that the scales fit f32, in `data/f32_columns.rs`.

use serde::{Deserialize, Serialize};

use crate::choices::ImageNorm;
use crate::data::{Dataset, Targets};
use crate::spec::Shape;

mod scale_warning;

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
    /// The training inputs' standard deviation, per channel (images) or feature, to
    /// tell inputs on another scale at prediction ([`Normalisation::warn_of_another_scale`];
    /// empty in models saved before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x_spread: Vec<f32>,
    /// The training inputs' smallest and largest value, per channel or feature (empty in
    /// models saved before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x_range: Vec<[f32; 2]>,
}

/// Samples whose values are read at once where they are held as bytes.
const SAMPLES_AT_ONCE: usize = 4096;

impl Normalisation {
    /// Statistics of `data` for inputs of shape `shape`, images scaled as `images` says.
    pub fn from_data(data: &Dataset, shape: Shape, images: ImageNorm) -> Normalisation {
        let n = data.len().max(1);
        let (x_mean, x_std, x_spread) = match shape {
            Shape::Image { c, h, w } => {
                let hw = h * w;
                let (mut sum, mut sq) = (vec![0f64; c], vec![0f64; c]);
                for part in data.sample_chunks(SAMPLES_AT_ONCE) {
                    for s in part.chunks(c * hw) {
                        for (ch, plane) in s.chunks(hw).enumerate() {
                            for &v in plane {
                                sum[ch] += v as f64;
                                sq[ch] += (v as f64) * (v as f64);
                            }
                        }
                    }
                }
                let count = (n * hw) as f64;
                let mean: Vec<f64> = sum.iter().map(|s| s / count).collect();
                let spread: Vec<f64> = (0..c)
                    .map(|ch| (sq[ch] / count - mean[ch] * mean[ch]).max(0.0).sqrt())
                    .collect();
                let std = match images {
                    ImageNorm::Mean => vec![1.0; c],
                    ImageNorm::MeanStd => (0..c).map(|ch| divisor(spread[ch], mean[ch])).collect(),
                };
                let spread = spread.iter().map(|&s| s as f32).collect();
                (mean.iter().map(|&m| m as f32).collect(), std, spread)
            }
            Shape::Flat { d } => {
                let (mean, spread) = column_moments(&data.x(), d);
                let std = spread
                    .iter()
                    .zip(&mean)
                    .map(|(&s, &m)| divisor(s, m))
                    .collect();
                let as_f32 = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect();
                (as_f32(mean), std, as_f32(spread))
            }
        };
        let (y_mean, y_std) = match &data.targets {
            Targets::Values { values, dim } => column_stats(values, *dim),
            Targets::Classes { .. } => (vec![], vec![]),
        };
        let x_range = data
            .sample_chunks(SAMPLES_AT_ONCE)
            .map(|part| extremes(&part, shape))
            .reduce(|a, b| a.iter().zip(&b).map(|(a, b)| [a[0].min(b[0]), a[1].max(b[1])]).collect())
            .unwrap_or_else(|| extremes(&[], shape));
        Normalisation {
            x_mean,
            x_std,
            y_mean,
            y_std,
            x_spread,
            x_range,
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
        let mut out = x.to_vec();
        self.apply_x_in_place(&mut out, shape);
        out
    }

    /// [`Self::apply_x`] on the inputs where they are (a training set is not copied).
    pub fn apply_x_in_place(&self, x: &mut [f32], shape: Shape) {
        match shape {
            Shape::Image { c, h, w } => {
                let hw = h * w;
                for s in x.chunks_mut(c * hw) {
                    for (ch, plane) in s.chunks_mut(hw).enumerate() {
                        plane
                            .iter_mut()
                            .for_each(|v| *v = (*v - self.x_mean[ch]) / self.x_std[ch]);
                    }
                }
            }
            Shape::Flat { d } => standardise_in_place(x, d, &self.x_mean, &self.x_std),
        }
    }
}

fn column_stats(v: &[f32], d: usize) -> (Vec<f32>, Vec<f32>) {
    let (mean, spread) = column_moments(v, d);
    let std = spread.iter().zip(&mean).map(|(&s, &m)| divisor(s, m));
    (mean.iter().map(|&m| m as f32).collect(), std.collect())
}

/// Each column's mean and standard deviation, in f64.
fn column_moments(v: &[f32], d: usize) -> (Vec<f64>, Vec<f64>) {
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
    let spread = var.iter().map(|s| (s / n).sqrt()).collect();
    (mean, spread)
}

/// What a column of spread `std` around `mean` (both computed in f64) is divided by:
/// its spread, at any scale f32 holds (features and targets in tiny units are as real
/// as any), and 1 for a column that does not vary, or whose variation is only the
/// rounding of its f32 values (a spread below a few f32 steps of the mean), or is too
/// small for f32 at all.
fn divisor(std: f64, mean: f64) -> f32 {
    let rounding = mean.abs() * f64::from(f32::EPSILON) * 4.0;
    let s = std as f32;
    if std > rounding && s.is_normal() {
        s
    } else {
        1.0
    }
}

pub(crate) fn standardise(v: &[f32], d: usize, mean: &[f32], std: &[f32]) -> Vec<f32> {
    let mut out = v.to_vec();
    standardise_in_place(&mut out, d, mean, std);
    out
}

/// [`standardise`] where the values are.
fn standardise_in_place(v: &mut [f32], d: usize, mean: &[f32], std: &[f32]) {
    for row in v.chunks_mut(d) {
        row.iter_mut()
            .enumerate()
            .for_each(|(j, x)| *x = (*x - mean[j]) / std[j]);
    }
}

/// The smallest and largest value per channel (images) or feature of the samples `x`.
fn extremes(x: &[f32], shape: Shape) -> Vec<[f32; 2]> {
    let (groups, run) = match shape {
        Shape::Image { c, h, w } => (c, h * w),
        Shape::Flat { d } => (d, 1),
    };
    let mut out = vec![[f32::INFINITY, f32::NEG_INFINITY]; groups];
    for s in x.chunks(groups * run) {
        for (g, part) in s.chunks(run).enumerate() {
            for &v in part {
                out[g] = [out[g][0].min(v), out[g][1].max(v)];
            }
        }
    }
    out
}

impl Normalisation {
    /// Every scale and offset fit for its use: inputs become `(x - x_mean) / x_std`,
    /// outputs `v * y_std + y_mean`, all in f32 ([`crate::data::check_standardisation`]).
    /// Checked when a model loads, and by training before it trains (a model that would
    /// not load is never written).
    pub(crate) fn check_scales(&self) -> std::result::Result<(), String> {
        crate::data::check_standardisation(&self.x_mean, &self.x_std, &self.y_mean, &self.y_std)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 41 (l): targets around 1e-10 had a spread of 1 (a floor of 1e-8), so the
    /// model learned nothing of them. The spread is the real one at every scale.
    #[test]
    fn columns_in_tiny_or_huge_units_are_standardised_by_their_real_spread() {
        for scale in [1e-30f64, 1e-10, 1.0, 1e10, 1e30] {
            let v: Vec<f32> = [1.0, 2.0, 3.0, 4.0]
                .iter()
                .map(|x| (x * scale) as f32)
                .collect();
            let (mean, std) = column_stats(&v, 1);
            let want = 1.25f64.sqrt() * scale;
            assert!(
                ((std[0] as f64) - want).abs() <= want * 1e-6,
                "scale {scale}: {std:?}"
            );
            assert!(((mean[0] as f64) - 2.5 * scale).abs() <= 2.5 * scale * 1e-6);
        }
        // A constant column, at any scale, is left as it is (divided by 1).
        for c in [0.0f32, 1e-30, 7.0, 1e30] {
            assert_eq!(column_stats(&[c; 5], 1).1, vec![1.0]);
        }
        // Rounding alone (values one f32 step apart around 1e6) is no spread either.
        let near = [1e6f32, 1e6f32.next_up(), 1e6f32];
        assert_eq!(column_stats(&near, 1).1, vec![1.0]);
    }

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
                if ch == 0 {
                    0.1 + 0.3 * v
                } else {
                    5.0 + 4.0 * v
                }
            })
            .collect();
        let data = Dataset {
            x: crate::data::Values::F32(x),
            sample_shape: vec![c, h, w],
            targets: Targets::Classes {
                labels: vec![0, 1, 0, 1],
                n_classes: 2,
            },
            class_names: None,
            own_validation: None,
        };
        let shape = Shape::Image { c, h, w };
        let raw = channel_stats(&data.x(), c, h * w);
        let mean = Normalisation::from_data(&data, shape, ImageNorm::Mean);
        for ((m, s), (_, s0)) in channel_stats(&mean.apply_x(&data.x(), shape), c, h * w)
            .into_iter()
            .zip(&raw)
        {
            assert!(m.abs() < 1e-5, "centred: {m}");
            assert!((s - s0).abs() < 1e-5, "spread kept: {s} vs {s0}");
        }
        let std = Normalisation::from_data(&data, shape, ImageNorm::MeanStd);
        for (m, s) in channel_stats(&std.apply_x(&data.x(), shape), c, h * w) {
            assert!(
                m.abs() < 1e-5 && (s - 1.0).abs() < 1e-4,
                "standardised: {m} {s}"
            );
        }
    }
}
