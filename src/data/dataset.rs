//! A data set in memory: samples as one row-major buffer (f32 values, or an image's
//! bytes, four times smaller, turned into values a batch at a time), and their targets.

use std::borrow::Cow;
use std::path::Path;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::error::{AntError, Result};
use crate::store::checksum::hex;

/// Samples' values, row-major: f32 values, or bytes that stand for `byte / 255` (the
/// pixels of IDX, CIFAR-10, image files and `uint8` arrays): MNIST's training images
/// are 47 MB so, not 188 MB.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Values {
    F32(Vec<f32>),
    Bytes(Vec<u8>),
}

/// The value a pixel's byte stands for.
#[inline]
pub(crate) fn byte_value(b: u8) -> f32 {
    f32::from(b) / 255.0
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::Bytes(b) => b.len(),
        }
    }

    /// Values `range`, as f32 (bytes turned into values: a copy).
    pub(crate) fn f32s(&self, range: std::ops::Range<usize>) -> Cow<'_, [f32]> {
        match self {
            Values::F32(v) => Cow::Borrowed(&v[range]),
            Values::Bytes(b) => Cow::Owned(b[range].iter().map(|&b| byte_value(b)).collect()),
        }
    }

    /// Every value as f32.
    pub(crate) fn all_f32(&self) -> Cow<'_, [f32]> {
        self.f32s(0..self.len())
    }

    /// The values as an f32 buffer of their own (bytes turned into values).
    pub(crate) fn into_f32(self) -> Vec<f32> {
        match self {
            Values::F32(v) => v,
            Values::Bytes(b) => b.into_iter().map(byte_value).collect(),
        }
    }

    fn keep_rows(&mut self, width: usize, rows: &[usize]) {
        match self {
            Values::F32(v) => keep_rows(v, width, rows),
            Values::Bytes(b) => keep_rows(b, width, rows),
        }
    }

    fn gather_rows(&self, width: usize, indices: &[usize]) -> Values {
        match self {
            Values::F32(v) => Values::F32(gather_rows(v, width, indices)),
            Values::Bytes(b) => Values::Bytes(gather_rows(b, width, indices)),
        }
    }

    /// These values, then `more`'s (f32 unless both are bytes).
    fn append(self, more: Values) -> Values {
        match (self, more) {
            (Values::Bytes(mut a), Values::Bytes(b)) => {
                a.extend_from_slice(&b);
                Values::Bytes(a)
            }
            (a, b) => {
                let mut a = a.into_f32();
                a.extend_from_slice(&b.all_f32());
                Values::F32(a)
            }
        }
    }
}

/// Samples in a row-major buffer, each sample of shape `sample_shape` (e.g. `[1,28,28]`
/// for images C,H,W, or `[21]` for tabular rows).
#[derive(Clone, Debug)]
pub struct Dataset {
    pub(crate) x: Values,
    pub(crate) sample_shape: Vec<usize>,
    pub(crate) targets: Targets,
    /// The classes' labels, by class index, when known (a table's, Python's): what
    /// messages about classes say (labels 1, 2, 3 are not called "class 0, 1").
    pub(crate) class_names: Option<std::sync::Arc<[String]>>,
    /// How many of the last samples are the data's own validation samples (an image
    /// folder's `val/`): training validates on them rather than drawing its own.
    pub(crate) own_validation: Option<usize>,
}

/// What each sample should predict.
#[derive(Clone, Debug, PartialEq)]
pub enum Targets {
    /// Class index per sample, each `< n_classes`.
    Classes { labels: Vec<u32>, n_classes: usize },
    /// `dim` regression values per sample, row-major.
    Values { values: Vec<f32>, dim: usize },
}

