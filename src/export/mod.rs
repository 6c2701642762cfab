//! Trees leaving the program: ONNX models for any runtime, and a web page that runs
//! a tree in the browser and shows its routing.

mod graph;
mod onnx;
mod web;

pub use onnx::to_onnx;
pub use web::write_site;

use burn::prelude::*;

/// A weight's values, row-major.
fn weights<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    crate::modules::to_vec(t)
}

/// Writes `bytes` to the output file `out` of a command that reads the model directory
/// `model` and, if given, the data path `data`: atomically, and only where that is no
/// input of the command and no file `ant` did not write. `endings` are the name endings
/// of the format written (`["onnx"]`): an existing file is replaced only when its name
/// ends so.
pub fn write_output(
    out: &std::path::Path,
    bytes: &[u8],
    endings: &[&str],
    model: &std::path::Path,
    data: &[&std::path::Path],
) -> crate::error::Result<()> {
    crate::store::outputs::write_output(out, bytes, endings, model, data)
}

pub use crate::store::outputs::{check_stdout, write_stdout};

/// [`write_output`] for a command that reads the model or run directories `models`.
pub fn write_output_of(
    out: &std::path::Path,
    bytes: &[u8],
    endings: &[&str],
    models: &[std::path::PathBuf],
) -> crate::error::Result<()> {
    let inputs: Vec<crate::store::outputs::Input> = models
        .iter()
        .map(|m| crate::store::outputs::Input::Model(m))
        .collect();
    crate::store::outputs::write_file(out, bytes, &inputs, endings)
}

/// Checks, before any work, the files a command names after its output `given` (an
/// ensemble's pictures beside `--out`) for a command reading the model `model` and the
/// data `data`: each must be free of inputs, and of existing files unless `replace`.
pub fn check_derived_outputs(
    paths: &[std::path::PathBuf],
    given: &std::path::Path,
    replace: bool,
    model: &std::path::Path,
    data: Option<&std::path::Path>,
) -> crate::error::Result<()> {
    let mut inputs = vec![crate::store::outputs::Input::Model(model)];
    inputs.extend(data.map(crate::store::outputs::Input::Data));
    // `--out sub/` or `..` would name the members after no file.
    crate::store::outputs::check(given, crate::store::outputs::Kind::File, &inputs)?;
    crate::store::outputs::check_derived(paths, given, replace, &inputs)
}

/// Checks, before any work, that `out` may hold the site of `ant export --format web`
/// for the model directory `model` (and data path `data`): no input, and no directory
/// of files `ant` did not write.
pub fn check_site_out(
    out: &std::path::Path,
    model: &std::path::Path,
    data: Option<&std::path::Path>,
) -> crate::error::Result<()> {
    crate::store::outputs::check_site_out(out, model, data)
}
