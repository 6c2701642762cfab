//! The ANT itself: topology (arena) + weights, with multi-path and single-path forward.
mod forward;
mod route;
mod topology;

pub use forward::{
    InternalModules, LeafModules, LeafOutput, NodeModules, Tree, TreeModules, TreeView,
};
pub use route::{PathOutput, Routing};
pub use topology::{Node, NodeKind, Topology};
