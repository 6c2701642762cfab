//! Ensemble directories from Python: members fitted in Python (as `fit_*(member=...)`)
//! saved as `ant train --ensemble N` saves them, and ensembles loaded from such
//! directories, so the CLI and Python read each other's ensembles.

use std::path::{Path, PathBuf};

use ant::ensemble::{EnsembleFile, member_dir};
use ant::run::{DataSpec, RunSpec};
use ant::{AntError, Ensemble};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{load_error, to_py};
use crate::model::{Model, parse_device};

/// Whether `dir` holds an ensemble (its `ensemble.json`).
#[pyfunction]
pub fn is_ensemble(dir: PathBuf) -> bool {
    ant::ensemble::is_ensemble(&dir)
}

/// The members of the ensemble in `dir`, checked against its `ensemble.json`.
#[pyfunction]
pub fn load_ensemble(py: Python<'_>, dir: PathBuf, device: &str) -> PyResult<Vec<Model>> {
    let (choice, dev) = parse_device(device)?;
    let ens = py
        .detach(|| Ensemble::load(&dir, &dev))
        .map_err(load_error)?;
    let members = ens.members.into_iter().map(|ant| Model {
        ant,
        device: choice,
    });
    Ok(members.collect())
}

/// Saves `members` (member 0 to n-1 of one ensemble, fitted in Python) into `dir`:
/// `ensemble.json` and `member-K/`, as `ant train --ensemble N` writes them.
#[pyfunction]
pub fn save_ensemble(py: Python<'_>, dir: PathBuf, members: Vec<Bound<'_, Model>>) -> PyResult<()> {
    let file = ensemble_file(&dir, &members)?;
    let models: Vec<&Model> = members.iter().map(|m| m.get()).collect();
    py.detach(|| {
        std::fs::create_dir_all(&dir).map_err(|e| AntError::io(&dir, e))?;
        let _lock = ant::run::DirLock::take(&dir, false)?;
        for (k, m) in models.iter().enumerate() {
            m.ant.save(member_dir(&dir, k))?;
        }
        // Last: a directory is an ensemble once all its members are there.
        file.save(&dir)
    })
    .map_err(to_py)
}

/// `ensemble.json` for `members`, which must be members 0 to n-1 of one ensemble.
fn ensemble_file(dir: &Path, members: &[Bound<'_, Model>]) -> PyResult<EnsembleFile> {
    let n = members.len();
    let not_members = || {
        let msg = format!(
            "the {n} models are not members 0 to {} of one ensemble",
            n.max(1) - 1
        );
        PyValueError::new_err(msg)
    };
    let first = members.first().ok_or_else(not_members)?.get();
    let run_seed = first
        .ant
        .meta()
        .provenance
        .member
        .ok_or_else(not_members)?
        .run_seed;
    for (k, m) in members.iter().enumerate() {
        let member = m
            .get()
            .ant
            .meta()
            .provenance
            .member
            .ok_or_else(not_members)?;
        if (member.index, member.size, member.run_seed) != (k, n, run_seed) {
            return Err(not_members());
        }
    }
    let mut params = first.ant.meta().config.params();
    params.seed = run_seed;
    let spec = RunSpec {
        data: DataSpec {
            // As each member records it (the ensemble's members must agree).
            path: PathBuf::from(&first.ant.meta().provenance.data),
            test_data: None,
            test_fraction: 0.2,
            target: first.ant.meta().provenance.target.clone(),
            train_limit: None,
        },
        params,
        member: None,
    };
    EnsembleFile::new(spec, n, dir.to_path_buf()).map_err(to_py)
}
