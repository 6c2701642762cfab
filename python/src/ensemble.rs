//! Ensemble directories from Python: members fitted in Python (as `fit_*(member=...)`)
//! saved as `ant train --ensemble N` saves them, and ensembles loaded from such
//! directories, so the CLI and Python read each other's ensembles.

use std::path::PathBuf;

use ant::Ant;
use ant::ensemble::Ensemble;
use pyo3::prelude::*;

use crate::errors::{load_error, to_py};
use crate::model::{Model, parse_device};
use crate::warnings::detached;

/// Whether `dir` holds an ensemble (its `ensemble.json`).
#[pyfunction]
pub fn is_ensemble(dir: PathBuf) -> bool {
    ant::ensemble::is_ensemble(&dir)
}

/// The members of the ensemble in `dir`, checked against its `ensemble.json`.
#[pyfunction]
pub fn load_ensemble(py: Python<'_>, dir: PathBuf, device: &str) -> PyResult<Vec<Model>> {
    let (choice, dev) = parse_device(device)?;
    let ens = detached(py, || Ensemble::load(&dir, &dev)).map_err(load_error)?;
    let members = ens.into_members().into_iter().map(|ant| Model {
        ant,
        device: choice,
    });
    Ok(members.collect())
}

/// Saves `members` (member 0 to n-1 of one ensemble, fitted in Python) into `dir`:
/// `ensemble.json` and `member-K/`, as `ant train --ensemble N` writes them.
#[pyfunction]
pub fn save_ensemble(py: Python<'_>, dir: PathBuf, members: Vec<Bound<'_, Model>>) -> PyResult<()> {
    let models: Vec<Ant> = members.iter().map(|m| m.get().ant.clone()).collect();
    detached(py, || {
        Ensemble::from_members(models, dir.clone())?.save(&dir)
    })
    .map_err(to_py)
}

/// Checks that `members` are members 0 to n-1 of one ensemble, of one task, input,
/// classes and test split, as loading their saved ensemble will: the check before an
/// ensemble is built in Python, not after it is saved.
#[pyfunction]
pub fn check_ensemble(members: Vec<Bound<'_, Model>>) -> PyResult<()> {
    let models: Vec<Ant> = members.iter().map(|m| m.get().ant.clone()).collect();
    Ensemble::from_members(models, PathBuf::from("."))
        .map(|_| ())
        .map_err(to_py)
}
