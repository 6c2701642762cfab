//! `ant._ant`: the Rust half of the `ant` Python package. Everything here is a thin
//! layer over the `ant` crate (training, prediction, model files); the scikit-learn
//! estimators in `python/ant/` are a thin layer over this.
//!
//! | module | what |
//! |---|---|
//! | `params` | a dict of `ant train`'s options -> `AntParams`; the defaults |
//! | `data` | numpy arrays -> `Dataset`, checked |
//! | `fit` | training with the GIL released, one at a time per process |
//! | `observer` | training events to a Python callable; Ctrl-C |
//! | `model` | the `Model` class: predictions, reach probabilities, files, pickling |
//! | `ensemble` | ensemble directories |
//! | `errors` | `AntError` -> Python exceptions |
//! | `warnings` | the crate's warnings -> the `ant` logger |

mod data;
mod ensemble;
mod errors;
mod fit;
mod model;
mod observer;
mod params;
mod warnings;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The defaults of the training options (those of `ant train`).
#[pyfunction]
fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    params::defaults(py)
}

/// The names each named option accepts.
#[pyfunction]
fn choices(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    params::choices(py)
}

#[pymodule]
fn _ant(m: &Bound<'_, PyModule>) -> PyResult<()> {
    warnings::install();
    m.add_class::<model::Model>()?;
    m.add_function(wrap_pyfunction!(fit::fit_classifier, m)?)?;
    m.add_function(wrap_pyfunction!(fit::fit_regressor, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(choices, m)?)?;
    m.add_function(wrap_pyfunction!(ensemble::is_ensemble, m)?)?;
    m.add_function(wrap_pyfunction!(ensemble::load_ensemble, m)?)?;
    m.add_function(wrap_pyfunction!(ensemble::save_ensemble, m)?)?;
    m.add_function(wrap_pyfunction!(ensemble::check_ensemble, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
