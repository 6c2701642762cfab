//! Input and target scaling, learned on the training split and stored in the model:
//! images are mean-subtracted per channel (the paper) or also divided by the standard
//! deviation ([`ImageNorm`]), flat features and regression targets standardised per column.

use serde::{Deserialize, Serialize};

use crate::data::{Dataset, Targets};
use crate::choices::ImageNorm;
use crate::error::number32;
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

impl Normalisation {
    /// Statistics of `data` for inputs of shape `shape`, images scaled as `images` says.
    pub fn from_data(data: &Dataset, shape: Shape, images: ImageNorm) -> Normalisation {
        let n = data.len().max(1);
        let (x_mean, x_std, x_spread) = match shape {
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
                let (mean, spread) = column_moments(&data.x, d);
                let std = spread.iter().zip(&mean).map(|(&s, &m)| divisor(s, m)).collect();
                let as_f32 = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect();
                (as_f32(mean), std, as_f32(spread))
            }
        };
        let (y_mean, y_std) = match &data.targets {
            Targets::Values { values, dim } => column_stats(values, *dim),
            Targets::Classes { .. } => (vec![], vec![]),
        };
        let x_range = extremes(&data.x, shape);
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
    if std > rounding && s.is_normal() { s } else { 1.0 }
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

/// Inputs whose spread is this many times smaller than the training inputs' are on
/// another scale: pixels in 0..1 against 0..255 differ 255 times, while a batch of
/// similar samples, even of heavy-tailed features, rarely varies 50 times less (20 was
/// passed by lognormal features: the third attack).
const OTHER_SCALE: f64 = 50.0;
/// A value this many training ranges beyond a feature's training range is in other
/// units or offset (a rare one-hot category stays within its 0..1, where a test of
/// spreads or means had flagged it: the third attack).
const FAR_RANGES: f64 = 10.0;
/// A feature whose training spread is this many times below its training range is
/// almost always one value: a value beyond its range says nothing of units.
const SPARSE: f64 = 20.0;
/// Fewer samples than this say too little about their spread.
const MIN_SAMPLES_FOR_SCALE: usize = 8;

impl Normalisation {
    /// Warns, once per `said` (a model's), when inputs `x` (samples of shape `shape`, not yet
    /// normalised) are on another scale than the training inputs: a feature (a channel
    /// of images) with a value [`FAR_RANGES`] training ranges beyond its training range
    /// ([`Self::beyond_range`], even in one sample), or, in [`MIN_SAMPLES_FOR_SCALE`]
    /// samples or more, features that vary [`OTHER_SCALE`] times less and are as much
    /// smaller ([`Self::less_spread`]), or one such feature ([`Self::shrunk_outside`]).
    /// Session 28's hostile pass: images fitted as floats in 0..255 and given as bytes
    /// (read as 0..1) were predicted without a word, 37.5% right against 12%.
    pub(crate) fn warn_of_another_scale(&self, x: &[f32], shape: Shape, said: &std::sync::atomic::AtomicBool) {
        let per_sample = shape.numel().max(1);
        if self.x_spread.is_empty() || x.is_empty() || said.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let what = match shape {
            Shape::Image { .. } => "channel",
            Shape::Flat { .. } => "feature",
        };
        let range = extremes(x, shape);
        // A value far beyond the training range says it alone, even in one sample (the
        // usual way to serve: session 29's hostile pass); spreads need a few samples.
        let moments = || match shape {
            Shape::Image { c, h, w } => channel_moments(x, c, h * w),
            Shape::Flat { d } => column_moments(x, d),
        };
        let why = self.beyond_range(&range, what).or_else(|| {
            let (mean, spread) = (x.len() / per_sample >= MIN_SAMPLES_FOR_SCALE).then(moments)?;
            let size = self.size_ratios(&mean, &spread);
            self.less_spread(&spread, &size, what)
                .or_else(|| self.shrunk_outside(&range, &spread, &size, what))
        });
        if let Some(why) = why {
            said.store(true, std::sync::atomic::Ordering::Relaxed);
            tracing::warn!(
                "the inputs are on another scale than the training inputs: {why}; if they are in other units (pixels in 0..255 against 0..1, say), the predictions mean little"
            );
        }
    }

