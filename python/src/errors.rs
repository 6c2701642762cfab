//! The library's errors as Python exceptions: one clear message each, never a panic.
//!
//! - bad parameters, data that do not fit, a device this build lacks, a run that
//!   diverged: `ValueError`;
//! - a file or directory that cannot be read or written: `OSError` (with its errno, so
//!   Python picks `FileNotFoundError`, `PermissionError`, ...);
//! - training stopped by Ctrl-C: `KeyboardInterrupt`;
//! - anything else (a model that cannot be encoded): `RuntimeError`.

use ant::AntError;
use pyo3::PyErr;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};

/// The Python exception for `e`.
pub fn to_py(e: AntError) -> PyErr {
    match e {
        AntError::Io { path, source } => os_error(&source, &path),
        AntError::InvalidParam { .. }
        | AntError::Data { .. }
        | AntError::Diverged { .. }
        | AntError::Device { .. } => PyValueError::new_err(e.to_string()),
        AntError::Interrupted => PyKeyboardInterrupt::new_err(e.to_string()),
        AntError::Stopped { source, .. } => to_py(*source),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The Python exception for a model (or ensemble) directory or file that cannot be
/// read: always an `OSError`, whose message names the file and what is wrong with it.
pub fn load_error(e: AntError) -> PyErr {
    match e {
        AntError::Io { path, source } => os_error(&source, &path),
        AntError::Device { .. } => PyValueError::new_err(e.to_string()),
        other => PyOSError::new_err(other.to_string()),
    }
}

/// `OSError(errno, message, path)`: Python turns it into the subclass of the errno.
fn os_error(source: &std::io::Error, path: &std::path::Path) -> PyErr {
    let path = path.display().to_string();
    match source.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, source.to_string(), path)),
        None => PyOSError::new_err(format!("{path}: {source}")),
    }
}
