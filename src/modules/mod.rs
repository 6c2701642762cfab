//! Burn modules built from [`crate::spec::BlockSpec`]s.
mod block;
pub mod fused;
mod kernels;
pub mod router;
mod unrolled;
pub use block::{Block, Repr, index_tensor, to_vec};
