//! What f32 does to a column: ant computes in f32, and values read in f64 (a table's
//! text, a Python array) are narrowed. A value f32 cannot hold is refused with its line
//! ([`to_f32`]); a training column f32 would flatten or blur is refused whole, or said
//! ([`ColumnMagnitudes`], judged by [`check_magnitudes`]); the scales that standardise
//! the columns must leave their values within f32 ([`check_standardisation`], when a
//! model is trained and when it loads).
//!
//! | rule | why | example |
//! |------|-----|---------|
//! | A value beyond f32's range is refused, with its line | it would be infinite in f32, though finite in f64 | `1e300` |
//! | A value that is not finite is refused, with its line | no fit computes on it | `nan`, `inf` |
//! | A value below f32's smallest normal magnitude among larger ones is kept | it becomes 0, or nearly, like any tiny value beside others | a p-value of `1e-300` among `0.5`s |
//! | A column whose every non-zero value lies below f32's smallest normal magnitude (1.2e-38) is refused | f32 keeps few digits of it or none (`1e-50` becomes 0): multiplying it rescues it | `1e-50`, `3e-45` |
//! | A column whose spread is finer than f32's 7 digits hold at its size, where narrowing moves a value by more than [`MAX_NARROWING_SHARE`] (5%) of the spread, is refused, at every offset and whether its values narrow to several f32 values or to one, features and targets alike | timestamps or identifiers with a large offset become a handful of values 128 apart, or one: subtracting the offset rescues them (trained as a constant, a target would be scored on nothing) | `1.7e9 + 7i`, `1.7e9 + i`, `1e8 + i`, `0.3 + 1e-9 i` |
//! | ... except one f32 value written at both widths: a constant, without a word | it is one number, exported by f32 and by f64 code | `0.3` beside its f32 value `0.30000001192092896` |
//! | A spread below [`NOISE_SHARE`] (two of f64's steps) of the values' size is f64 rounding noise: a constant, without a word | it is no data | `0.1 + 0.2` beside `0.3` |
//! | Columns at any scale whose spread f32 holds are kept | features and targets in tiny or huge units are as real as any | prices, coordinates, times days apart, values around `1e-30` |
//! | A standard deviation below f32's smallest normal magnitude ([`MIN_STD`]) is refused | training never divides by less, so it was edited in | `x_std` of `1e-40` |
//! | A column whose mean plus [`HEADROOM`] (16) standard deviations exceeds f32's largest value (3.4e38) is refused, with the power of ten that rescues it | standardised values, and outputs scaled back, would overflow f32 | targets of mean `2e38` |
//! | An input mean beyond [`MAX_OFFSET`] (1e30) standard deviations is refused | normalised inputs that large overflow the network's f32 | `x_mean` `1e31` with `x_std` `1` |

use std::path::Path;

use crate::error::{AntError, Result};

/// A value read from a file (or given from Python) as the f32 training computes in, or
/// why it cannot be one (NaN, infinite, or beyond f32's range: 1e300 is finite in f64,
/// infinite in f32). Values too small for f32 are judged by their column
/// ([`ColumnMagnitudes`]): a p-value of 1e-300 among others is a 0 like any.
pub fn to_f32(v: f64) -> std::result::Result<f32, String> {
    let v32 = v as f32;
    match (v.is_finite(), v32.is_finite()) {
        (true, true) => Ok(v32),
        (true, false) => Err(format!(
            "is {v:e}, which overflows f32 (its values stay within ±{:e})",
            f32::MAX
        )),
        (false, _) => Err(format!("is non-finite ({v})")),
    }
}

/// What f32 would do to each column of values read, to refuse a column it would
/// silently flatten or blur:
/// - one whose every non-zero value lies below f32's smallest normal magnitude
///   (1.2e-38), where f32 keeps few digits or none (1e-50 becomes 0);
/// - one whose spread is finer than f32's 7 digits hold at its size (timestamps,
///   identifiers or readings with a large offset: 1,700,000,000 plus a few hundred
///   becomes a handful of values 128 apart), found as narrowing changing its values by
///   more than 5% of their spread.
///
/// The second rule holds at every offset, whether narrowing leaves several values or
/// one (1.7e9 plus a few units is one f32 value: as a constant target it would be
/// scored on nothing). A spread below two of f64's steps of the values' size is f64 rounding noise
/// (0.1 + 0.2 against 0.3), not data: such a column is constant to training. So is one
/// f32 value written at both widths (`0.3` beside `0.30000001192092896`, as exports of
/// f32 and f64 code mix): one number.
pub struct ColumnMagnitudes(Vec<ColumnSeen>);

