//! The scale warning: inputs given at prediction on another scale than the training
//! inputs (pixels in 0..1 against 0..255, heights in metres against centimetres) are
//! predicted, but said once per model, since the predictions then mean little. The
//! decision is [`Normalisation::another_scale`]; [`Normalisation::warn_of_another_scale`]
//! says it. A feature is a column of flat inputs, or a channel of images; "training"
//! is what the model's [`Normalisation`] holds of its training inputs.
//!
//! | rule | why | example |
//! |------|-----|---------|
//! | A feature with a value more than [`FAR_RANGES`] (10) training ranges beyond its training range is on another scale, even in one sample ([`Normalisation::beyond_range`]) | a value that far out is other units or an offset; one sample is the usual way to serve | pixels fitted in 0..1 given as 0..255 |
//! | ... unless the feature is sparse: its training spread is [`SPARSE`] (20) times below its range and its mean lies a tenth of a spread from an end | a feature almost always one value has a range that says little of its scale | an edge pixel of MNIST, 0 but once 1 |
//! | A value within ten training ranges of the training range is no sign, however rare such a value was in training | a rare one-hot category, or an outlier in training, says nothing of units | a category seen once in 500 rows, given as 1; an income of 9e6 where training's reached 5e6 |
//! | With [`MIN_SAMPLES_FOR_SCALE`] (8) samples or more: the features that vary vary [`OTHER_SCALE`] (50) times less than in training, and are as much smaller, by their medians ([`Normalisation::less_spread`]) | all features in smaller units | pixels in 0..1 against 0..255 |
//! | ... but only when half the features that vary in training vary in the batch | a what-if sweep varies one feature finely and holds the rest | one feature of iris swept, the others at one flower's values |
//! | ... and only when the values themselves shrank | copies of one sample with a little noise vary as little, at the sample's size | one row repeated with noise of 1e-4 |
//! | With 8 samples or more: one feature varies 50 times less and either lies a training range outside its training range, or, away from zero in training, is 50 times smaller ([`Normalisation::shrunk_outside`]) | one feature in other units, which the medians do not see | petal lengths in metres (0.01..0.069) against centimetres (1..6.9) |
//! | Fewer than 8 samples: only the range rule | a few samples say too little of their spread | one flower, or two |

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Normalisation, column_moments, extremes};
use crate::digits::{decimals, number32};
use crate::spec::Shape;

/// Inputs whose spread is this many times smaller than the training inputs' are on
/// another scale: pixels in 0..1 against 0..255 differ 255 times, while a batch of
/// similar samples, even of heavy-tailed features, rarely varies 50 times less
/// (lognormal features vary 20 times less).
const OTHER_SCALE: f64 = 50.0;
/// A value this many training ranges beyond a feature's training range is in other
/// units or offset (a rare one-hot category stays within its 0..1, where a test of
/// spreads or means would flag it).
const FAR_RANGES: f64 = 10.0;
/// A feature whose training spread is this many times below its training range is
/// almost always one value: a value beyond its range says nothing of units.
const SPARSE: f64 = 20.0;
/// Fewer samples than this say too little about their spread.
const MIN_SAMPLES_FOR_SCALE: usize = 8;

impl Normalisation {
    /// Warns, once per `said` (a model's), when inputs `x` (samples of shape `shape`, not
    /// yet normalised) are on another scale than the training inputs
    /// ([`Self::another_scale`]): images fitted as floats in 0..255 and given as bytes
    /// (read as 0..1) are predicted, but the predictions mean little.
    pub(crate) fn warn_of_another_scale(&self, x: &[f32], shape: Shape, said: &AtomicBool) {
        if said.load(Ordering::Relaxed) {
            return;
        }
        if let Some(why) = self.another_scale(x, shape) {
            said.store(true, Ordering::Relaxed);
            tracing::warn!(
                "the inputs are on another scale than the training inputs: {why}; if they are in other units (pixels in 0..255 against 0..1, say), the predictions mean little"
            );
        }
    }