impl Targets {
    /// Number of samples described.
    pub fn len(&self) -> usize {
        match self {
            Targets::Classes { labels, .. } => labels.len(),
            // `dim == 0` cannot describe any sample count; treat as empty.
            Targets::Values { values, dim } => values.len().checked_div(*dim).unwrap_or(0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Targets of the given samples, in the given order. Panics on an index out of range.
    pub(crate) fn subset(&self, indices: &[usize]) -> Targets {
        match self {
            Targets::Classes { labels, n_classes } => Targets::Classes {
                labels: indices.iter().map(|&i| labels[i]).collect(),
                n_classes: *n_classes,
            },
            Targets::Values { values, dim } => Targets::Values {
                values: gather_rows(values, *dim, indices),
                dim: *dim,
            },
        }
    }
}

/// Keeps rows `rows` (strictly ascending, each `width` long) of a row-major buffer, in
/// place: row `rows[k]` moves down to row `k` (never up, so no row is overwritten
/// before it moves).
fn keep_rows<T: Copy>(data: &mut Vec<T>, width: usize, rows: &[usize]) {
    assert!(
        rows.windows(2).all(|w| w[0] < w[1]),
        "rows kept in ascending order"
    );
    for (k, &r) in rows.iter().enumerate() {
        if k != r {
            data.copy_within(r * width..(r + 1) * width, k * width);
        }
    }
    data.truncate(rows.len() * width);
    // Shrinking gives the tail back where it lies (glibc splits the block in place).
    data.shrink_to_fit();
}

/// Copies rows `indices` (each `width` long) of a row-major buffer, in that order.
fn gather_rows<T: Copy>(data: &[T], width: usize, indices: &[usize]) -> Vec<T> {
    let mut out = Vec::with_capacity(indices.len() * width);
    for &i in indices {
        out.extend_from_slice(&data[i * width..(i + 1) * width]);
    }
    out
}

/// The ChaCha8 stream of validation draws (test splits draw from stream 0).
const VALID_STREAM: u64 = 1;

/// Number of rows of `n` that `fraction` selects: `round(fraction * n)`.
///
/// Panics unless `fraction` is in `[0, 1]` (callers validate user input first).
pub(crate) fn fraction_count(fraction: f64, n: usize) -> usize {
    assert!(
        (0.0..=1.0).contains(&fraction),
        "split fraction must be in [0, 1], got {fraction}"
    );
    ((fraction * n as f64).round() as usize).min(n)
}

impl Dataset {
    /// Builds a data set, checking that `x` holds a whole number of samples and that
    /// the targets describe the same number of samples.
    pub fn new(x: Vec<f32>, sample_shape: Vec<usize>, targets: Targets) -> Result<Dataset> {
        Dataset::of_values(Values::F32(x), sample_shape, targets)
    }

    /// [`Dataset::new`] of images' bytes (each standing for `byte / 255`).
    pub(crate) fn of_bytes(
        x: Vec<u8>,
        sample_shape: Vec<usize>,
        targets: Targets,
    ) -> Result<Dataset> {
        Dataset::of_values(Values::Bytes(x), sample_shape, targets)
    }

    pub(crate) fn of_values(
        x: Values,
        sample_shape: Vec<usize>,
        targets: Targets,
    ) -> Result<Dataset> {
        let sample_len: usize = sample_shape.iter().product();
        let n = targets.len();
        if n.checked_mul(sample_len) != Some(x.len()) {
            return Err(AntError::param(format!(
                "{} input values do not form {n} samples of shape {sample_shape:?}",
                x.len()
            )));
        }
        if let Targets::Values { values, dim } = &targets
            && (*dim == 0 || values.len() % dim != 0)
        {
            return Err(AntError::param(format!(
                "{} target values do not form rows of dimension {dim}",
                values.len()
            )));
        }
        if let Targets::Classes { labels, n_classes } = &targets
            && let Some(&bad) = labels.iter().find(|&&l| l as usize >= *n_classes)
        {
            return Err(AntError::param(format!(
                "label {bad} out of range for {n_classes} classes"
            )));
        }
        Ok(Dataset {
            x,
            sample_shape,
            targets,
            class_names: None,
            own_validation: None,
        })
    }

    /// These samples, then `valid`'s, which are marked as the validation samples.
    pub(crate) fn followed_by_validation(mut self, valid: Dataset) -> Result<Dataset> {
        let k = valid.len();
        match (&mut self.targets, valid.targets) {
            (Targets::Classes { labels, .. }, Targets::Classes { labels: more, .. })
                if self.sample_shape == valid.sample_shape =>
            {
                labels.extend_from_slice(&more);
                let x = std::mem::replace(&mut self.x, Values::F32(vec![]));
                self.x = x.append(valid.x);
            }
            _ => {
                let msg = format!(
                    "validation samples of shape {:?} cannot follow training samples of shape {:?}",
                    valid.sample_shape, self.sample_shape
                );
                return Err(AntError::param(msg));
            }
        }
        self.own_validation = Some(k);
        Ok(self)
    }

    /// The first `n` training samples, and the data's own validation samples after them
    /// (`--train-limit`).
    pub(crate) fn first_for_training(self, n: usize) -> Dataset {
        let first: Vec<usize> = (0..n.min(self.len())).collect();
        self.keeping_own_validation(&first)
    }

    /// [`Dataset::first_for_training`]'s rows copied out (the set itself is kept).
    pub(crate) fn first_for_training_copied(&self, n: usize) -> Dataset {
        let cut = self.len() - self.own_validation.unwrap_or(0);
        let rows: Vec<usize> = (0..n.min(cut)).chain(cut..self.len()).collect();
        let mut d = self.subset(&rows);
        d.own_validation = self.own_validation;
        d
    }

    /// The samples `rows` (ascending, all before the data's own validation samples)
    /// where they are, then those validation samples: `rows` as the training samples of
    /// data that keeps its validation samples.
    pub(crate) fn keeping_own_validation(self, rows: &[usize]) -> Dataset {
        let Some(k) = self.own_validation else {
            return self.split_rows(rows, &[]).0;
        };
        let n = self.len();
        let kept: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&r| r < n - k)
            .chain(n - k..n)
            .collect();
        let mut d = self.split_rows(&kept, &[]).0;
        d.own_validation = Some(k);
        d
    }

    /// The same samples, their classes labelled `names` (by class index).
    pub fn with_class_names(mut self, names: &[String]) -> Dataset {
        self.class_names = Some(names.into());
        self
    }

    /// Class `c` as a message names it: its label quoted, else its index.
    pub(crate) fn class_label(&self, c: usize) -> String {
        match self.class_names.as_deref().and_then(|n| n.get(c)) {
            Some(name) => crate::error::quoted(name),
            None => c.to_string(),
        }
    }

    /// The features, row-major: `len() * sample_shape().iter().product()` values
    /// (a copy where they are held as bytes).
    pub fn x(&self) -> Cow<'_, [f32]> {
        self.x.all_f32()
    }

    /// The samples' values as f32, `per` samples at a time (a copy of so many where
    /// they are held as bytes, never of them all).
    pub(crate) fn sample_chunks(&self, per: usize) -> impl Iterator<Item = Cow<'_, [f32]>> {
        let w = self.sample_len();
        let step = per.max(1) * w.max(1);
        (0..self.x.len())
            .step_by(step)
            .map(move |s| self.x.f32s(s..(s + step).min(self.x.len())))
    }

