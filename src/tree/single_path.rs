//! Single-path inference: each sample follows one root-to-leaf path (the more likely
//! branch at every router, or a seeded draw). Done for real it is conditional
//! computation: the batch is partitioned at every router and each sample runs only the
//! modules on its own path; [`TreeView::greedy_leaves`] finds the same leaves densely.

use burn::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::TreeView;
use super::multi_path::LeafOutput;
use super::router::router_logit;
use super::topology::depth_first;
use super::weights::{NodeModules, NodeStep};
use crate::modules::{Repr, index_tensor, to_vec};

/// How a sample chooses its branch at a router.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// The more likely branch (left when p_left >= 0.5).
    Greedy,
    /// A Bernoulli draw with p_left, from a generator seeded with this value.
    Stochastic(u64),
}

/// Per-sample results of a single-path pass.
#[derive(Clone, Debug, PartialEq)]
pub struct PathOutput {
    /// The leaf each sample reached.
    pub leaf: Vec<usize>,
    /// Solver outputs `[B,K]` row-major, each sample's row from its own leaf.
    pub out: Vec<f32>,
    pub k: usize,
}

impl TreeView<'_> {
    /// Route every sample down one path, computing only what that path needs. Solver
    /// outputs are transformed by `post` (e.g. softmax) before leaving the device.
    pub fn single_path(
        &self,
        x: Repr,
        routing: Routing,
        post: impl Fn(Tensor<2>) -> Tensor<2>,
    ) -> PathOutput {
        let n = x.batch();
        let device = match &x {
            Repr::Image(t) => t.device(),
            Repr::Flat(t) => t.device(),
        };
        let mut rng = match routing {
            Routing::Stochastic(seed) => Some(ChaCha8Rng::seed_from_u64(seed)),
            Routing::Greedy => None,
        };
        let mut leaf = vec![0usize; n];
        let mut out: Vec<f32> = vec![];
        let mut k = 0;
        // Each node's state: the inputs of the samples routed there, their positions in
        // the batch.
        depth_first((x, (0..n).collect::<Vec<usize>>()), |i, (x, pos)| {
            match self.step(i, x) {
                (
                    h,
                    NodeStep::Route {
                        router,
                        children: [l, r],
                    },
                ) => {
                    let z = router_logit(router, h.clone()).into_data().convert::<f32>();
                    let z = z.as_slice::<f32>().expect("f32 logits");
                    let (mut li, mut ri) = (vec![], vec![]);
                    for (j, &zj) in z.iter().enumerate() {
                        let left = match rng.as_mut() {
                            None => zj >= 0.0,
                            Some(g) => g.random::<f32>() < 1.0 / (1.0 + (-zj).exp()),
                        };
                        if left { li.push(j) } else { ri.push(j) }
                    }
                    let mut next = vec![];
                    for (child, rows) in [(l, li), (r, ri)] {
                        if rows.is_empty() {
                            continue; // an empty partition costs nothing
                        }
                        let sub = if rows.len() == pos.len() {
                            h.clone()
                        } else {
                            h.select(index_tensor(&rows, &device))
                        };
                        next.push((child, (sub, rows.iter().map(|&j| pos[j]).collect())));
                    }
                    next
                }
                (h, NodeStep::Solve(solver)) => {
                    let o = post(solver.forward(h).into_flat());
                    let kk = o.dims()[1];
                    if out.is_empty() {
                        k = kk;
                        out = vec![0.0; n * k];
                    }
                    let o = o.into_data().convert::<f32>();
                    let o = o.as_slice::<f32>().expect("f32 outputs");
                    for (j, &p) in pos.iter().enumerate() {
                        leaf[p] = i;
                        out[p * k..(p + 1) * k].copy_from_slice(&o[j * k..(j + 1) * k]);
                    }
                    vec![]
                }
            }
        });
        PathOutput { leaf, out, k }
    }

    /// Greedy single-path leaf for each sample (dense: evaluates every router).
    pub fn greedy_leaves(&self, x: Repr) -> Vec<usize> {
        let n = x.batch();
        let mut logits: Vec<Option<Vec<f32>>> = vec![None; self.topology.nodes.len()];
        depth_first(x, |i, x| match self.step(i, x) {
            (
                h,
                NodeStep::Route {
                    router,
                    children: [l, r],
                },
            ) => {
                logits[i] = Some(to_vec(router_logit(router, h.clone())));
                vec![(l, h.clone()), (r, h)]
            }
            _ => vec![],
        });
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

/// From every leaf's outputs (a dense pass), each sample's row of its `chosen` leaf,
/// transformed by `post`: single-path predictions computed densely.
pub(crate) fn chosen_outputs(
    leaves: &[LeafOutput],
    chosen: &[usize],
    post: impl Fn(Tensor<2>) -> Tensor<2>,
) -> Vec<f32> {
    let outs: Vec<Vec<f32>> = leaves.iter().map(|l| to_vec(post(l.out.clone()))).collect();
    let k = outs.first().map_or(0, |o| o.len() / chosen.len().max(1));
    let pos = |node: usize| leaves.iter().position(|l| l.node == node).expect("a leaf");
    chosen
        .iter()
        .enumerate()
        .flat_map(|(b, &g)| outs[pos(g)][b * k..(b + 1) * k].to_vec())
        .collect()
}