/// One column's largest magnitude, its running mean and sum of squared deviations
/// (Welford's, in f64), the largest change narrowing to f32 made to a value, the
/// smallest and largest value narrowed, and its first two distinct values (`more`: it
/// has others).
#[derive(Clone, Copy)]
struct ColumnSeen {
    max: f64,
    n: f64,
    mean: f64,
    m2: f64,
    narrowing: f64,
    lo: f32,
    hi: f32,
    first: [Option<f64>; 2],
    more: bool,
}

/// The share of a column's spread that narrowing may change a value by (steps of a
/// tenth of the spread: noise of 3% of it, which no fit notices).
const MAX_NARROWING_SHARE: f64 = 0.05;
/// A spread below this share of the values' size (two of f64's steps) is f64 rounding
/// noise (`0.1 + 0.2` against `0.3` is one step); 1e15 plus a unit (8 steps) is data.
const NOISE_SHARE: f64 = 2.0 * f64::EPSILON;

/// Refuses a column f32 would flatten or blur, seen in `seen`, naming it (`label(j)`):
/// the one check of a table's columns (features and targets) read for training.
pub(super) fn check_magnitudes(
    seen: &ColumnMagnitudes,
    label: impl Fn(usize) -> String,
    path: &Path,
) -> Result<()> {
    match seen.too_small() {
        Some((j, why)) => Err(AntError::data(path, format!("{}: {why}", label(j)))),
        None => Ok(()),
    }
}

impl ColumnMagnitudes {
    pub fn new(columns: usize) -> ColumnMagnitudes {
        let none = ColumnSeen {
            max: 0.0,
            n: 0.0,
            mean: 0.0,
            m2: 0.0,
            narrowing: 0.0,
            lo: f32::INFINITY,
            hi: f32::NEG_INFINITY,
            first: [None; 2],
            more: false,
        };
        ColumnMagnitudes(vec![none; columns])
    }

    pub fn see(&mut self, column: usize, v: f64) {
        let c = &mut self.0[column];
        c.max = c.max.max(v.abs());
        if !v.is_finite() {
            return; // refused by to_f32, with its line
        }
        c.n += 1.0;
        let delta = v - c.mean;
        c.mean += delta / c.n;
        c.m2 += delta * (v - c.mean);
        let v32 = v as f32;
        c.narrowing = c.narrowing.max((f64::from(v32) - v).abs());
        (c.lo, c.hi) = (c.lo.min(v32), c.hi.max(v32));
        match c.first {
            [Some(a), _] if a == v => {}
            [Some(_), Some(b)] if b == v => {}
            [None, _] => c.first[0] = Some(v),
            [Some(_), None] => c.first[1] = Some(v),
            [Some(_), Some(_)] => c.more = true,
        }
    }

    /// The first column f32 would flatten or blur, and why (with what rescues it).
    pub fn too_small(&self) -> Option<(usize, String)> {
        self.0
            .iter()
            .enumerate()
            .find_map(|(j, c)| c.lost_in_f32().map(|why| (j, why)))
    }
}

impl ColumnSeen {
    fn std(&self) -> f64 {
        (self.m2 / self.n.max(1.0)).sqrt()
    }

    /// Whether the values vary (beyond f64 noise) and narrowing moves them by more than
    /// [`MAX_NARROWING_SHARE`] of their spread.
    fn blurred(&self) -> bool {
        let std = self.std();
        std > NOISE_SHARE * self.mean.abs()
            && std > 0.0
            && self.narrowing > MAX_NARROWING_SHARE * std
    }

    /// The power of ten just above the spread.
    fn power(&self) -> i32 {
        self.std().log10().floor() as i32 + 1
    }

    /// The mean, to two digits below the spread's.
    fn mean_text(&self) -> String {
        format!("{:.*}", (2 - self.power()).max(0) as usize, self.mean)
    }

    /// An offset of the mean's leading digits, down to the spread's.
    fn offset(&self) -> String {
        let unit = 10f64.powi(self.power());
        format!(
            "{:.*}",
            (-self.power()).max(0) as usize,
            (self.mean / unit).round() * unit
        )
    }

