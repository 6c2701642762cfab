//! Training parameters from Python: keyword arguments named as [`AntParams`]' fields
//! (`epochs_node` for `--epochs-node`), read through serde, so that neither the names
//! nor the defaults are copied here.

use ant::{AntParams, Preset};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyString};
use serde_json::{Map, Value};

/// `AntParams` from a dict of its fields; a missing key or `None` leaves the default.
/// Unknown keys and wrong types are errors naming the key (`TypeError` for a type,
/// `ValueError` for a value); ranges are checked later, by [`AntParams::check`].
pub fn params_from(d: &Bound<'_, PyDict>) -> PyResult<AntParams> {
    let preset = match d.get_item("preset")?.filter(|v| !v.is_none()) {
        Some(v) => {
            let defaults = fields(Preset::Tabular);
            let value = to_json("preset", &v, &defaults)?;
            read_one(&defaults, "preset", value, &v)?.preset()
        }
        None => Preset::Tabular,
    };
    let defaults = fields(preset);
    let mut all = defaults.clone();
    for (key, v) in d.iter() {
        let key: String = key.extract()?;
        if !defaults.contains_key(&key) {
            let known: Vec<&str> = defaults.keys().map(String::as_str).collect();
            let msg = format!("unknown parameter {key:?}; known: {}", known.join(", "));
            return Err(PyValueError::new_err(msg));
        }
        if v.is_none() {
            continue;
        }
        let value = to_json(&key, &v, &defaults)?;
        // One key at a time, so that the error names it.
        read_one(&defaults, &key, value.clone(), &v)?;
        all.insert(key, value);
    }
    serde_json::from_value(Value::Object(all)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The defaults of every parameter (those of `ant train`); `None` where the preset
/// decides.
pub fn defaults<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in fields(Preset::Tabular) {
        match v {
            Value::Null => d.set_item(k, py.None())?,
            Value::String(s) => d.set_item(k, s)?,
            Value::Number(n) if n.is_u64() => d.set_item(k, n.as_u64())?,
            Value::Number(n) => d.set_item(k, n.as_f64())?,
            other => d.set_item(k, other.to_string())?,
        }
    }
    Ok(d)
}

/// The names each named parameter accepts, for documentation and messages.
pub fn choices<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, names) in AntParams::choices() {
        d.set_item(k, names)?;
    }
    d.set_item("baseline", ["linear", "mlp-K", "cnn"])?;
    d.set_item("device", ant::ComputeDevice::NAMES)?;
    Ok(d)
}

/// The parameters of `preset` with their defaults, as JSON fields.
pub(crate) fn fields(preset: Preset) -> Map<String, Value> {
    match serde_json::to_value(AntParams::new(preset)) {
        Ok(Value::Object(m)) => m,
        _ => unreachable!("a struct serialises to an object"),
    }
}

/// The defaults with `key` set to `value`, read as `AntParams`; the error, if any, in
/// Python's terms.
fn read_one(
    defaults: &Map<String, Value>,
    key: &str,
    value: Value,
    v: &Bound<'_, PyAny>,
) -> PyResult<AntParams> {
    let mut one = defaults.clone();
    one.insert(key.to_string(), value);
    serde_json::from_value(Value::Object(one)).map_err(|e| field_error(key, &e, v, defaults))
}

/// What kind of value `key` takes, in words (from its default, else from serde's error).
fn kind(key: &str, defaults: &Map<String, Value>, serde_msg: &str) -> &'static str {
    match defaults.get(key) {
        Some(Value::String(_)) => "a string",
        Some(Value::Number(n)) if n.is_f64() => "a number",
        Some(Value::Number(_)) => "an integer",
        _ if serde_msg.contains("expected usize") || serde_msg.contains("expected u64") => {
            "an integer"
        }
        _ => "a string",
    }
}

/// serde's error for `key` as a Python exception whose message names the key.
fn field_error(
    key: &str,
    e: &serde_json::Error,
    v: &Bound<'_, PyAny>,
    defaults: &Map<String, Value>,
) -> PyErr {
    let msg = e.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg);
    let kind = kind(key, defaults, msg);
    if msg.starts_with("invalid type") {
        return PyTypeError::new_err(format!("{key} must be {kind}, got {}", repr(v)));
    }
    if kind == "an integer" {
        let msg = format!(
            "{key} must be an integer from 0 to {}, got {}",
            u64::MAX,
            repr(v)
        );
        return PyValueError::new_err(msg);
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        let names = rest
            .split("expected one of ")
            .nth(1)
            .unwrap_or("")
            .replace('`', "");
        return PyValueError::new_err(format!("{key} must be one of {names}, got {}", repr(v)));
    }
    PyValueError::new_err(format!("{key}: {msg}"))
}

/// A Python value as JSON: bool, integer (Python or numpy), float, or string.
fn to_json(key: &str, v: &Bound<'_, PyAny>, defaults: &Map<String, Value>) -> PyResult<Value> {
    if v.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Value::String(v.extract()?));
    }
    if !v.is_instance_of::<PyFloat>() && v.hasattr("__index__")? {
        let n: i128 = v.call_method0("__index__")?.extract()?;
        let wants_float = matches!(defaults.get(key), Some(Value::Number(d)) if d.is_f64());
        if let (false, Ok(n)) = (wants_float, i64::try_from(n)) {
            return Ok(Value::from(n));
        }
        if let (false, Ok(n)) = (wants_float, u64::try_from(n)) {
            return Ok(Value::from(n));
        }
        if !wants_float {
            let msg = format!("{key} must be an integer from 0 to {}, got {n}", u64::MAX);
            return Err(PyValueError::new_err(msg));
        }
        return Ok(Value::from(n as f64));
    }
    if let Ok(x) = v.extract::<f64>() {
        return serde_json::Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| {
                PyValueError::new_err(format!("{key} must be a finite number, got {}", repr(v)))
            });
    }
    let msg = format!("{key} must be {}, got {}", kind(key, defaults, ""), repr(v));
    Err(PyTypeError::new_err(msg))
}

fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr().map(|r| r.to_string()).unwrap_or_default()
}