    /// Whether the samples are held as bytes (images), four times smaller than f32.
    pub fn holds_bytes(&self) -> bool {
        matches!(self.x, Values::Bytes(_))
    }

    /// The shape of one sample (`[C, H, W]` for images, `[D]` for rows of a table).
    pub fn sample_shape(&self) -> &[usize] {
        &self.sample_shape
    }

    pub fn targets(&self) -> &Targets {
        &self.targets
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of f32 values per sample (product of `sample_shape`).
    pub(crate) fn sample_len(&self) -> usize {
        self.sample_shape.iter().product()
    }

    /// The values of sample `i`. Panics if `i >= len()`.
    pub fn sample(&self, i: usize) -> Cow<'_, [f32]> {
        let w = self.sample_len();
        self.x.f32s(i * w..(i + 1) * w)
    }

    /// Number of classes for a classification set, `None` for regression.
    pub fn n_classes(&self) -> Option<usize> {
        match self.targets {
            Targets::Classes { n_classes, .. } => Some(n_classes),
            Targets::Values { .. } => None,
        }
    }

    /// The samples `held` copied out, and the samples `kept` (ascending) where they
    /// are: a split that copies only its smaller part.
    pub(crate) fn split_rows(mut self, kept: &[usize], held: &[usize]) -> (Dataset, Dataset) {
        let held = self.subset(held);
        // Rows moved: the last ones may be validation samples no more.
        self.own_validation = None;
        let width = self.sample_len();
        self.x.keep_rows(width, kept);
        match &mut self.targets {
            Targets::Classes { labels, .. } => keep_rows(labels, 1, kept),
            Targets::Values { values, dim } => keep_rows(values, *dim, kept),
        }
        (self, held)
    }