    /// Whether the values are one f32 value, written as f32 writes it (its shortest
    /// digits) and as f64 holds it: `0.3` and `0.30000001192092896`.
    fn one_value_at_two_widths(&self) -> bool {
        let one = self.lo;
        let widths = [one.to_string().parse::<f64>().ok(), Some(f64::from(one))];
        self.lo == self.hi
            && !self.more
            && self
                .first
                .iter()
                .flatten()
                .all(|v| widths.contains(&Some(*v)))
    }

    fn lost_in_f32(&self) -> Option<String> {
        let max = self.max;
        if max > 0.0 && max < f64::from(f32::MIN_POSITIVE) {
            // As an exponent: 1e310 is no f64.
            let factor = (-max.log10()).ceil() as i32;
            return Some(format!(
                "every value is below f32's smallest normal magnitude ({:e}; the largest is {max:e}), where f32 keeps few digits or none: multiply the column by 1e{factor}",
                f32::MIN_POSITIVE
            ));
        }
        // Values moved about by narrowing, whether they stay several or become one,
        // unless they are one f32 value at two widths.
        (self.blurred() && !self.one_value_at_two_widths()).then(|| {
            format!(
                "its values vary by {:.3e} around {}, finer than f32's 7 digits hold at that size (ant computes in f32): narrowing changes them by up to {:.3e}, {:.0}% of their spread; subtract an offset such as {} first",
                self.std(),
                self.mean_text(),
                self.narrowing,
                100.0 * self.narrowing / self.std(),
                self.offset()
            )
        })
    }
}

/// Below this a standard deviation is no divisor: training divides by any spread f32
/// holds as a normal number (features in tiny units are real), so a smaller one was
/// edited in.
const MIN_STD: f32 = f32::MIN_POSITIVE;
/// How many standard deviations from its mean a standardised column's values (and a
/// model's outputs) may lie and still be f32 numbers once scaled back: a column is
/// standardised when `|mean| + HEADROOM * std` is within f32 (3.4e38).
const HEADROOM: f64 = 16.0;
/// The largest input offset, in standard deviations, that normalisation can leave
/// finite for the network to compute on.
const MAX_OFFSET: f32 = 1e30;

/// Whether the means and standard deviations that standardise the columns (inputs
/// become `(x - x_mean) / x_std`, outputs `v * y_std + y_mean`, all in f32) are each
/// fit for its use, or why the first that is not is not.
pub(crate) fn check_standardisation(
    x_mean: &[f32],
    x_std: &[f32],
    y_mean: &[f32],
    y_std: &[f32],
) -> std::result::Result<(), String> {
    for (name, mean, std) in [("x", x_mean, x_std), ("y", y_mean, y_std)] {
        for (j, (&m, &s)) in mean.iter().zip(std).enumerate() {
            if s < MIN_STD {
                return Err(format!(
                    "normalisation {name}_std[{j}] is {s:e}, too small to divide by (at least {MIN_STD:e}){}",
                    factor_to(f64::from(s), 1e-30)
                ));
            }
            let reach = f64::from(m).abs() + HEADROOM * f64::from(s);
            if reach.is_nan() || reach > f64::from(f32::MAX) {
                return Err(format!(
                    "normalisation {name}_mean[{j}] is {m:e} with {name}_std {s:e}: values {HEADROOM} \
                     standard deviations from the mean would overflow f32{}",
                    factor_to(reach, f64::from(f32::MAX) / 100.0)
                ));
            }
        }
    }
    for (j, (m, s)) in x_mean.iter().zip(x_std).enumerate() {
        if (m / s).abs() > MAX_OFFSET {
            return Err(format!(
                "normalisation x_mean[{j}] is {m:e} with x_std {s:e}: normalised inputs near \
                 {:e} overflow the network's f32; subtract an offset such as {m:e} from the column",
                m / s
            ));
        }
    }
    Ok(())
}

