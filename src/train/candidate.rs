//! Growth candidates trained on cached inputs (exact local optimisation).
//!
//! With the tree frozen, the mixture likelihood of a sample splits into the part from
//! the leaf being grown and a constant from every other leaf:
//! `log p(y|x) = logaddexp(rest(x), log pi_leaf(x) + log p_candidate(y | h_leaf(x)))`.
//! Computing `h_leaf`, `log pi_leaf` and `rest` once per growth step (without autodiff)
//! and training the candidate on them gives the same loss and gradients as the full tree
//! with frozen parameters, without recomputing or backpropagating through frozen modules.

use burn::module::Module;
use burn::prelude::*;
use burn::tensor::activation;

use super::device_set::DeviceSet;
use super::eval::{MetricCtx, Totals, chunks};
use crate::loss::{Target, leaf_log_lik, leaf_prediction, logsumexp_rows};
use crate::ops;
use crate::tree::router::{RouterReg, balance_penalty, decision_entropy, router_logit};
use crate::modules::{Block, Repr};
use crate::task::Task;
use crate::tree::TreeView;

/// What a candidate at one leaf needs from the frozen tree, for every sample.
#[derive(Clone, Debug)]
pub struct LeafCache {
    /// Representation reaching the leaf.
    pub h: Repr,
    /// log reach probability of the leaf `[N,1]` (`None`: the root).
    pub log_reach: Option<Tensor<2>>,
    /// log of the other leaves' summed contribution `[N,1]` (`None`: no other leaf).
    pub rest_ll: Option<Tensor<2>>,
    /// The other leaves' summed prediction `[N,K]` (for the validation metric).
    pub rest_pred: Option<Tensor<2>>,
    pub y: Target,
    pub n: usize,
}

impl LeafCache {
    /// The cache for the root of an empty tree: the raw inputs, nothing else.
    pub fn for_root(set: &DeviceSet) -> LeafCache {
        LeafCache {
            h: set.x.all(set.n),
            log_reach: None,
            rest_ll: None,
            rest_pred: None,
            y: set.y.clone(),
            n: set.n,
        }
    }

    /// Run the frozen tree (modules without autodiff) once over `set`.
    pub fn compute(
        tree: TreeView<'_>,
        set: &DeviceSet,
        leaf: usize,
        task: Task,
        chunk: usize,
    ) -> LeafCache {
        let (mut reach, mut rest, mut rest_pred) = (vec![], vec![], vec![]);
        // The leaf's inputs are the biggest tensor of growth (1.2 GB for mnist-a's root
        // after one transformer): written chunk by chunk into one tensor, not gathered
        // and concatenated, which held them twice.
        let mut h: Option<Repr> = None;
        for (s, len) in chunks(set.n, chunk) {
            let x = set.x.narrow(s, len);
            let y = set.y.narrow(s, len);
            let (leaves, kept) = tree.forward_leaves(x, Some(leaf));
            let kept = kept.expect("leaf is in the tree");
            reach.extend(kept.log_reach);
            let all = h.take().unwrap_or_else(|| kept.h.uninit_rows(set.n));
            h = Some(all.with_rows(s, kept.h));
            let mut terms = vec![];
            let mut pred: Option<Tensor<2>> = None;
            for l in leaves {
                let lr = l.log_reach.expect("a tree with two leaves has routers");
                terms.push(lr.clone() + leaf_log_lik(l.out.clone(), &y));
                let p = leaf_prediction(l.out, task) * lr.exp();
                pred = Some(match pred {
                    Some(a) => a + p,
                    None => p,
                });
            }
            if !terms.is_empty() {
                rest.push(logsumexp_rows(Tensor::cat(terms, 1)));
                rest_pred.push(pred.expect("other leaves"));
            }
        }
        let cat = |v: Vec<Tensor<2>>| (!v.is_empty()).then(|| Tensor::cat(v, 0));
        LeafCache {
            h: h.expect("a set has rows"),
            log_reach: cat(reach),
            rest_ll: cat(rest),
            rest_pred: cat(rest_pred),
            y: set.y.clone(),
            n: set.n,
        }
    }

