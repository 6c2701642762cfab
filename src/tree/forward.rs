//! Multi-path forward pass (every leaf, log-space reach probabilities).

use burn::module::Module;
use burn::prelude::*;
use burn::tensor::activation;

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

    pub fn edge_mut(&mut self) -> &mut Vec<Block> {
        match self {
            NodeModules::Internal(n) => &mut n.edge,
            NodeModules::Leaf(n) => &mut n.edge,
        }
    }

    pub fn router_mut(&mut self) -> Option<&mut Block> {
        match self {
            NodeModules::Internal(n) => Some(&mut n.router),
            NodeModules::Leaf(_) => None,
        }
    }

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

/// What one leaf contributes for a batch.
#[derive(Clone, Debug)]
pub struct LeafOutput {
    pub node: usize,
    /// log of the probability of reaching the leaf, `[B,1]` (`None`: the root, log 1).
    pub log_reach: Option<Tensor<2>>,
    /// Solver output `[B,K]`: logits (classification) or means (regression).
    pub out: Tensor<2>,
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

/// Router logit on a representation, `[B,1]`.
pub(crate) fn router_logit(router: &Block, h: Repr) -> Tensor<2> {
    router.forward(h).into_flat()
}

/// Adds two optional log-probabilities (`None` = log 1).
pub(crate) fn add_log(a: &Option<Tensor<2>>, b: Tensor<2>) -> Tensor<2> {
    match a {
        Some(a) => a.clone() + b,
        None => b,
    }
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

    /// Every leaf's reach log-probability and solver output. When `keep` names a leaf,
    /// its representation is returned too (what a growth candidate at that leaf sees).
    pub fn forward_leaves(&self, x: Repr, keep: Option<usize>) -> (Vec<LeafOutput>, Option<Repr>) {
        let mut out = Vec::new();
        let mut kept = None;
        // Depth-first over an explicit stack; results sorted into arena order below.
        let mut stack: Vec<(usize, Repr, Option<Tensor<2>>)> = vec![(0, x, None)];
        while let Some((i, x, lp)) = stack.pop() {
            match self.step(i, x) {
                (
                    h,
                    NodeStep::Route {
                        router,
                        children: [l, r],
                    },
                ) => {
                    let z = router_logit(router, h.clone());
                    let pl = add_log(&lp, activation::log_sigmoid(z.clone()));
                    let pr = add_log(&lp, activation::log_sigmoid(z.neg()));
                    stack.push((r, h.clone(), Some(pr)));
                    stack.push((l, h, Some(pl)));
                }
                (h, NodeStep::Solve(solver)) => {
                    if keep == Some(i) {
                        kept = Some(h.clone());
                    }
                    out.push(LeafOutput {
                        node: i,
                        log_reach: lp,
                        out: solver.forward(h).into_flat(),
                    });
                }
            }
        }
        out.sort_by_key(|o| o.node);
        (out, kept)
    }

    /// Greedy single-path leaf for each sample (dense: evaluates every router).
    pub fn greedy_leaves(&self, x: Repr) -> Vec<usize> {
        let n = x.batch();
        let mut logits: Vec<Option<Vec<f32>>> = vec![None; self.topology.nodes.len()];
        let mut stack = vec![(0usize, x)];
        while let Some((i, x)) = stack.pop() {
            if let (
                h,
                NodeStep::Route {
                    router,
                    children: [l, r],
                },
            ) = self.step(i, x)
            {
                let z = router_logit(router, h.clone());
                logits[i] = Some(z.into_data().try_to_vec::<f32>().expect("f32 logits"));
                stack.push((r, h.clone()));
                stack.push((l, h));
            }
        }
        (0..n)
            .map(|b| {
                let mut i = 0;
                while let NodeModules::Internal(m) = &self.modules.nodes[i] {
                    let [l, r] = m.children;
                    let z = logits[i].as_ref().expect("router evaluated")[b];
                    i = if z >= 0.0 { l } else { r };
                }
                i
            })
            .collect()
    }
}