/// `: multiply the column by 1eK`, the power of ten that takes `size` to about `to`
/// (as an exponent: 1e310 is no f64); nothing when `size` is 0 or not finite.
fn factor_to(size: f64, to: f64) -> String {
    match size > 0.0 && size.is_finite() {
        true => format!(
            ": multiply the column by 1e{}",
            (to.log10() - size.log10()).floor() as i32
        ),
        false => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column `values` as [`ColumnMagnitudes`] judges it.
    fn judged(values: impl Iterator<Item = f64>) -> Option<String> {
        let mut seen = ColumnMagnitudes::new(1);
        values.for_each(|v| seen.see(0, v));
        seen.too_small().map(|(_, why)| why)
    }

    #[test]
    fn a_column_is_refused_only_when_f32_blurs_its_spread() {
        // A few units apart, Unix times are one f32 value: refused as when they are
        // several, at every offset.
        for offset in [3e7, 1e8, 1.7e9, 1e12, 1e15] {
            let why = judged((0..50).map(|i| offset + f64::from(i % 5))).expect("refused");
            assert!(
                why.contains("subtract an offset such as"),
                "{offset:e}: {why}"
            );
        }
        // 0.3 beside its own f32 value (exports of both widths mixed): one number.
        assert_eq!(
            judged((0..50).map(|i| [0.3, f64::from(0.3f32)][i % 2])),
            None
        );
        // A few hundred apart: 128 apart in f32, refused.
        let why = judged((0..50).map(|i| 1.7e9 + 7.0 * f64::from(i))).expect("refused");
        assert!(
            why.contains("subtract an offset such as 1700000000"),
            "{why}"
        );
        // The same times days apart, a price, a coordinate: kept.
        assert_eq!(
            judged((0..50).map(|i| 1.7e9 + 86_400.0 * f64::from(i))),
            None
        );
        assert_eq!(judged((0..50).map(|i| 2e5 + 1e3 * f64::from(i))), None);
        assert_eq!(judged((0..50).map(|i| 37.7 + 1e-3 * f64::from(i))), None);
        // f64 rounding noise around a constant is a constant, not data.
        assert_eq!(judged((0..50).map(|i| [0.3, 0.1 + 0.2][i % 2])), None);
        let why = judged((0..50).map(|i| 37.774_929 + 1e-6 * f64::from(i))).expect("refused");
        assert!(
            why.contains("around 37.77495") && why.contains("offset such as 37.7750"),
            "{why}"
        );
    }

    /// What becomes of a column read for training.
    #[derive(Debug, PartialEq)]
    enum Fate {
        /// Read as it is, without a word.
        Kept,
        /// Refused, the error holding this.
        Refused(&'static str),
    }

    /// The fate of the column `values`, read from a table: refused by a value
    /// ([`to_f32`]) or by the column ([`check_magnitudes`]), or said.
    fn fate(values: &[f64], wanted: &Fate) -> bool {
        let path = Path::new("/t.csv");
        let mut seen = ColumnMagnitudes::new(1);
        let mut refused = None;
        for &v in values {
            seen.see(0, v);
            if let Err(why) = to_f32(v) {
                refused.get_or_insert(why);
            }
        }
        let label = |j: usize| format!("column {j}");
        let refused = refused.or_else(|| {
            check_magnitudes(&seen, label, path)
                .err()
                .map(|e| e.to_string())
        });
        match (wanted, refused) {
            (Fate::Refused(text), Some(why)) => why.contains(text),
            (Fate::Kept, None) => true,
            _ => false,
        }
    }

    /// `n` values `f(i)`.
    fn column(n: usize, f: impl Fn(f64) -> f64) -> Vec<f64> {
        (0..n).map(|i| f(i as f64)).collect()
    }

    /// One column per rule, and the false alarms the rules must not raise.
    fn columns() -> Vec<(&'static str, Vec<f64>, Fate)> {
        vec![
            // One row per rule.
            (
                "a value beyond f32's range",
                vec![1.0, 1e300, 2.0],
                Fate::Refused("is 1e300, which overflows f32"),
            ),
            (
                "a value not finite",
                vec![1.0, f64::NAN],
                Fate::Refused("non-finite"),
            ),
            (
                "values all below f32's smallest normal",
                column(20, |i| (i + 1.0) * 1e-50),
                Fate::Refused("every value is below f32's smallest normal magnitude"),
            ),
            (
                "the smallest f32 subnormals",
                vec![3e-45, 0.0, 1e-45],
                Fate::Refused("the largest is 3e-45), where f32 keeps few digits or none"),
            ),
            (
                "a 1.7e9 offset, a few hundred apart",
                column(50, |i| 1.7e9 + 7.0 * i),
                Fate::Refused("subtract an offset such as 1700000000"),
            ),
            (
                "a 1.7e9 offset, a few tens apart (one f32 value)",
                column(50, |i| 1.7e9 + i),
                Fate::Refused("subtract an offset such as 1700000000"),
            ),
            (
                "0.3 plus a variation f32 cannot hold (one f32 value)",
                column(50, |i| 0.3 + 1e-9 * (i % 2.0)),
                Fate::Refused("finer than f32's 7 digits"),
            ),
            (
                "0.3 beside its f32 value",
                column(50, |i| [0.3, f64::from(0.3f32)][i as usize % 2]),
                Fate::Kept,
            ),
            // The false alarms it must not raise.
            (
                "0.1 + 0.2 beside 0.3 (f64 noise)",
                column(50, |i| [0.3, 0.1 + 0.2][i as usize % 2]),
                Fate::Kept,
            ),
            ("a constant", vec![7.0; 10], Fate::Kept),
            ("zeros", vec![0.0; 10], Fate::Kept),
            (
                "one p-value of 1e-300 among others",
                vec![0.5, 1e-300, 0.01, 0.2],
                Fate::Kept,
            ),
            (
                "values around 1e-30",
                column(50, |i| (1.0 + i) * 1e-30),
                Fate::Kept,
            ),
            (
                "values around 1e30",
                column(50, |i| (1.0 + i) * 1e30),
                Fate::Kept,
            ),
            (
                "times days apart",
                column(50, |i| 1.7e9 + 86_400.0 * i),
                Fate::Kept,
            ),
            ("prices", column(50, |i| 2e5 + 1e3 * i), Fate::Kept),
            ("a coordinate", column(50, |i| 37.7 + 1e-3 * i), Fate::Kept),
            (
                "iris's petal lengths",
                column(50, |i| 1.0 + 0.1 * i),
                Fate::Kept,
            ),
        ]
    }

    #[test]
    fn what_f32_does_to_a_column_row_by_row() {
        for (name, values, wanted) in columns() {
            assert!(fate(&values, &wanted), "{name}: not {wanted:?}");
        }
    }

    #[test]
    fn standardisation_in_f32_row_by_row() {
        let ok = |x_mean: &[f32], x_std: &[f32], y_mean: &[f32], y_std: &[f32]| {
            check_standardisation(x_mean, x_std, y_mean, y_std)
        };
        let tiny = f32::MIN_POSITIVE / 2.0;
        let rows: Vec<(&str, std::result::Result<(), String>, Option<&str>)> = vec![
            (
                "an input spread below f32's normals",
                ok(&[0.0], &[tiny], &[], &[]),
                Some("x_std[0] is 5.877472e-39, too small to divide by"),
            ),
            (
                "a target spread below f32's normals",
                ok(&[0.0], &[1.0], &[0.0], &[tiny]),
                Some("y_std[0]"),
            ),
            (
                "a target mean with no room for 16 deviations",
                ok(&[0.0], &[1.0], &[3e38], &[1e37]),
                Some(
                    "y_mean[0] is 3e38 with y_std 1e37: values 16 standard deviations from the mean would overflow f32: multiply the column by 1e-3",
                ),
            ),
            (
                "an input spread of 3e37",
                ok(&[0.0, 0.0], &[1.0, 3e37], &[], &[]),
                Some("x_mean[1] is 0e0 with x_std 3e37"),
            ),
            (
                "columns x1e36 and targets x1e37 (iris's scales)",
                ok(&[5.8e36], &[8.3e35], &[5.8e37], &[8.3e36]),
                None,
            ),
            (
                "an input mean 1e31 spreads off",
                ok(&[1e31], &[1.0], &[], &[]),
                Some("normalised inputs near 1e31 overflow"),
            ),
            // Fit for use.
            (
                "ordinary columns",
                ok(&[5.8, 3.0], &[0.8, 0.4], &[], &[]),
                None,
            ),
            (
                "tiny units with a normal spread",
                ok(&[1e-30], &[1e-31], &[1e-30], &[1e-31]),
                None,
            ),
            ("huge units", ok(&[1e35], &[1e34], &[1e35], &[1e34]), None),
            ("a constant at 1e30", ok(&[1e30], &[1.0], &[], &[]), None),
            (
                "classification: no targets",
                ok(&[0.5], &[1.0], &[], &[]),
                None,
            ),
        ];
        for (name, got, wanted) in rows {
            match (got, wanted) {
                (Err(why), Some(text)) => assert!(why.contains(text), "{name}: {why}"),
                (Ok(()), None) => {}
                (got, _) => panic!("{name}: {got:?}, wanted {wanted:?}"),
            }
        }
    }
}
