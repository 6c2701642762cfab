//! The tree's weights, mirroring its topology node by node, and the borrowed view
//! that the forward passes ([`super::multi_path`], [`super::single_path`]) run on.

use burn::module::Module;
use burn::prelude::*;

use super::{NodeKind, Topology};
use crate::modules::{Block, Repr};

/// The weights of one node, mirroring [`super::Node`]'s kind. Saved without the variant
/// names, so a node's weights are `nodes.I.edge.*` and `nodes.I.router.*` or
/// `nodes.I.solver.*`.
#[derive(Module, Debug)]
pub enum NodeModules {
    Internal(InternalModules),
    Leaf(LeafModules),
}

/// An internal node's weights: its edge's transformers and its router, and where its
/// children are (`[left, right]`, no weights), so a pass needs nothing else.
#[derive(Module, Debug)]
pub struct InternalModules {
    pub edge: Vec<Block>,
    pub router: Block,
    pub children: [usize; 2],
}

/// A leaf's weights: its edge's transformers and its solver.
#[derive(Module, Debug)]
pub struct LeafModules {
    pub edge: Vec<Block>,
    pub solver: Block,
}

impl NodeModules {
    pub fn leaf(edge: Vec<Block>, solver: Block) -> Self {
        NodeModules::Leaf(LeafModules { edge, solver })
    }

    pub fn edge(&self) -> &[Block] {
        match self {
            NodeModules::Internal(n) => &n.edge,
            NodeModules::Leaf(n) => &n.edge,
        }
    }

    /// The solver of a leaf.
    pub fn solver(&self) -> Option<&Block> {
        match self {
            NodeModules::Internal(_) => None,
            NodeModules::Leaf(n) => Some(&n.solver),
        }
    }

    /// The router of an internal node.
    pub fn router(&self) -> Option<&Block> {
        match self {
            NodeModules::Internal(n) => Some(&n.router),
            NodeModules::Leaf(_) => None,
        }
    }

    #[cfg(feature = "internals")]
    pub fn edge_mut(&mut self) -> &mut Vec<Block> {
        match self {
            NodeModules::Internal(n) => &mut n.edge,
            NodeModules::Leaf(n) => &mut n.edge,
        }
    }

    #[cfg(feature = "internals")]
    pub fn router_mut(&mut self) -> Option<&mut Block> {
        match self {
            NodeModules::Internal(n) => Some(&mut n.router),
            NodeModules::Leaf(_) => None,
        }
    }

    #[cfg(feature = "internals")]
    pub fn solver_mut(&mut self) -> Option<&mut Block> {
        match self {
            NodeModules::Internal(_) => None,
            NodeModules::Leaf(n) => Some(&mut n.solver),
        }
    }

    fn take_edge(&mut self) -> Vec<Block> {
        match self {
            NodeModules::Internal(n) => std::mem::take(&mut n.edge),
            NodeModules::Leaf(n) => std::mem::take(&mut n.edge),
        }
    }
}

/// The weights of a whole tree, indexed like the topology's arena.
#[derive(Module, Debug)]
pub struct TreeModules {
    pub nodes: Vec<NodeModules>,
}

/// An ANT: structure plus weights.
#[derive(Clone, Debug)]
pub struct Tree {
    pub topology: Topology,
    pub modules: TreeModules,
}

impl TreeModules {
    /// [`Topology::split`] for the weights: leaf `i` gets `router`, and two leaves with
    /// identity edges are appended (at the indices the topology gave them).
    pub fn split(&mut self, i: usize, router: Block, [left, right]: [Block; 2]) {
        let children = [self.nodes.len(), self.nodes.len() + 1];
        let edge = self.nodes[i].take_edge();
        self.nodes[i] = NodeModules::Internal(InternalModules {
            edge,
            router,
            children,
        });
        self.nodes.push(NodeModules::leaf(vec![], left));
        self.nodes.push(NodeModules::leaf(vec![], right));
    }

    /// [`Topology::deepen`] for the weights: leaf `i`'s edge gains `transformer`, and
    /// the leaf a new `solver`.
    pub fn deepen(&mut self, i: usize, transformer: Block, solver: Block) {
        let mut edge = self.nodes[i].take_edge();
        edge.push(transformer);
        self.nodes[i] = NodeModules::leaf(edge, solver);
    }

    /// Fresh weights for every module of `topo`.
    pub fn init(topo: &Topology, device: &Device) -> Self {
        TreeModules {
            nodes: topo
                .nodes
                .iter()
                .map(|n| {
                    let edge = n.edge.iter().map(|s| Block::init(s, device)).collect();
                    match &n.kind {
                        NodeKind::Internal { router, children } => {
                            NodeModules::Internal(InternalModules {
                                edge,
                                router: Block::init(router, device),
                                children: *children,
                            })
                        }
                        NodeKind::Leaf { solver } => {
                            NodeModules::leaf(edge, Block::init(solver, device))
                        }
                    }
                })
                .collect(),
        }
    }
}

/// What a node does after its edge: route to its children, or solve.
pub(crate) enum NodeStep<'a> {
    Route {
        router: &'a Block,
        children: [usize; 2],
    },
    Solve(&'a Block),
}

/// A borrowed tree: what the forward passes need.
#[derive(Clone, Copy, Debug)]
pub struct TreeView<'a> {
    pub topology: &'a Topology,
    pub modules: &'a TreeModules,
}

impl Tree {
    pub fn new(topology: Topology, modules: TreeModules) -> Self {
        Tree { topology, modules }
    }
    pub fn view(&self) -> TreeView<'_> {
        TreeView {
            topology: &self.topology,
            modules: &self.modules,
        }
    }
}

impl TreeView<'_> {
    /// Apply node `i`'s edge transformers.
    pub fn edge_forward(&self, i: usize, x: Repr) -> Repr {
        self.modules.nodes[i]
            .edge()
            .iter()
            .fold(x, |h, t| t.forward(h))
    }

    /// The node's representation (edge applied) and what it does with it.
    pub(crate) fn step(&self, i: usize, x: Repr) -> (Repr, NodeStep<'_>) {
        let h = self.edge_forward(i, x);
        let step = match &self.modules.nodes[i] {
            NodeModules::Internal(m) => NodeStep::Route {
                router: &m.router,
                children: m.children,
            },
            NodeModules::Leaf(m) => NodeStep::Solve(&m.solver),
        };
        (h, step)
    }
}
