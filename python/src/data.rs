//! numpy arrays in: samples `(n, d)` (rows), `(n, h, w)` (one-channel images) or
//! `(n, c, h, w)` (images), float32 or float64; class indices or regression values;
//! checked here so that bad input is a `ValueError` naming the problem, never a panic
//! later. Every value becomes f32 through the crate's [`ant::data::to_f32`], as a
//! table's cells do: the same values are refused from Python as from a file.

use ant::{Dataset, Targets};
use numpy::{PyReadonlyArray1, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A float array from numpy, in either width.
#[derive(FromPyObject)]
pub enum Floats<'py> {
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

impl Floats<'_> {
    fn shape(&self) -> Vec<usize> {
        match self {
            Floats::F32(a) => a.shape().to_vec(),
            Floats::F64(a) => a.shape().to_vec(),
        }
    }

    /// The values in row-major order as f32, each checked by [`ant::data::to_f32`]; an
    /// error names `what`, the sample (rows of `width` values) and the value. For
    /// training (`columns`: how many, and each value's), a column f32 would flatten is
    /// refused as a table's is ([`ant::data::ColumnMagnitudes`]).
    fn to_f32(&self, width: usize, what: &str, columns: Option<Columns>) -> PyResult<Vec<f32>> {
        let wide: Box<dyn Iterator<Item = f64>> = match self {
            Floats::F32(a) => Box::new(a.as_array().into_iter().map(|&v| f64::from(v))),
            Floats::F64(a) => Box::new(a.as_array().into_iter().copied()),
        };
        let mut seen = columns.map(|c| (ant::data::ColumnMagnitudes::new(c.count), c.of));
        let values = wide
            .enumerate()
            .map(|(i, v)| {
                if let Some((seen, of)) = &mut seen {
                    seen.see(of(i), v);
                }
                ant::data::to_f32(v).map_err(|why| {
                    let (s, j) = (i / width.max(1), i % width.max(1));
                    PyValueError::new_err(format!("{what}: sample {s}, value {j} {why}"))
                })
            })
            .collect::<PyResult<Vec<f32>>>()?;
        if let Some((seen, _)) = seen
            && let Some((j, why)) = seen.too_small()
        {
            return Err(PyValueError::new_err(format!("{what}: column {j}: {why}")));
        }
        Ok(values)
    }
}

/// The columns of a training array: a row's features, an image's channels.
struct Columns {
    count: usize,
    of: Box<dyn Fn(usize) -> usize>,
}

/// Whether an array is read to train on (its columns judged whole) or to predict.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    Training,
    Prediction,
}

/// The samples of `x` as one row-major buffer, and the shape of one sample.
pub fn samples(x: &Floats<'_>, reading: Reading) -> PyResult<(Vec<f32>, Vec<usize>)> {
    let shape = x.shape();
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
    let width: usize = sample.iter().product();
    // Rows are standardised per feature, images per channel.
    let columns = (reading == Reading::Training).then(|| match sample[..] {
        [d] => Columns {
            count: d,
            of: Box::new(move |i| i % d),
        },
        _ => {
            let (c, plane) = (sample[0], sample[1] * sample[2]);
            Columns {
                count: c,
                of: Box::new(move |i| (i % width) / plane),
            }
        }
    });
    let values = x.to_f32(width, "X", columns)?;
    Ok((values, sample))
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
pub fn values(y: &Floats<'_>) -> PyResult<Targets> {
    let shape = y.shape();
    let dim = match shape[..] {
        [_, dim] => dim,
        _ => {
            return Err(PyValueError::new_err(format!(
                "y must be (n, outputs), got {shape:?}"
            )));
        }
    };
    if dim == 0 {
        return Err(PyValueError::new_err("y needs at least one output"));
    }
    let columns = Columns {
        count: dim,
        of: Box::new(move |i| i % dim),
    };
    let values = y.to_f32(dim, "y", Some(columns))?;
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
