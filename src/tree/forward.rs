//! Multi-path forward pass (every leaf, log-space reach probabilities).

use burn::module::Module;
use burn::prelude::*;
use burn::tensor::activation;

use super::Topology;
use crate::modules::{Block, Repr};

/// The weights of one node, mirroring [`super::Node`].
#[derive(Module, Debug)]
pub struct NodeModules {
    pub edge: Vec<Block>,
    pub router: Option<Block>,
    pub solver: Option<Block>,
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
    /// Fresh weights for every module of `topo`.
    pub fn init(topo: &Topology, device: &Device) -> Self {
        TreeModules {
            nodes: topo
                .nodes
                .iter()
                .map(|n| NodeModules {
                    edge: n.edge.iter().map(|s| Block::init(s, device)).collect(),
                    router: n.router.as_ref().map(|s| Block::init(s, device)),
                    solver: n.solver.as_ref().map(|s| Block::init(s, device)),
                })
                .collect(),
        }
    }
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
            .edge
            .iter()
            .fold(x, |h, t| t.forward(h))
    }

    /// Router logit of internal node `i` on its representation, `[B,1]`.
    pub fn router_logit(&self, i: usize, h: Repr) -> Tensor<2> {
        self.modules.nodes[i]
            .router
            .as_ref()
            .expect("internal node has a router")
            .forward(h)
            .into_flat()
    }

    /// Every leaf's reach log-probability and solver output. When `keep` names a leaf,
    /// its representation is returned too (what a growth candidate at that leaf sees).
    pub fn forward_leaves(&self, x: Repr, keep: Option<usize>) -> (Vec<LeafOutput>, Option<Repr>) {
        let mut out = Vec::new();
        let mut kept = None;
        // Depth-first over an explicit stack; results sorted into arena order below.
        let mut stack: Vec<(usize, Repr, Option<Tensor<2>>)> = vec![(0, x, None)];
        while let Some((i, x, lp)) = stack.pop() {
            let h = self.edge_forward(i, x);
            let node = &self.topology.nodes[i];
            match node.children {
                Some([l, r]) => {
                    let z = self.router_logit(i, h.clone());
                    let pl = add_log(&lp, activation::log_sigmoid(z.clone()));
                    let pr = add_log(&lp, activation::log_sigmoid(z.neg()));
                    stack.push((r, h.clone(), Some(pr)));
                    stack.push((l, h, Some(pl)));
                }
                None => {
                    let solver = self.modules.nodes[i]
                        .solver
                        .as_ref()
                        .expect("leaf has a solver");
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
            let h = self.edge_forward(i, x);
            if let Some([l, r]) = self.topology.nodes[i].children {
                let z = self.router_logit(i, h.clone());
                logits[i] = Some(z.into_data().try_to_vec::<f32>().expect("f32 logits"));
                stack.push((r, h.clone()));
                stack.push((l, h));
            }
        }
        (0..n)
            .map(|b| {
                let mut i = 0;
                while let Some([l, r]) = self.topology.nodes[i].children {
                    let z = logits[i].as_ref().expect("router evaluated")[b];
                    i = if z >= 0.0 { l } else { r };
                }
                i
            })
            .collect()
    }
}