    /// Why inputs `x` (samples of shape `shape`, not yet normalised) are on another scale
    /// than the training inputs, or `None` (also for a model saved without the training
    /// inputs' spread): a feature (a channel of images) with a value [`FAR_RANGES`]
    /// training ranges beyond its training range ([`Self::beyond_range`], even in one
    /// sample), or, in [`MIN_SAMPLES_FOR_SCALE`] samples or more, features that vary
    /// [`OTHER_SCALE`] times less and are as much smaller ([`Self::less_spread`]), or one
    /// such feature ([`Self::shrunk_outside`]).
    pub(crate) fn another_scale(&self, x: &[f32], shape: Shape) -> Option<String> {
        let per_sample = shape.numel().max(1);
        if self.x_spread.is_empty() || x.is_empty() {
            return None;
        }
        let what = match shape {
            Shape::Image { .. } => "channel",
            Shape::Flat { .. } => "feature",
        };
        let range = extremes(x, shape);
        // A value far beyond the training range says it alone, even in one sample (the
        // usual way to serve); spreads need a few samples.
        let moments = || match shape {
            Shape::Image { c, h, w } => channel_moments(x, c, h * w),
            Shape::Flat { d } => column_moments(x, d),
        };
        self.beyond_range(&range, what).or_else(|| {
            let (mean, spread) = (x.len() / per_sample >= MIN_SAMPLES_FOR_SCALE).then(moments)?;
            let size = self.size_ratios(&mean, &spread);
            self.less_spread(&spread, &size, what)
                .or_else(|| self.shrunk_outside(&range, &spread, &size, what))
        })
    }