    /// The given samples, in the given order (repeats allowed). Panics on an index
    /// out of range.
    pub(crate) fn subset(&self, indices: &[usize]) -> Dataset {
        Dataset {
            x: self.x.gather_rows(self.sample_len(), indices),
            sample_shape: self.sample_shape.clone(),
            targets: self.targets.subset(indices),
            class_names: self.class_names.clone(),
            own_validation: None,
        }
    }

    /// The first `min(n, len())` samples.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn take_first(&self, n: usize) -> Dataset {
        let idx: Vec<usize> = (0..n.min(self.len())).collect();
        self.subset(&idx)
    }

    /// Splits off the last `round(fraction * len())` samples as the tail (the
    /// validation rows of models saved before they were drawn with
    /// `Dataset::validation_split`); returns `(head, tail)`.
    ///
    /// Panics unless `fraction` is in `[0, 1]`.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn split_tail(&self, fraction: f64) -> (Dataset, Dataset) {
        let (head, tail) = self.tail_rows(fraction);
        (self.subset(&head), self.subset(&tail))
    }

    /// The rows of [`Self::split_tail`]'s two parts.
    pub(crate) fn tail_rows(&self, fraction: f64) -> (Vec<usize>, Vec<usize>) {
        let n = self.len();
        let cut = n - fraction_count(fraction, n);
        ((0..cut).collect(), (cut..n).collect())
    }

    /// Holds out `round(fraction * len())` samples chosen by a ChaCha8 permutation
    /// seeded with `seed`. Returns `(rest, held_out, held_out_indices)`; both parts
    /// keep the original sample order and `held_out_indices` is ascending.
    ///
    /// Panics unless `fraction` is in `[0, 1]`.
    pub(crate) fn seeded_split(&self, fraction: f64, seed: u64) -> (Dataset, Dataset, Vec<usize>) {
        let n = self.len();
        let k = fraction_count(fraction, n);
        let mut perm: Vec<usize> = (0..n).collect();
        perm.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        let mut held: Vec<usize> = perm[..k].to_vec();
        let mut rest: Vec<usize> = perm[k..].to_vec();
        held.sort_unstable();
        rest.sort_unstable();
        (self.subset(&rest), self.subset(&held), held)
    }

    /// Holds out a seeded `fraction` of the samples as a validation set: per class for
    /// classification when `stratified` (`round(fraction * n_c)` of each class's `n_c`
    /// samples, at least one of a class with two or more, never all of one), else of
    /// all samples. Returns `(rest, held_out)`, both in the original order. The draws
    /// come from a ChaCha8 stream of `seed` other than [`Dataset::seeded_split`]'s.
    ///
    /// Panics unless `fraction` is in `[0, 1]`.
    #[cfg(test)]
    pub(crate) fn validation_split(
        &self,
        fraction: f64,
        seed: u64,
        stratified: bool,
    ) -> (Dataset, Dataset) {
        let (rest, held) = self.validation_rows(fraction, seed, stratified);
        (self.subset(&rest), self.subset(&held))
    }

    /// The rows of [`Self::validation_split`]'s two parts, each ascending.
    pub(crate) fn validation_rows(
        &self,
        fraction: f64,
        seed: u64,
        stratified: bool,
    ) -> (Vec<usize>, Vec<usize>) {
        let n = self.len();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(VALID_STREAM);
        let mut held = vec![];
        match &self.targets {
            Targets::Classes { labels, n_classes } if stratified => {
                let mut by_class = vec![vec![]; *n_classes];
                for (i, &l) in labels.iter().enumerate() {
                    by_class[l as usize].push(i);
                }
                for mut rows in by_class {
                    let m = rows.len();
                    let k = fraction_count(fraction, m)
                        .max(usize::from(m >= 2))
                        .min(m.saturating_sub(1));
                    rows.shuffle(&mut rng);
                    held.extend_from_slice(&rows[..k]);
                }
            }
            _ => {
                let mut perm: Vec<usize> = (0..n).collect();
                perm.shuffle(&mut rng);
                held.extend_from_slice(&perm[..fraction_count(fraction, n)]);
            }
        }
        held.sort_unstable();
        let mut is_held = vec![false; n];
        held.iter().for_each(|&i| is_held[i] = true);
        let rest: Vec<usize> = (0..n).filter(|&i| !is_held[i]).collect();
        (rest, held)
    }

    /// A checksum of the samples as a set (with repeats): the same samples in any
    /// order give the same one. The sum of each sample's MD5 (its inputs and target),
    /// with the shape and the count: a test file of the training rows reordered is not
    /// scored as new data.
    pub(crate) fn row_set_checksum(&self) -> String {
        self.row_set_checksum_of(&super::row_sketch::row_digests(self))
    }

    /// [`Dataset::row_set_checksum`] from the rows' digests already computed.
    pub(crate) fn row_set_checksum_of(&self, digests: &[u128]) -> String {
        let sum = digests.iter().fold(0u128, |a, &d| a.wrapping_add(d));
        let classes = self
            .n_classes()
            .map_or("values".to_string(), |k| format!("{k} classes"));
        format!(
            "{sum:032x} over {} samples of {:?}, {classes}",
            self.len(),
            self.sample_shape
        )
    }

    /// Hex MD5 of the samples (shape, inputs and targets, in order): the same samples,
    /// however they were read, give the same checksum.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn checksum(&self) -> String {
        use md5::{Digest, Md5};
        let mut h = Md5::new();
        let mut put = |words: &mut dyn Iterator<Item = [u8; 4]>| {
            let mut buf = Vec::with_capacity(1 << 16);
            for w in words {
                buf.extend_from_slice(&w);
                if buf.len() >= 1 << 16 {
                    h.update(&buf);
                    buf.clear();
                }
            }
            h.update(&buf);
        };
        put(&mut self.sample_shape.iter().map(|&d| (d as u32).to_le_bytes()));
        match &self.x {
            Values::F32(v) => put(&mut v.iter().map(|v| v.to_le_bytes())),
            Values::Bytes(b) => put(&mut b.iter().map(|&b| byte_value(b).to_le_bytes())),
        }
        match &self.targets {
            Targets::Classes { labels, n_classes } => {
                put(&mut [0u32, *n_classes as u32].into_iter().map(u32::to_le_bytes));
                put(&mut labels.iter().map(|l| l.to_le_bytes()));
            }
            Targets::Values { values, dim } => {
                put(&mut [1u32, *dim as u32].into_iter().map(u32::to_le_bytes));
                put(&mut values.iter().map(|v| v.to_le_bytes()));
            }
        }
        hex(&h.finalize())
    }

    /// The classes that have samples here but none in `other` (empty for regression).
    pub(crate) fn classes_missing_from(&self, other: &Dataset) -> Vec<usize> {
        let present = |d: &Dataset| match &d.targets {
            Targets::Classes { labels, n_classes } => {
                let mut seen = vec![false; *n_classes];
                labels.iter().for_each(|&l| seen[l as usize] = true);
                seen
            }
            Targets::Values { .. } => vec![],
        };
        let (here, there) = (present(self), present(other));
        (0..here.len())
            .filter(|&c| here[c] && !there.get(c).copied().unwrap_or(false))
            .collect()
    }

    /// Refuses NaN or infinite values in the inputs or in regression targets.
    /// The error names `path` and the 0-based row and column of the first bad value.
    pub fn check_finite(&self, path: &Path) -> Result<()> {
        let w = self.sample_len();
        let Values::F32(x) = &self.x else {
            return Ok(()); // bytes are finite, and so are regression targets beside them
        };
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(AntError::data(
                path,
                format!(
                    "non-finite input value {} at row {}, column {}",
                    x[i],
                    i / w.max(1),
                    i % w.max(1)
                ),
            ));
        }
        if let Targets::Values { values, dim } = &self.targets
            && let Some(i) = values.iter().position(|v| !v.is_finite())
        {
            return Err(AntError::data(
                path,
                format!(
                    "non-finite target value {} at row {}, target column {}",
                    values[i],
                    i / dim.max(&1),
                    i % dim.max(&1)
                ),
            ));
        }
        Ok(())
    }
}
