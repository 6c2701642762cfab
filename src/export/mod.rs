//! Trees leaving the program: ONNX models for any runtime.

mod graph;
pub mod onnx;

pub use onnx::to_onnx;
