//! Multi-path inference, the paper's: every leaf runs, and its prediction is weighted
//! by the probability of reaching it (the product of router decisions on its path),
//! kept in log space. The mixture's likelihood and prediction are in [`crate::loss`].

use burn::prelude::*;

use super::TreeView;
use super::router::router_logit;
use super::topology::depth_first;
use super::weights::NodeStep;
use crate::modules::{Repr, to_vec};
use crate::ops;

/// What one leaf contributes for a batch.
#[derive(Clone, Debug)]
pub struct LeafOutput {
    pub node: usize,
    /// log of the probability of reaching the leaf, `[B,1]` (`None`: the root, log 1).
    pub(crate) log_reach: Option<Tensor<2>>,
    /// Solver output `[B,K]`: logits (classification) or means (regression).
    pub out: Tensor<2>,
}

/// The leaf a growth candidate replaces: what reaches it, without its solver's output.
pub struct KeptLeaf {
    /// The representation reaching the leaf.
    pub h: Repr,
    /// log of the probability of reaching it, `[B,1]` (`None`: the root).
    pub log_reach: Option<Tensor<2>>,
}

/// Adds two optional log-probabilities (`None` = log 1).
pub(crate) fn add_log(a: &Option<Tensor<2>>, b: Tensor<2>) -> Tensor<2> {
    match a {
        Some(a) => a.clone() + b,
        None => b,
    }
}

impl TreeView<'_> {
    /// Every leaf's reach log-probability and solver output; the leaf `keep` names, if
    /// any, apart, without running its solver (what a growth candidate there replaces).
    pub fn forward_leaves(
        &self,
        x: Repr,
        keep: Option<usize>,
    ) -> (Vec<LeafOutput>, Option<KeptLeaf>) {
        let mut out = Vec::new();
        let mut kept = None;
        // Depth-first; results sorted into arena order below.
        depth_first(
            (x, None),
            |i, (x, lp): (Repr, Option<Tensor<2>>)| match self.step(i, x) {
                (
                    h,
                    NodeStep::Route {
                        router,
                        children: [l, r],
                    },
                ) => {
                    let z = router_logit(router, h.clone());
                    let pl = add_log(&lp, ops::log_sigmoid(z.clone()));
                    let pr = add_log(&lp, ops::log_sigmoid(z.neg()));
                    vec![(l, (h.clone(), Some(pl))), (r, (h, Some(pr)))]
                }
                (h, NodeStep::Solve(_)) if keep == Some(i) => {
                    kept = Some(KeptLeaf { h, log_reach: lp });
                    vec![]
                }
                (h, NodeStep::Solve(solver)) => {
                    out.push(LeafOutput {
                        node: i,
                        log_reach: lp,
                        out: solver.forward(h).into_flat(),
                    });
                    vec![]
                }
            },
        );
        out.sort_by_key(|o| o.node);
        (out, kept)
    }
}

/// Reach probabilities `[B,L]` (rows sum to 1).
pub fn reach_probs(leaves: &[LeafOutput], batch: usize, device: &Device) -> Tensor<2> {
    let cols: Vec<Tensor<2>> = leaves
        .iter()
        .map(|l| match &l.log_reach {
            Some(p) => p.clone().exp(),
            None => Tensor::ones([batch, 1], device),
        })
        .collect();
    Tensor::cat(cols, 1)
}

/// Each sample's leaf of smallest reach probability (the paper's Table 5 check: a
/// tree whose leaves specialise predicts badly from there).
pub(crate) fn least_likely_leaves(leaves: &[LeafOutput], n: usize, device: &Device) -> Vec<usize> {
    let reach = to_vec(reach_probs(leaves, n, device));
    let nl = leaves.len();
    reach
        .chunks(nl)
        .map(|r| {
            let j = (0..nl).fold(0, |b, j| if r[j] < r[b] { j } else { b });
            leaves[j].node
        })
        .collect()
}
