//! Training from Python: numpy arrays and a dict of `ant train`'s options in, a
//! [`Model`] out. Training is [`Ant::fit`] itself, run with the GIL released.

use ant::Member;
use ant::TaskKind;
use ant::data::tabular::TargetSpec;
use ant::{Ant, AntParams, Dataset};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::data::{Floats, Reading, classes, dataset, samples, values};
use crate::errors::to_py;
use crate::model::{Model, parse_device};
use crate::observer::PyObserver;
use crate::params::params_from;
use crate::warnings::detached;

/// What a model fitted here records as its data (`provenance.data`; a CLI run records
/// its data file).
pub const PYTHON_DATA: &str = "numpy arrays (Python)";

/// Trains a classifier on `x` and the class indices `y` (`0..n_classes`); `class_names`
/// are the labels of the classes (saved in the model, as `ant train` saves a table's).
/// With `member = (k, n)`, trains member `k` of an ensemble of `n` seeded with `seed`,
/// exactly as `ant train --ensemble n --member k` does. `events(kind, json)` receives
/// the training events.
/// `record` (JSON: `{"labels": "bool"|"int"|"float"|"text", "feature_names": [...],
/// "y_2d": bool}`) is what the estimator knew of its data, saved with the model.
#[pyfunction]
#[pyo3(signature = (params, device, x, y, class_names, member=None, events=None, record=None))]
#[allow(clippy::too_many_arguments)]
pub fn fit_classifier(
    py: Python<'_>,
    params: &Bound<'_, PyDict>,
    device: &str,
    x: Floats<'_>,
    y: PyReadonlyArray1<'_, i64>,
    class_names: Vec<String>,
    member: Option<(usize, usize)>,
    events: Option<Py<PyAny>>,
    record: Option<&str>,
) -> PyResult<Model> {
    // Checked before training: labels a table could not tell apart, or no labels.
    ant::data::labels::check_class_names(&class_names)
        .map_err(|why| PyValueError::new_err(format!("y: {why}")))?;
    let data = dataset(
        samples(&x, Reading::Training)?,
        classes(&y, class_names.len())?,
    )?
    .with_class_names(&class_names);
    let mut model = train(py, params_from(params)?, device, data, member, events)?;
    model.ant.set_class_names(class_names).map_err(to_py)?;
    set_record(&mut model, record)?;
    Ok(model)
}

/// Saves the estimator's `record` (JSON) with the model.
fn set_record(model: &mut Model, record: Option<&str>) -> PyResult<()> {
    let Some(json) = record else { return Ok(()) };
    let record: ant::EstimatorRecord = serde_json::from_str(json)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("estimator record: {e}")))?;
    model.ant.set_estimator_record(record).map_err(to_py)
}

/// Trains a regressor on `x` and the values `y`, `(n, outputs)`; see [`fit_classifier`].
#[pyfunction]
#[pyo3(signature = (params, device, x, y, member=None, events=None, record=None))]
#[allow(clippy::too_many_arguments)]
pub fn fit_regressor(
    py: Python<'_>,
    params: &Bound<'_, PyDict>,
    device: &str,
    x: Floats<'_>,
    y: Floats<'_>,
    member: Option<(usize, usize)>,
    events: Option<Py<PyAny>>,
    record: Option<&str>,
) -> PyResult<Model> {
    let data = dataset(samples(&x, Reading::Training)?, values(&y)?)?;
    let mut model = train(py, params_from(params)?, device, data, member, events)?;
    set_record(&mut model, record)?;
    Ok(model)
}

/// How `ant eval` and `ant predict` read tables for a model fitted on rows: the
/// features, then the target in the last column (as scikit-learn's CSV files). Only
/// for rows and one target column.
fn table_spec(ant: &Ant) -> Option<TargetSpec> {
    let task = ant.task().kind();
    let d = match ant.topology().input {
        ant::spec::Shape::Flat { d } => d,
        ant::spec::Shape::Image { .. } => return None,
    };
    if task == TaskKind::Regression && ant.task().outputs() != 1 {
        return None;
    }
    Some(TargetSpec::last_of(d, task))
}

/// [`Ant::fit`] with the GIL released (one training per process at a time), as member
/// `k` of `n` when `member` is `(k, n)`.
fn train(
    py: Python<'_>,
    mut params: AntParams,
    device: &str,
    mut data: Dataset,
    member: Option<(usize, usize)>,
    events: Option<Py<PyAny>>,
) -> PyResult<Model> {
    let (choice, dev) = parse_device(device)?;
    let member = member
        .map(|m| ensemble_member(m, params.seed()))
        .transpose()?;
    if let Some(m) = member {
        params = params.with_seed(m.seed());
        data = m.rows(&data);
    }
    let mut observer = PyObserver::new(events);
    let fitted = detached(py, || {
        // One training at a time in a process: the library waits for the one before,
        // answering Ctrl-C (the observer's should_stop).
        Ant::fit(params, &data, &dev, &mut observer)
    });
    // An exception raised during training (Ctrl-C, the callback's) comes first.
    if let Some(e) = observer.take_error() {
        return Err(e);
    }
    let mut ant = fitted.map_err(to_py)?;
    let target = table_spec(&ant);
    ant.record_source(PYTHON_DATA, target, member);
    Ok(Model {
        ant,
        device: choice,
    })
}

/// Member `k` of an ensemble of `n` seeded with `run_seed`.
fn ensemble_member((k, n): (usize, usize), run_seed: u64) -> PyResult<Member> {
    if k >= n {
        let msg = format!("member {k} is not in an ensemble of {n} (members are 0 to n-1)");
        return Err(PyValueError::new_err(msg));
    }
    Ok(Member {
        index: k,
        size: n,
        run_seed,
    })
}
