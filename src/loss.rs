//! Leaf likelihoods and the mixture negative log-likelihood, all in log space.

use burn::prelude::*;
use burn::tensor::activation;

pub use crate::ops::logsumexp_rows;
use crate::ops;
use crate::task::Task;
use crate::tree::LeafOutput;

/// Targets of a batch on a device.
#[derive(Clone, Debug)]
pub enum Target {
    /// Class indices `[B,1]`.
    Classes(Tensor<2, Int>),
    /// Standardised regression targets `[B,D]`.
    Values(Tensor<2>),
}

impl Target {
    pub fn select(&self, idx: Tensor<1, Int>) -> Target {
        match self {
            Target::Classes(t) => Target::Classes(t.clone().select(0, idx)),
            Target::Values(t) => Target::Values(t.clone().select(0, idx)),
        }
    }
    pub fn device(&self) -> Device {
        match self {
            Target::Classes(t) => t.device(),
            Target::Values(t) => t.device(),
        }
    }
    /// These targets then `other`'s (of the same kind).
    pub fn cat(self, other: Target) -> Target {
        match (self, other) {
            (Target::Classes(a), Target::Classes(b)) => Target::Classes(Tensor::cat(vec![a, b], 0)),
            (Target::Values(a), Target::Values(b)) => Target::Values(Tensor::cat(vec![a, b], 0)),
            _ => unreachable!("targets of one task"),
        }
    }
    pub fn narrow(&self, start: usize, len: usize) -> Target {
        match self {
            Target::Classes(t) => Target::Classes(t.clone().narrow(0, start, len)),
            Target::Values(t) => Target::Values(t.clone().narrow(0, start, len)),
        }
    }
}

/// log p_leaf(y|x) per sample, `[B,1]`: log-softmax at the true class, or the
/// unit-variance Gaussian log-density of the targets.
pub fn leaf_log_lik(out: Tensor<2>, y: &Target) -> Tensor<2> {
    match y {
        Target::Classes(c) => ops::log_softmax(out, 1).gather(1, c.clone()),
        Target::Values(v) => {
            let d = v.dims()[1] as f64;
            (v.clone() - out)
                .powi_scalar(2)
                .sum_dim(1)
                .mul_scalar(-0.5)
                .sub_scalar(0.5 * d * (2.0 * std::f64::consts::PI).ln())
        }
    }
}

/// Per-sample log of the mixture likelihood, `[B,1]`.
pub fn mixture_log_lik(leaves: &[LeafOutput], y: &Target) -> Tensor<2> {
    let terms: Vec<Tensor<2>> = leaves
        .iter()
        .map(|l| {
            let ll = leaf_log_lik(l.out.clone(), y);
            match &l.log_reach {
                Some(p) => p.clone() + ll,
                None => ll,
            }
        })
        .collect();
    if terms.len() == 1 {
        return terms.into_iter().next().expect("one term");
    }
    logsumexp_rows(Tensor::cat(terms, 1))
}

/// Mean negative log-likelihood of the mixture (the training loss).
pub fn mixture_nll(leaves: &[LeafOutput], y: &Target) -> Tensor<1> {
    mixture_log_lik(leaves, y).mean().neg()
}

/// Multi-path prediction `[B,K]`: class probabilities `sum_l pi_l softmax_l`, or the
/// mixture mean `sum_l pi_l mu_l` (standardised units).
pub fn mixture_prediction(leaves: &[LeafOutput], task: Task) -> Tensor<2> {
    let mut acc: Option<Tensor<2>> = None;
    for l in leaves {
        let p = match task {
            Task::Classification { .. } => activation::softmax(l.out.clone(), 1),
            Task::Regression { .. } => l.out.clone(),
        };
        let w = match &l.log_reach {
            Some(lp) => p * lp.clone().exp(),
            None => p,
        };
        acc = Some(match acc {
            Some(a) => a + w,
            None => w,
        });
    }
    acc.expect("a tree has at least one leaf")
}

/// A leaf's own prediction `[B,K]` (probabilities or means).
pub fn leaf_prediction(out: Tensor<2>, task: Task) -> Tensor<2> {
    match task {
        Task::Classification { .. } => activation::softmax(out, 1),
        Task::Regression { .. } => out,
    }
}