    /// The first `what` whose batch extremes `range` lie [`FAR_RANGES`] training ranges
    /// beyond its training range, said.
    fn beyond_range(&self, range: &[[f32; 2]], what: &str) -> Option<String> {
        let features = self.x_range.iter().zip(self.x_spread.iter().zip(&self.x_mean)).zip(range);
        features.enumerate().find_map(|(j, ((&[lo, hi], (&t, &m)), &[b_lo, b_hi]))| {
            let span = f64::from(hi) - f64::from(lo);
            let beyond = (f64::from(lo) - f64::from(b_lo)).max(f64::from(b_hi) - f64::from(hi));
            // A feature almost always at one value in training (a pixel at the edge of
            // digits: 0, once 1) has a range that says little of its scale (the attack
            // on session 29's fixes: one MNIST digit of 10,000 was flagged): its spread is
            // small beside its range and its mean sits at an end. One outlier in a
            // spread-out feature (an income of 5e6) is no such feature (the third attack).
            let (t, m) = (f64::from(t), f64::from(m));
            let at_an_end = (m - f64::from(lo)).min(f64::from(hi) - m) < t / 10.0;
            let sparse = t < span / SPARSE && at_an_end;
            (span > 0.0 && !sparse && beyond > FAR_RANGES * span).then(|| {
                format!(
                    "{what} {j} reaches {}..{}, beyond ten times its training range {}..{}",
                    number32(b_lo),
                    number32(b_hi),
                    number32(lo),
                    number32(hi)
                )
            })
        })
    }

    /// The first `what` that varies [`OTHER_SCALE`] times less than in training and
    /// either lies a training range outside its training range or, away from zero in
    /// training, is as much smaller, said: one feature in other units (heights in metres
    /// against centimetres), which the median of [`Self::less_spread`] does not see (the
    /// third attack). Varying less alone is a batch of similar samples.
    fn shrunk_outside(&self, range: &[[f32; 2]], spread: &[f64], size: &[f64], what: &str) -> Option<String> {
        let features = self.x_range.iter().zip(self.x_spread.iter().zip(&self.x_mean)).zip(range.iter().zip(spread));
        features.enumerate().find_map(|(j, ((&[lo, hi], (&t, &m)), (&[b_lo, b_hi], &b)))| {
            let span = f64::from(hi) - f64::from(lo);
            let outside = (f64::from(lo) - f64::from(b_hi)).max(f64::from(b_lo) - f64::from(hi));
            let shrunk = t.is_normal() && b > 0.0 && b / f64::from(t) < 1.0 / OTHER_SCALE;
            // Or its values shrank as a whole, for a feature away from zero in training
            // (petal lengths 1..6.9 cm given in metres: the fourth attack).
            let away_from_zero = f64::from(m).abs() > 2.0 * f64::from(t);
            let smaller = away_from_zero && size[j] < 1.0 / OTHER_SCALE;
            (span > 0.0 && shrunk && (outside > span || smaller)).then(|| {
                format!(
                    "{what} {j} varies {:.3} times less than in training and lies at {}..{}, away from its training range {}..{}",
                    f64::from(t) / b,
                    number32(b_lo),
                    number32(b_hi),
                    number32(lo),
                    number32(hi)
                )
            })
        })
    }

    /// Each `what`'s size in the batch (root mean square: means `mean`, spreads `spread`)
    /// over its size in training; infinite where training's is zero.
    fn size_ratios(&self, mean: &[f64], spread: &[f64]) -> Vec<f64> {
        let rms = |m: f64, s: f64| (m * m + s * s).sqrt();
        let training = self.x_mean.iter().zip(&self.x_spread).map(|(&m, &s)| rms(f64::from(m), f64::from(s)));
        let batch = mean.iter().zip(spread).map(|(&m, &s)| rms(m, s));
        batch.zip(training).map(|(b, t)| if t > 0.0 { b / t } else { f64::INFINITY }).collect()
    }

