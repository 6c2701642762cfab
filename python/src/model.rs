//! `ant._ant.Model`: a fitted ANT (an [`ant::Ant`] on its device) with what the
//! scikit-learn estimators need: predictions, leaves and reach probabilities as numpy
//! arrays, the model's description, and its files (`save`, `load`) and bytes (pickling).

use std::path::PathBuf;

use ant::{Ant, ComputeDevice, Inference};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::data::{Floats, Reading, samples, unlabelled};
use crate::errors::{load_error, to_py};
use crate::warnings::detached;

#[pyclass(module = "ant._ant", name = "Model", frozen)]
pub struct Model {
    pub ant: Ant,
    pub device: ComputeDevice,
}

/// The device called `name` (`cpu`, `torch`, `cuda`, `cuda:N`).
pub fn parse_device(name: &str) -> PyResult<(ComputeDevice, burn::prelude::Device)> {
    let d: ComputeDevice = name.parse().map_err(to_py)?;
    if d.is_torch() && !cfg!(feature = "torch") {
        let msg = format!(
            "device {d}: this build of the Python package has no LibTorch: `source \
             scripts/torch-env.sh`, then `pip install ./python --config-settings \
             maturin.build-args=\"--features torch\"`"
        );
        return Err(PyValueError::new_err(msg));
    }
    Ok((d, d.burn().map_err(to_py)?))
}

/// Predictions as numpy arrays: values `(n, outputs)` and greedy leaves `(n,)`.
type PredictionArrays<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<u64>>);

/// A `[rows, cols]` numpy array of row-major `values`.
fn matrix<'py>(py: Python<'py>, values: Vec<f32>, cols: usize) -> Bound<'py, PyArray2<f32>> {
    let rows = values.len() / cols.max(1);
    Array2::from_shape_vec((rows, cols), values)
        .expect("rows * cols values")
        .into_pyarray(py)
}

#[pymethods]
impl Model {
    /// The model saved in `dir` (a directory of `ant train --out` or `save`).
    #[staticmethod]
    fn load(py: Python<'_>, dir: PathBuf, device: &str) -> PyResult<Model> {
        let (choice, dev) = parse_device(device)?;
        let ant = detached(py, || Ant::load(&dir, &dev)).map_err(load_error)?;
        Ok(Model {
            ant,
            device: choice,
        })
    }

    /// Writes `tree.json` and the weights into `dir`, as `ant train` does (holding the
    /// directory's lock): a directory holding a model is replaced only with `overwrite`.
    #[pyo3(signature = (dir, overwrite=false))]
    fn save(&self, py: Python<'_>, dir: PathBuf, overwrite: bool) -> PyResult<()> {
        detached(py, || ant::saved::save(&self.ant, &dir, overwrite)).map_err(to_py)
    }

    /// The model of `tree.json`'s bytes and the weights file's bytes.
    #[staticmethod]
    fn from_bytes(tree_json: &[u8], weights: &[u8], device: &str) -> PyResult<Model> {
        let (choice, dev) = parse_device(device)?;
        let ant = Ant::from_bytes(tree_json, weights, &dev).map_err(load_error)?;
        Ok(Model {
            ant,
            device: choice,
        })
    }

    /// `(tree.json, weights)` as bytes.
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let (tree, weights) = self.ant.to_bytes().map_err(to_py)?;
        Ok((PyBytes::new(py, &tree), PyBytes::new(py, &weights)))
    }

    /// Pickling: the model is rebuilt from its two files' bytes on the same device.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let rebuild = py.get_type::<Model>().getattr("from_bytes")?;
        let (tree, weights) = self.to_bytes(py)?;
        let args = (tree, weights, self.device.to_string()).into_pyobject(py)?;
        Ok((rebuild, args.into_any()))
    }

    /// `(values, leaf)`: class probabilities (or regression values) `(n, outputs)`, and
    /// the leaf each sample's greedy path reaches. Multi-path unless `single_path`.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: Floats<'py>,
        single_path: bool,
    ) -> PyResult<PredictionArrays<'py>> {
        let data = unlabelled(samples(&x, Reading::Prediction)?)?;
        let mode = if single_path {
            Inference::SinglePath
        } else {
            Inference::MultiPath
        };
        let p = detached(py, || self.ant.predict(&data, mode)).map_err(to_py)?;
        let leaf: Vec<u64> = p.leaf.iter().map(|&l| l as u64).collect();
        Ok((matrix(py, p.values, p.k), leaf.into_pyarray(py)))
    }

    /// The probability of each sample reaching each node, `(n, nodes)` (a leaf's column
    /// is its mixture weight; the leaves' columns sum to 1).
    fn node_reach<'py>(
        &self,
        py: Python<'py>,
        x: Floats<'py>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let data = unlabelled(samples(&x, Reading::Prediction)?)?;
        let reach = detached(py, || self.ant.node_reach_per_sample(&data)).map_err(to_py)?;
        Ok(matrix(py, reach, self.ant.topology().nodes.len()))
    }

    /// The leaves' node indices, in the tree's order.
    fn leaves(&self) -> Vec<usize> {
        self.ant.topology().leaves()
    }

    /// The nodes from the root to `node`.
    fn path(&self, node: usize) -> PyResult<Vec<usize>> {
        let t = self.ant.topology();
        if node >= t.nodes.len() {
            let msg = format!("no node {node}: the tree has {}", t.nodes.len());
            return Err(PyValueError::new_err(msg));
        }
        Ok(t.path(node))
    }

    /// `tree.json`'s description of the model (task, topology, settings, decisions...).
    fn meta_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.ant.meta())
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
    }

    /// The tree, one line per node (as `ant inspect` prints it).
    fn outline(&self) -> String {
        self.ant.topology().outline()
    }

    /// Sizes and costs: parameters, FLOPs per sample (multi-path), node counts, depth.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.ant.topology();
        let total = t.total_cost();
        let d = PyDict::new(py);
        d.set_item("params_total", total.params)?;
        d.set_item("flops_multi_path", total.flops)?;
        d.set_item("nodes", t.nodes.len())?;
        d.set_item("leaves", t.leaves().len())?;
        d.set_item("routers", t.routers())?;
        d.set_item("transformers", t.transformers())?;
        d.set_item("depth", t.depth())?;
        d.set_item("input_shape", t.input.dims())?;
        d.set_item("outputs", self.ant.task().outputs())?;
        let task = if self.ant.task().is_classification() {
            "classification"
        } else {
            "regression"
        };
        d.set_item("task", task)?;
        Ok(d)
    }

    /// `(leaf, parameters, FLOPs)` of the path to each leaf (what single-path inference
    /// runs for a sample that reaches it).
    fn leaf_costs(&self) -> Vec<(usize, usize, u64)> {
        let t = self.ant.topology();
        t.leaves()
            .into_iter()
            .map(|l| {
                let c = t.path_cost(l);
                (l, c.params, c.flops)
            })
            .collect()
    }

    /// The device the model computes on.
    #[getter]
    fn device(&self) -> String {
        self.device.to_string()
    }
}
