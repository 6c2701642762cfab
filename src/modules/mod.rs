//! Burn modules built from [`crate::spec::BlockSpec`]s.
mod block;
pub use block::{Block, Repr, index_tensor, to_vec};
