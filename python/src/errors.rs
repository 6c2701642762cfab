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
        // The path as it is (a directory may be named `--seed`); its message translated.
        AntError::Data { path, msg } => {
            PyValueError::new_err(format!("{}: {}", path.display(), in_python_terms(&msg)))
        }
        AntError::InvalidParam { .. } | AntError::Diverged { .. } | AntError::Device { .. } => {
            PyValueError::new_err(in_python_terms(&e.to_string()))
        }
        AntError::Interrupted => PyKeyboardInterrupt::new_err(e.to_string()),
        AntError::Stopped { source, .. } => to_py(*source),
        other => PyRuntimeError::new_err(in_python_terms(&other.to_string())),
    }
}

/// `msg` with the command line's flags that are Python parameters named as Python names
/// them (`--valid-fraction` as `valid_fraction`, `--force` as `overwrite=True`), so that
/// no Python error tells the user to use `--force`. Other flags (of commands a message
/// suggests running) stay.
fn in_python_terms(msg: &str) -> String {
    let params = crate::params::fields(ant::Preset::Tabular);
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let flag = &rest[at + 2..];
        let len = flag
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(flag.len());
        let name = flag[..len].replace('-', "_");
        // A flag starts a word: `x--force.csv` is a file's name.
        let starts_word = out
            .chars()
            .last()
            .is_none_or(|c| c.is_whitespace() || "(`'\",".contains(c));
        match name.as_str() {
            _ if !starts_word => out.push_str(&rest[at..at + 2 + len]),
            "force" => out.push_str("overwrite=True"),
            n if params.contains_key(n) || n == "device" || n == "single_path" => out.push_str(n),
            _ => out.push_str(&rest[at..at + 2 + len]),
        }
        rest = &flag[len..];
    }
    out.push_str(rest);
    out
}

/// The Python exception for a model (or ensemble) directory or file that cannot be
/// read: always an `OSError`, whose message names the file and what is wrong with it.
pub fn load_error(e: AntError) -> PyErr {
    match e {
        AntError::Io { path, source } => os_error(&source, &path),
        AntError::Device { .. } => PyValueError::new_err(e.to_string()),
        AntError::Data { path, msg } => {
            PyOSError::new_err(format!("{}: {}", path.display(), in_python_terms(&msg)))
        }
        other => PyOSError::new_err(in_python_terms(&other.to_string())),
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
