//! Single-path inference with conditional computation: the batch is partitioned at every
//! router and each sample runs only the modules on its own root-to-leaf path.

use burn::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::TreeView;
use super::forward::{NodeStep, router_logit};
use crate::modules::{Repr, index_tensor};

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
        // (node, inputs of the samples routed here, their positions in the batch)
        let mut stack: Vec<(usize, Repr, Vec<usize>)> = vec![(0, x, (0..n).collect())];
        while let Some((i, x, pos)) = stack.pop() {
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
                    // Right pushed first so the left subtree runs first (deterministic order).
                    for (child, rows) in [(r, ri), (l, li)] {
                        if rows.is_empty() {
                            continue; // an empty partition costs nothing
                        }
                        let sub = if rows.len() == pos.len() {
                            h.clone()
                        } else {
                            h.select(index_tensor(&rows, &device))
                        };
                        stack.push((child, sub, rows.iter().map(|&j| pos[j]).collect()));
                    }
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
                }
            }
        }
        PathOutput { leaf, out, k }
    }
}