    /// The first `what` whose batch extremes `range` lie [`FAR_RANGES`] training ranges
    /// beyond its training range, said.
    fn beyond_range(&self, range: &[[f32; 2]], what: &str) -> Option<String> {
        let features = self
            .x_range
            .iter()
            .zip(self.x_spread.iter().zip(&self.x_mean))
            .zip(range);
        features
            .enumerate()
            .find_map(|(j, ((&[lo, hi], (&t, &m)), &[b_lo, b_hi]))| {
                let span = f64::from(hi) - f64::from(lo);
                let beyond = (f64::from(lo) - f64::from(b_lo)).max(f64::from(b_hi) - f64::from(hi));
                // A feature almost always at one value in training (a pixel at the edge
                // of digits: 0, once 1) has a range that says little of its scale: its
                // spread is small beside its range and its mean sits at an end. One
                // outlier in a spread-out feature (an income of 5e6) is no such feature.
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
    /// against centimetres), which the median of [`Self::less_spread`] does not see.
    /// Varying less alone is a batch of similar samples.
    fn shrunk_outside(
        &self,
        range: &[[f32; 2]],
        spread: &[f64],
        size: &[f64],
        what: &str,
    ) -> Option<String> {
        let features = self
            .x_range
            .iter()
            .zip(self.x_spread.iter().zip(&self.x_mean))
            .zip(range.iter().zip(spread));
        features
            .enumerate()
            .find_map(|(j, ((&[lo, hi], (&t, &m)), (&[b_lo, b_hi], &b)))| {
                let span = f64::from(hi) - f64::from(lo);
                let outside =
                    (f64::from(lo) - f64::from(b_hi)).max(f64::from(b_lo) - f64::from(hi));
                let shrunk = t.is_normal() && b > 0.0 && b / f64::from(t) < 1.0 / OTHER_SCALE;
                // Or its values shrank as a whole, for a feature away from zero in
                // training (petal lengths 1..6.9 cm given in metres).
                let away_from_zero = f64::from(m).abs() > 2.0 * f64::from(t);
                let smaller = away_from_zero && size[j] < 1.0 / OTHER_SCALE;
                (span > 0.0 && shrunk && (outside > span || smaller)).then(|| {
                    format!(
                        "{what} {j} varies {} times less than in training and lies at {}..{}, away from its training range {}..{}",
                        decimals(f64::from(t) / b, 3),
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
        let training = self
            .x_mean
            .iter()
            .zip(&self.x_spread)
            .map(|(&m, &s)| rms(f64::from(m), f64::from(s)));
        let batch = mean.iter().zip(spread).map(|(&m, &s)| rms(m, s));
        batch
            .zip(training)
            .map(|(b, t)| if t > 0.0 { b / t } else { f64::INFINITY })
            .collect()
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
        // units: the rule needs half the features that vary in training.
        let varying = self.x_spread.iter().filter(|t| t.is_normal()).count();
        if ratios.len() * 2 < varying {
            return None;
        }
        ratios.sort_by(f64::total_cmp);
        let median = *ratios.get(ratios.len() / 2)?;
        // And the values themselves shrank: copies of one sample with a little noise
        // vary as little, at the sample's size.
        let mut sizes: Vec<f64> = size
            .iter()
            .zip(&self.x_spread)
            .filter(|(_, t)| t.is_normal())
            .map(|(&r, _)| r)
            .collect();
        sizes.sort_by(f64::total_cmp);
        let smaller = sizes
            .get(sizes.len() / 2)
            .is_some_and(|&r| r < 1.0 / OTHER_SCALE);
        (median < 1.0 / OTHER_SCALE && smaller).then(|| {
            format!(
                "they vary {} times less than in training (the median over the {what}s that vary)",
                decimals(1.0 / median, 3)
            )
        })
    }
}

/// Each channel's mean and standard deviation over the samples `x` (`c` planes of `hw`
/// values), in f64.
fn channel_moments(x: &[f32], c: usize, hw: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut sum, mut sq, mut count) = (vec![0f64; c], vec![0f64; c], 0f64);
    for s in x.chunks(c * hw) {
        for (ch, plane) in s.chunks(hw).enumerate() {
            sum[ch] += plane.iter().map(|&v| f64::from(v)).sum::<f64>();
            sq[ch] += plane
                .iter()
                .map(|&v| f64::from(v) * f64::from(v))
                .sum::<f64>();
        }
        count += hw as f64;
    }
    let mean: Vec<f64> = sum.iter().map(|s| s / count.max(1.0)).collect();
    let spread = (0..c)
        .map(|ch| {
            (sq[ch] / count.max(1.0) - mean[ch] * mean[ch])
                .max(0.0)
                .sqrt()
        })
        .collect();
    (mean, spread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::ImageNorm;
    use crate::data::{Dataset, Targets};
    use std::io::Read;
    use std::path::Path;

    /// The normalisation fitted on `x` (samples of shape `shape`).
    fn fit(x: &[f32], shape: Shape) -> Normalisation {
        let sample_shape = match shape {
            Shape::Image { c, h, w } => vec![c, h, w],
            Shape::Flat { d } => vec![d],
        };
        let n = x.len() / shape.numel();
        let data = Dataset {
            x: crate::data::Values::F32(x.to_vec()),
            sample_shape,
            targets: Targets::Classes {
                labels: vec![0; n],
                n_classes: 2,
            },
            class_names: None,
            own_validation: None,
        };
        Normalisation::from_data(&data, shape, ImageNorm::Mean)
    }

    /// The rows of a data file of `data/small` (gzipped or not) as numbers, the first
    /// line skipped when `header`, the last column (the class) dropped.
    fn table(name: &str, header: bool) -> Vec<Vec<f32>> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/small")
            .join(name);
        let text = String::from_utf8(crate::data::read_maybe_gz(&path).unwrap()).unwrap();
        let rows = text.lines().skip(usize::from(header));
        rows.map(|l| {
            let cells: Vec<f32> = l.split(',').map(|c| c.trim().parse().unwrap()).collect();
            cells[..cells.len() - 1].to_vec()
        })
        .collect()
    }

    /// The first `n` images of an MNIST IDX file of `data/mnist`, each pixel in 0..1 as
    /// the crate's reader gives them.
    fn mnist(name: &str, n: usize) -> Vec<f32> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/mnist")
            .join(name);
        let file = std::fs::File::open(path).unwrap();
        let mut bytes = vec![0u8; 16 + n * 784];
        flate2::read::GzDecoder::new(file)
            .read_exact(&mut bytes)
            .unwrap();
        bytes[16..].iter().map(|&b| f32::from(b) / 255.0).collect()
    }

    /// Iris's 150 flowers: four features in centimetres.
    fn iris() -> Vec<Vec<f32>> {
        table("iris.csv", true)
    }

    /// `rows` split in two: every fifth row held out (the files are sorted by class).
    fn held_out(rows: &[Vec<f32>]) -> (Vec<f32>, Vec<f32>) {
        let (mut fit, mut held) = (vec![], vec![]);
        for (i, r) in rows.iter().enumerate() {
            match i % 5 == 2 {
                true => held.extend_from_slice(r),
                false => fit.extend_from_slice(r),
            }
        }
        (fit, held)
    }

    /// A case of the table: training inputs, inputs given, their shape, and the start of
    /// the reason the rule must give (`None`: the rule is silent).
    struct Case {
        name: &'static str,
        training: Vec<f32>,
        given: Vec<f32>,
        shape: Shape,
        says: Option<&'static str>,
    }

    /// A flat case.
    fn flat(
        name: &'static str,
        training: Vec<f32>,
        given: Vec<f32>,
        d: usize,
        says: Option<&'static str>,
    ) -> Case {
        let shape = Shape::Flat { d };
        Case {
            name,
            training,
            given,
            shape,
            says,
        }
    }

    /// Copies of `row`, `n` times, each value moved by at most `noise` of itself.
    fn copies(row: &[f32], n: usize, noise: f32) -> Vec<f32> {
        (0..n)
            .flat_map(|i| {
                row.iter().enumerate().map(move |(j, &v)| {
                    let wobble = (((i * 31 + j * 17) % 13) as f32 / 6.0 - 1.0) * noise;
                    v * (1.0 + wobble)
                })
            })
            .collect()
    }

    /// The rule's cases: one or more per rule, then the false alarms it must not raise.
    fn cases() -> Vec<Case> {
        let iris = iris();
        let (iris_fit, iris_held) = held_out(&iris);
        let flat_iris: Vec<f32> = iris.concat();
        let mut cases = vec![];
        // A feature far beyond its range: one flower with its sepal length x255.
        let mut far = iris[7].clone();
        far[0] *= 255.0;
        let reaches = Some("feature 0 reaches");
        cases.push(flat(
            "one flower, a feature x255",
            flat_iris.clone(),
            far,
            4,
            reaches,
        ));
        // Every flower given in millimetres: sepal lengths ten ranges beyond.
        let mm: Vec<f32> = iris_held.iter().map(|v| v * 10.0).collect();
        cases.push(flat(
            "flowers in millimetres",
            iris_fit.clone(),
            mm,
            4,
            reaches,
        ));
        // All features 50 times smaller and less spread: every flower in metres.
        let metres: Vec<f32> = iris_held.iter().map(|v| v / 100.0).collect();
        let vary_less = Some("they vary");
        // Eight samples say it; seven say too little.
        let eight = metres[..8 * 4].to_vec();
        cases.push(flat(
            "eight flowers in metres",
            iris_fit.clone(),
            eight,
            4,
            vary_less,
        ));
        let seven = metres[..7 * 4].to_vec();
        cases.push(flat(
            "seven flowers in metres",
            iris_fit.clone(),
            seven,
            4,
            None,
        ));
        cases.push(flat(
            "flowers in metres",
            iris_fit.clone(),
            metres,
            4,
            vary_less,
        ));
        // One feature in units 100 times smaller, lying outside its range: petal lengths
        // (1..6.9 cm) in metres.
        let mut petal_m = iris_held.clone();
        petal_m.chunks_mut(4).for_each(|r| r[2] /= 100.0);
        let one = Some("feature 2 varies");
        cases.push(flat(
            "petal lengths in metres",
            iris_fit.clone(),
            petal_m,
            4,
            one,
        ));
        // One feature 100 times smaller that lies outside its range near zero in
        // training: a training range outside.
        let around_zero = |i: usize| [(i % 7) as f32 - 3.0, (i % 5) as f32];
        let training: Vec<f32> = (0..100).flat_map(around_zero).collect();
        let given: Vec<f32> = (0..20)
            .flat_map(|i| [30.0 + ((i % 7) as f32 - 3.0) / 100.0, (i % 5) as f32])
            .collect();
        let f0 = Some("feature 0 varies");
        cases.push(flat("one feature shrunk, shifted", training, given, 2, f0));
        // Pixels fitted in 0..255, given in 0..1: all channels 255 times less spread.
        let pixels = mnist("train-images-idx3-ubyte.gz", 2000);
        let bytes: Vec<f32> = pixels.iter().map(|v| v * 255.0).collect();
        let test = mnist("t10k-images-idx3-ubyte.gz", 300);
        let image = Shape::Image { c: 1, h: 28, w: 28 };
        cases.push(Case {
            name: "MNIST fitted in 0..255, given in 0..1",
            training: bytes.clone(),
            given: test.clone(),
            shape: image,
            says: Some("they vary"),
        });
        // And fitted in 0..1, given in 0..255: the channel far beyond its range.
        cases.push(Case {
            name: "MNIST fitted in 0..1, given in 0..255",
            training: pixels.clone(),
            given: test.iter().map(|v| v * 255.0).collect(),
            shape: image,
            says: Some("channel 0 reaches"),
        });

        // False alarms. Held-out splits of real data sets.
        cases.push(flat(
            "iris held out",
            iris_fit.clone(),
            iris_held.clone(),
            4,
            None,
        ));
        let (wine_fit, wine_held) = held_out(&table("wine_data.csv", true));
        cases.push(flat("wine held out", wine_fit, wine_held, 13, None));
        let (digits_fit, digits_held) = held_out(&table("digits.csv.gz", false));
        cases.push(flat("digits held out", digits_fit, digits_held, 64, None));
        cases.push(Case {
            name: "MNIST's test images",
            training: pixels.clone(),
            given: test,
            shape: image,
            says: None,
        });
        // As flat features, each pixel its own: edge pixels almost always 0 (sparse).
        cases.push(flat(
            "MNIST's test images as 784 features",
            pixels,
            mnist("t10k-images-idx3-ubyte.gz", 300),
            784,
            None,
        ));
        // A what-if sweep: petal length varied finely, the rest at one flower's values.
        let sweep: Vec<f32> = (0..100)
            .flat_map(|i| {
                let mut r = iris[60].clone();
                r[2] = 1.0 + 0.059 * i as f32;
                r
            })
            .collect();
        cases.push(flat("a what-if sweep", flat_iris.clone(), sweep, 4, None));
        // And a fine one about a sample at the centre of centred features: the values
        // are small, but only one feature varies.
        let centred = |i: usize| {
            [
                (i % 7) as f32 - 3.0,
                (i % 5) as f32 - 2.0,
                (i % 3) as f32 - 1.0,
            ]
        };
        let training: Vec<f32> = (0..105).flat_map(centred).collect();
        let sweep: Vec<f32> = (0..100)
            .flat_map(|i| [0.0002 * i as f32, 0.01, -0.01])
            .collect();
        cases.push(flat("a fine sweep at the centre", training, sweep, 3, None));
        // Copies of one flower with a little noise: less spread, at the flower's size.
        let same = copies(&iris[100], 30, 1e-4);
        cases.push(flat(
            "copies of one row with noise",
            flat_iris.clone(),
            same,
            4,
            None,
        ));
        // One outlier in training (an income of 5e6 among tens of thousands), then
        // ordinary values: the range it widened says nothing.
        let income = |i: usize| 20_000.0 + 1_000.0 * (i % 40) as f32;
        let mut training: Vec<f32> = (0..200).map(income).collect();
        training[17] = 5e6;
        let given: Vec<f32> = (0..30).map(|i| income(i * 3)).collect();
        cases.push(flat(
            "one outlier in training",
            training.clone(),
            given,
            1,
            None,
        ));
        // And an ordinary income given alone, or an outlier as large again.
        cases.push(flat(
            "one income",
            training.clone(),
            vec![31_000.0],
            1,
            None,
        ));
        cases.push(flat("another outlier", training, vec![9e6], 1, None));
        // A rare one-hot category seen at last: within its 0..1.
        let rare: Vec<f32> = (0..500).map(|i| f32::from(u8::from(i == 3))).collect();
        cases.push(flat("a rare category", rare, vec![1.0; 10], 1, None));
        // One flower, or a few: only the range rule, and they are in range.
        cases.push(flat(
            "one flower",
            flat_iris.clone(),
            iris[3].clone(),
            4,
            None,
        ));
        let few = copies(&iris[3], 7, 0.0);
        cases.push(flat("seven copies of a flower", flat_iris, few, 4, None));
        cases
    }

    #[test]
    fn the_scale_warning_catches_each_rule_and_no_false_alarm() {
        for case in cases() {
            let norm = fit(&case.training, case.shape);
            let why = norm.another_scale(&case.given, case.shape);
            match (case.says, &why) {
                (Some(start), Some(why)) => {
                    assert!(why.starts_with(start), "{}: {why}", case.name)
                }
                (None, None) => {}
                _ => panic!("{}: said {why:?}, wanted {:?}", case.name, case.says),
            }
        }
    }

    /// Each sample of the held-out splits given alone (the usual way to serve): only the
    /// range rule can speak, and it must not.
    #[test]
    fn held_out_samples_alone_are_not_on_another_scale() {
        let sets = [
            (table("iris.csv", true), 4),
            (table("wine_data.csv", true), 13),
            (table("digits.csv.gz", false), 64),
        ];
        for (rows, d) in sets {
            let (fit_x, held) = held_out(&rows);
            let norm = fit(&fit_x, Shape::Flat { d });
            for (i, sample) in held.chunks(d).enumerate() {
                let why = norm.another_scale(sample, Shape::Flat { d });
                assert_eq!(why, None, "{d} features, held-out sample {i}");
            }
        }
        let norm = fit(
            &mnist("train-images-idx3-ubyte.gz", 2000),
            Shape::Image { c: 1, h: 28, w: 28 },
        );
        for (i, image) in mnist("t10k-images-idx3-ubyte.gz", 300)
            .chunks(784)
            .enumerate()
        {
            let why = norm.another_scale(image, Shape::Image { c: 1, h: 28, w: 28 });
            assert_eq!(why, None, "MNIST test image {i}");
        }
    }

    /// Said once per model; nothing said for a model saved without the spreads.
    #[test]
    fn the_warning_is_said_once_and_not_without_training_spreads() {
        let iris: Vec<f32> = iris().concat();
        let shape = Shape::Flat { d: 4 };
        let mut norm = fit(&iris, shape);
        let far: Vec<f32> = iris[..4].iter().map(|v| v * 255.0).collect();
        let said = AtomicBool::new(false);
        norm.warn_of_another_scale(&far, shape, &said);
        assert!(said.load(Ordering::Relaxed));
        norm.x_spread.clear();
        assert_eq!(norm.another_scale(&far, shape), None);
        assert_eq!(fit(&iris, shape).another_scale(&[], shape), None);
    }
}
