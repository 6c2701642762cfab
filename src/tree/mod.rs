//! The ANT itself: the topology (an arena of nodes, public: the model's shape), the
//! weights that mirror it, and the two ways of running it: multi-path (every leaf,
//! mixed) and single-path (the last three crate-private, public with `internals`).
mod multi_path;
mod single_path;
mod solver;
mod topology;
mod transformer;
mod weights;

internal_mods! {
    /// The router: its spec, its optional start and growth-time penalties.
    router;
}

pub(crate) use multi_path::least_likely_leaves;
internal_use!(multi_path::{LeafOutput, reach_probs});
pub(crate) use single_path::chosen_outputs;
internal_use!(single_path::{PathOutput, Routing});
pub(crate) use topology::depth_first;
pub use topology::{Node, NodeKind, Topology};
internal_use!(topology::TopologyError);
internal_use!(weights::{InternalModules, LeafModules, NodeModules, Tree, TreeModules, TreeView});