    pub(super) fn select(&self, idx: Tensor<1, Int>) -> LeafCache {
        let sel = |t: &Option<Tensor<2>>| t.as_ref().map(|t| t.clone().select(0, idx.clone()));
        LeafCache {
            h: self.h.select(idx.clone()),
            log_reach: sel(&self.log_reach),
            rest_ll: sel(&self.rest_ll),
            rest_pred: sel(&self.rest_pred),
            y: self.y.select(idx.clone()),
            n: idx.dims()[0],
        }
    }

    /// `a`'s rows then `b`'s (inputs at the same leaf of the same tree).
    pub(super) fn cat(a: LeafCache, b: LeafCache) -> LeafCache {
        let n = a.n + b.n;
        let both = |x: Option<Tensor<2>>, y: Option<Tensor<2>>| match (x, y) {
            (Some(x), Some(y)) => Some(Tensor::cat(vec![x, y], 0)),
            _ => None,
        };
        LeafCache {
            h: a.h.uninit_rows(n).with_rows(0, a.h).with_rows(a.n, b.h),
            log_reach: both(a.log_reach, b.log_reach),
            rest_ll: both(a.rest_ll, b.rest_ll),
            rest_pred: both(a.rest_pred, b.rest_pred),
            y: a.y.cat(b.y),
            n,
        }
    }

    fn narrow(&self, s: usize, len: usize) -> LeafCache {
        let nar = |t: &Option<Tensor<2>>| t.as_ref().map(|t| t.clone().narrow(0, s, len));
        LeafCache {
            h: self.h.narrow(s, len),
            log_reach: nar(&self.log_reach),
            rest_ll: nar(&self.rest_ll),
            rest_pred: nar(&self.rest_pred),
            y: self.y.narrow(s, len),
            n: len,
        }
    }

    /// Full-tree log-likelihood per sample, given the candidate's local one.
    pub fn combine(&self, local: Tensor<2>) -> Tensor<2> {
        let own = match &self.log_reach {
            Some(r) => r.clone() + local,
            None => local,
        };
        match &self.rest_ll {
            Some(rest) => logsumexp_rows(Tensor::cat(vec![rest.clone(), own], 1)),
            None => own,
        }
    }

    /// Mean training loss of `model` on these samples: the full tree's NLL, plus
    /// `balance` times the router's [`balance_penalty`] for a split.
    pub(super) fn loss<C: Candidate>(&self, model: &C, reg: RouterReg) -> Tensor<1> {
        let (ll, z) = model.local_terms(self.h.clone(), &self.y);
        let mut loss = self.combine(ll).mean().neg();
        if let Some(z) = z {
            if reg.balance > 0.0 {
                loss = loss + balance_penalty(z.clone(), self.log_reach.as_ref()) * reg.balance;
            }
            if reg.confidence > 0.0 {
                loss = loss + decision_entropy(z, self.log_reach.as_ref()) * reg.confidence;
            }
        }
        loss
    }

    /// Full-tree prediction, given the candidate's local one.
    pub fn combine_pred(&self, local: Tensor<2>) -> Tensor<2> {
        let own = match &self.log_reach {
            Some(r) => local * r.clone().exp(),
            None => local,
        };
        match &self.rest_pred {
            Some(p) => p.clone() + own,
            None => own,
        }
    }
}

/// The full tree's log-likelihood of every row of `valid` with `model` at the leaf
/// (for the paired acceptance rule).
pub fn row_log_lik<C: Candidate>(model: &C, valid: &LeafCache, chunk: usize) -> Vec<f32> {
    // Without autodiff: a tracked forward pass that no backward consumes keeps every
    // chunk's activations in the graph until the next training step (gigabytes on a
    // wide tree's validation rows).
    let model = model.valid();
    let mut out = Vec::with_capacity(valid.n);
    for (s, len) in chunks(valid.n, chunk) {
        let b = valid.narrow(s, len);
        let ll = b.combine(model.local_log_lik(b.h.clone(), &b.y));
        out.extend(crate::modules::to_vec(ll));
    }
    out
}