    /// Whether the `what`s that vary in the batch (spreads `spread`, sizes `size` from
    /// [`Self::size_ratios`]) vary [`OTHER_SCALE`] times less than in training and are as
    /// much smaller, by their medians, said.
    fn less_spread(&self, spread: &[f64], size: &[f64], what: &str) -> Option<String> {
        let mut ratios: Vec<f64> = spread
            .iter()
            .zip(&self.x_spread)
            .filter(|(b, t)| t.is_normal() && **b > 0.0)
            .map(|(&b, &t)| b / f64::from(t))
            .collect();
        // A what-if sweep (one feature varied finely, the rest held) says nothing of
        // units: the rule needs half the features that vary in training (the third attack).
        let varying = self.x_spread.iter().filter(|t| t.is_normal()).count();
        if ratios.len() * 2 < varying {
            return None;
        }
        ratios.sort_by(f64::total_cmp);
        let median = *ratios.get(ratios.len() / 2)?;
        // And the values themselves shrank: copies of one sample with a little noise
        // vary as little, at the sample's size (the fourth attack).
        let mut sizes: Vec<f64> = size.iter().zip(&self.x_spread).filter(|(_, t)| t.is_normal()).map(|(&r, _)| r).collect();
        sizes.sort_by(f64::total_cmp);
        let smaller = sizes.get(sizes.len() / 2).is_some_and(|&r| r < 1.0 / OTHER_SCALE);
        (median < 1.0 / OTHER_SCALE && smaller).then(|| {
            format!(
                "they vary {:.3} times less than in training (the median over the {what}s that vary)",
                1.0 / median
            )
        })
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

/// Each channel's mean and standard deviation over the samples `x` (`c` planes of `hw`
/// values), in f64.
fn channel_moments(x: &[f32], c: usize, hw: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut sum, mut sq, mut count) = (vec![0f64; c], vec![0f64; c], 0f64);
    for s in x.chunks(c * hw) {
        for (ch, plane) in s.chunks(hw).enumerate() {
            sum[ch] += plane.iter().map(|&v| f64::from(v)).sum::<f64>();
            sq[ch] += plane.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>();
        }
        count += hw as f64;
    }
    let mean: Vec<f64> = sum.iter().map(|s| s / count.max(1.0)).collect();
    let spread = (0..c)
        .map(|ch| (sq[ch] / count.max(1.0) - mean[ch] * mean[ch]).max(0.0).sqrt())
        .collect();
    (mean, spread)
}

/// Below this a standard deviation is no divisor: training divides by any spread f32
/// holds as a normal number (features in tiny units are real), so a smaller one was
/// edited in.
const MIN_STD: f32 = f32::MIN_POSITIVE;
/// Beyond this a scale or offset leaves no room in f32 for the values it produces.
const MAX_SCALE: f32 = 1e36;
/// The largest input offset, in standard deviations, that normalisation can leave
/// finite for the network to compute on.
const MAX_OFFSET: f32 = 1e30;

impl Normalisation {
    /// Every scale and offset fit for its use: inputs become `(x - x_mean) / x_std`,
    /// outputs `v * y_std + y_mean`, all in f32. Checked when a model loads, and by
    /// training before it trains (a model that would not load is never written).
    pub(crate) fn check_scales(&self) -> std::result::Result<(), String> {
    let n = self;
    let columns = [
        ("x_mean", &n.x_mean, None),
        ("x_std", &n.x_std, Some(MIN_STD)),
        ("y_mean", &n.y_mean, None),
        ("y_std", &n.y_std, Some(MIN_STD)),
    ];
    for (name, v, min) in columns {
        for (j, &x) in v.iter().enumerate() {
            if min.is_some_and(|m| x < m) {
                let m = min.unwrap_or_default();
                return Err(format!(
                    "normalisation {name}[{j}] is {x:e}, too small to divide by (at least {m:e})"
                ));
            }
            if x.abs() > MAX_SCALE {
                return Err(format!(
                    "normalisation {name}[{j}] is {x:e}, beyond ±{MAX_SCALE:e}: the values it \
                     scales would overflow f32"
                ));
            }
        }
    }
    for (j, (m, s)) in n.x_mean.iter().zip(&n.x_std).enumerate() {
        if (m / s).abs() > MAX_OFFSET {
            return Err(format!(
                "normalisation x_mean[{j}] is {m:e} with x_std {s:e}: normalised inputs near \
                 {:e} overflow the network's f32",
                m / s
            ));
        }
    }
    Ok(())
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
            let v: Vec<f32> = [1.0, 2.0, 3.0, 4.0].iter().map(|x| (x * scale) as f32).collect();
            let (mean, std) = column_stats(&v, 1);
            let want = 1.25f64.sqrt() * scale;
            assert!(((std[0] as f64) - want).abs() <= want * 1e-6, "scale {scale}: {std:?}");
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
            class_names: None,
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
