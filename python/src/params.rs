//! Training parameters from Python: a dict whose keys are the names of `ant train`'s
//! options (`epochs_node` for `--epochs-node`), read into [`AntParams`]; and the
//! defaults, read from [`AntParams`] so that Python does not keep a copy of them.

use ant::params::{ImageNorm, RouterInit, Select, ValidRows};
use ant::{Ablation, AntParams, Augment, Baseline, Init, Named, Preset};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The keys [`params_from`] reads (every training option of `ant train`).
const KEYS: &[&str] = &[
    "preset",
    "epochs_node",
    "patience",
    "refine_epochs",
    "max_depth",
    "batch_size",
    "lr",
    "seed",
    "init",
    "ablation",
    "width",
    "router_balance",
    "router_confidence",
    "router_init",
    "augment",
    "baseline",
    "image_norm",
    "select",
    "valid_rows",
];

/// `AntParams` from a dict of the keys in [`KEYS`]; a missing key or `None` leaves the
/// default. Wrong types are `TypeError`s, wrong values `ValueError`s naming the key;
/// ranges are checked later, by [`AntParams::check`].
pub fn params_from(d: &Bound<'_, PyDict>) -> PyResult<AntParams> {
    for key in d.keys() {
        let key: String = key.extract()?;
        if !KEYS.contains(&key.as_str()) {
            let msg = format!("unknown parameter {key:?}; known: {}", KEYS.join(", "));
            return Err(PyValueError::new_err(msg));
        }
    }
    let preset = named::<Preset>(d, "preset")?.unwrap_or(Preset::Tabular);
    let mut p = AntParams::new(preset);
    set(&mut p.epochs_node, count(d, "epochs_node")?);
    set(&mut p.patience, count(d, "patience")?);
    p.refine_epochs = count(d, "refine_epochs")?;
    set(&mut p.max_depth, count(d, "max_depth")?);
    set(&mut p.batch_size, count(d, "batch_size")?);
    set(&mut p.lr, number(d, "lr")?);
    set(&mut p.seed, count(d, "seed")?.map(|s| s as u64));
    set(&mut p.init, named::<Init>(d, "init")?);
    set(&mut p.ablation, named::<Ablation>(d, "ablation")?);
    set(&mut p.width, count(d, "width")?);
    set(&mut p.router_balance, number(d, "router_balance")?);
    set(&mut p.router_confidence, number(d, "router_confidence")?);
    set(&mut p.router_init, named::<RouterInit>(d, "router_init")?);
    p.augment = named::<Augment>(d, "augment")?;
    p.baseline = baseline(d)?;
    set(&mut p.image_norm, named::<ImageNorm>(d, "image_norm")?);
    set(&mut p.select, named::<Select>(d, "select")?);
    set(&mut p.valid_rows, named::<ValidRows>(d, "valid_rows")?);
    Ok(p)
}

/// The defaults of every key (those of `ant train`); `None` where the preset decides.
pub fn defaults<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let p = AntParams::new(Preset::Tabular);
    let d = PyDict::new(py);
    d.set_item("preset", p.preset.name())?;
    d.set_item("epochs_node", p.epochs_node)?;
    d.set_item("patience", p.patience)?;
    d.set_item("refine_epochs", p.refine_epochs)?;
    d.set_item("max_depth", p.max_depth)?;
    d.set_item("batch_size", p.batch_size)?;
    d.set_item("lr", p.lr)?;
    d.set_item("seed", p.seed)?;
    d.set_item("init", p.init.name())?;
    d.set_item("ablation", p.ablation.name())?;
    d.set_item("width", p.width)?;
    d.set_item("router_balance", p.router_balance)?;
    d.set_item("router_confidence", p.router_confidence)?;
    d.set_item("router_init", p.router_init.name())?;
    d.set_item("augment", p.augment.map(|a| a.name()))?;
    d.set_item("baseline", p.baseline.map(|b| b.to_string()))?;
    d.set_item("image_norm", p.image_norm.name())?;
    d.set_item("select", p.select.name())?;
    d.set_item("valid_rows", p.valid_rows.name())?;
    Ok(d)
}

/// The names each named option accepts, for documentation and messages.
pub fn choices<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("preset", Preset::names())?;
    d.set_item("init", Init::names())?;
    d.set_item("ablation", Ablation::names())?;
    d.set_item("router_init", RouterInit::names())?;
    d.set_item("augment", Augment::names())?;
    d.set_item("image_norm", ImageNorm::names())?;
    d.set_item("select", Select::names())?;
    d.set_item("valid_rows", ValidRows::names())?;
    d.set_item("baseline", ["linear", "mlp-K", "cnn"])?;
    d.set_item("device", ant::ComputeDevice::NAMES)?;
    Ok(d)
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// The value of `key`, unless it is missing or `None`.
fn get<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(d.get_item(key)?.filter(|v| !v.is_none()))
}

/// A whole number >= 0 (a Python or numpy integer; not a bool, not a float).
fn count(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<usize>> {
    let Some(v) = get(d, key)? else {
        return Ok(None);
    };
    let type_error = || {
        let t = v
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        PyTypeError::new_err(format!("{key} must be an integer, got {} ({t})", repr(&v)))
    };
    if v.is_instance_of::<pyo3::types::PyBool>() || v.is_instance_of::<pyo3::types::PyFloat>() {
        return Err(type_error());
    }
    let n: i128 = v.extract().map_err(|_| type_error())?;
    usize::try_from(n).map(Some).map_err(|_| {
        let msg = format!("{key} must be an integer from 0 to {}, got {n}", usize::MAX);
        PyValueError::new_err(msg)
    })
}

/// A number (int or float; not a bool).
fn number(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<f64>> {
    let Some(v) = get(d, key)? else {
        return Ok(None);
    };
    let msg = || format!("{key} must be a number, got {}", repr(&v));
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(msg()));
    }
    v.extract()
        .map(Some)
        .map_err(|_| PyTypeError::new_err(msg()))
}

/// One of the names of `T` (as `ant train` takes them).
fn named<T: Named>(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<T>> {
    let Some(v) = get(d, key)? else {
        return Ok(None);
    };
    let names = T::names().join(", ");
    let Ok(name) = v.extract::<String>() else {
        let msg = format!("{key} must be a string (one of {names}), got {}", repr(&v));
        return Err(PyTypeError::new_err(msg));
    };
    T::from_name(&name).map(Some).ok_or_else(|| {
        let msg = format!("{key} must be one of {names}, got {name:?}");
        PyValueError::new_err(msg)
    })
}

/// `linear`, `mlp-K` or `cnn`.
fn baseline(d: &Bound<'_, PyDict>) -> PyResult<Option<Baseline>> {
    let Some(v) = get(d, "baseline")? else {
        return Ok(None);
    };
    let Ok(name) = v.extract::<String>() else {
        let msg = format!("baseline must be a string, got {}", repr(&v));
        return Err(PyTypeError::new_err(msg));
    };
    name.parse()
        .map(Some)
        .map_err(|e: String| PyValueError::new_err(format!("baseline: {e}")))
}

fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr().map(|r| r.to_string()).unwrap_or_default()
}
