//! numpy arrays in: samples `(n, d)` (rows), `(n, h, w)` (one-channel images) or
//! `(n, c, h, w)` (images), float32; class indices or regression values; checked here
//! so that bad input is a `ValueError` naming the problem, never a panic later.

use ant::{Dataset, Targets};
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The samples of `x` as one row-major buffer, and the shape of one sample.
pub fn samples(x: &PyReadonlyArrayDyn<'_, f32>) -> PyResult<(Vec<f32>, Vec<usize>)> {
    let shape = x.shape().to_vec();
    let sample: Vec<usize> = match shape[..] {
        [_, d] => vec![d],
        [_, h, w] => vec![1, h, w],
        [_, c, h, w] => vec![c, h, w],
        _ => {
            let msg = format!(
                "X must have 2 dimensions (n_samples, n_features), 3 (n, height, width) or 4 \
                 (n, channels, height, width); got shape {shape:?}"
            );
            return Err(PyValueError::new_err(msg));
        }
    };
    if sample.contains(&0) {
        let msg = format!("X has shape {shape:?}: each sample needs at least one value");
        return Err(PyValueError::new_err(msg));
    }
    let values: Vec<f32> = x.as_array().iter().copied().collect();
    check_finite(&values, sample.iter().product(), "X")?;
    Ok((values, sample))
}

/// A `ValueError` naming the first sample (rows of `width` values) of `values` that
/// holds NaN or an infinity.
fn check_finite(values: &[f32], width: usize, what: &str) -> PyResult<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => {
            let msg = format!(
                "{what} holds NaN or infinite values (the first in sample {}: {})",
                i / width.max(1),
                values[i]
            );
            Err(PyValueError::new_err(msg))
        }
    }
}

/// Class indices `0..n_classes` (one per sample).
pub fn classes(y: &PyReadonlyArray1<'_, i64>, n_classes: usize) -> PyResult<Targets> {
    let labels = y
        .as_array()
        .iter()
        .map(|&l| u32::try_from(l).ok().filter(|&l| (l as usize) < n_classes))
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| {
            let msg = format!("class indices must be in 0..{n_classes}");
            PyValueError::new_err(msg)
        })?;
    Ok(Targets::Classes { labels, n_classes })
}

/// Regression values, `(n, outputs)`.
pub fn values(y: &PyReadonlyArray2<'_, f32>) -> PyResult<Targets> {
    let dim = y.shape()[1];
    if dim == 0 {
        return Err(PyValueError::new_err("y needs at least one output"));
    }
    let values: Vec<f32> = y.as_array().iter().copied().collect();
    check_finite(&values, dim, "y")?;
    Ok(Targets::Values { values, dim })
}

/// The data set of `x` and `targets`, which must describe as many samples.
pub fn dataset(x: (Vec<f32>, Vec<usize>), targets: Targets) -> PyResult<Dataset> {
    let n = x.0.len() / x.1.iter().product::<usize>().max(1);
    if targets.len() != n {
        let msg = format!(
            "X and y have different numbers of samples: {n} and {}",
            targets.len()
        );
        return Err(PyValueError::new_err(msg));
    }
    Dataset::new(x.0, x.1, targets).map_err(crate::errors::to_py)
}

/// Placeholder targets for prediction (ignored).
pub fn unlabelled(x: (Vec<f32>, Vec<usize>)) -> PyResult<Dataset> {
    let n = x.0.len() / x.1.iter().product::<usize>().max(1);
    let targets = Targets::Values {
        values: vec![0.0; n],
        dim: 1,
    };
    Dataset::new(x.0, x.1, targets).map_err(crate::errors::to_py)
}