/// A set of new modules at one leaf.
pub trait Candidate: Module {
    /// `log p(y | h)` under the candidate's own sub-tree, `[B,1]`.
    fn local_log_lik(&self, h: Repr, y: &Target) -> Tensor<2>;
    /// The candidate's own prediction `[B,K]`.
    fn local_pred(&self, h: Repr, task: Task) -> Tensor<2>;
    /// [`Candidate::local_log_lik`] and, for a split, its router's logits `[B,1]`.
    fn local_terms(&self, h: Repr, y: &Target) -> (Tensor<2>, Option<Tensor<2>>) {
        (self.local_log_lik(h, y), None)
    }
}

/// Split: a router and two leaves with identity edges.
#[derive(Module, Debug)]
pub struct SplitCandidate {
    pub router: Block,
    pub left: Block,
    pub right: Block,
}

impl SplitCandidate {
    fn parts(&self, h: Repr) -> (Tensor<2>, Tensor<2>, Tensor<2>) {
        let z = router_logit(&self.router, h.clone());
        (
            z,
            self.left.forward(h.clone()).into_flat(),
            self.right.forward(h).into_flat(),
        )
    }
}

impl Candidate for SplitCandidate {
    fn local_log_lik(&self, h: Repr, y: &Target) -> Tensor<2> {
        self.local_terms(h, y).0
    }
    fn local_terms(&self, h: Repr, y: &Target) -> (Tensor<2>, Option<Tensor<2>>) {
        let (z, l, r) = self.parts(h);
        let tl = ops::log_sigmoid(z.clone()) + leaf_log_lik(l, y);
        let tr = ops::log_sigmoid(z.clone().neg()) + leaf_log_lik(r, y);
        (logsumexp_rows(Tensor::cat(vec![tl, tr], 1)), Some(z))
    }
    fn local_pred(&self, h: Repr, task: Task) -> Tensor<2> {
        let (z, l, r) = self.parts(h);
        let p = activation::sigmoid(z);
        leaf_prediction(l, task) * p.clone() + leaf_prediction(r, task) * (p.neg() + 1.0)
    }
}

/// Deepen: a new transformer on the leaf's edge and a new solver (also the root's shape).
#[derive(Module, Debug)]
pub struct DeepenCandidate {
    /// `None`: identity (the root of a no-transformer tree).
    pub transformer: Option<Block>,
    pub solver: Block,
}

impl DeepenCandidate {
    fn out(&self, h: Repr) -> Tensor<2> {
        let h = match &self.transformer {
            Some(t) => t.forward(h),
            None => h,
        };
        self.solver.forward(h).into_flat()
    }
}

impl Candidate for DeepenCandidate {
    fn local_log_lik(&self, h: Repr, y: &Target) -> Tensor<2> {
        leaf_log_lik(self.out(h), y)
    }
    fn local_pred(&self, h: Repr, task: Task) -> Tensor<2> {
        leaf_prediction(self.out(h), task)
    }
}

/// Validation (NLL, metric) of the tree with `model` at the leaf, on cached inputs.
pub(super) fn validate_cached<C: Candidate>(
    model: &C,
    valid: &LeafCache,
    metric: &MetricCtx,
    chunk: usize,
) -> (f64, f64) {
    let mut totals = Totals::new(metric);
    for (s, len) in chunks(valid.n, chunk) {
        let b = valid.narrow(s, len);
        let ll = b.combine(model.local_log_lik(b.h.clone(), &b.y));
        let pred = b.combine_pred(model.local_pred(b.h.clone(), metric.task));
        totals.add(ll, pred, &b.y);
    }
    totals.finish()
}
