//! The ANT itself: topology (arena) + weights, with multi-path and single-path forward.
mod forward;
mod topology;

pub use forward::{LeafOutput, NodeModules, Tree, TreeModules, TreeView};
pub use topology::{Node, Topology};
