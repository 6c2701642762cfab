//! Trees leaving the program: ONNX models for any runtime, and a web page that runs
//! a tree in the browser and shows its routing.

mod graph;
pub mod onnx;
pub mod web;

pub use crate::outputs::{check_site_out, write_output};
pub use onnx::to_onnx;
pub use web::write_site;

use burn::prelude::*;

/// A weight's values, row-major.
fn weights<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    crate::modules::to_vec(t)
}
