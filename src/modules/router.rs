//! The router: a small net on a node's representation whose one output is the logit of
//! going left (its layers are the preset's, see [`crate::preset::Preset::router`]), and
//! the two optional terms on a new router's decisions during growth.

use burn::prelude::*;
use burn::tensor::activation;

use super::{Block, Repr};

/// Router logit on a representation, `[B,1]`.
pub fn router_logit(router: &Block, h: Repr) -> Tensor<2> {
    router.forward(h).into_flat()
}

/// Optional terms on a split's new router in the training loss (both 0: the paper).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RouterReg {
    /// Weight of [`balance_penalty`].
    pub balance: f64,
    /// Weight of [`decision_entropy`].
    pub confidence: f64,
}

/// Load-balancing penalty on a router (Frosst & Hinton 2017, "Distilling a neural
/// network into a soft decision tree"): the cross-entropy between a fair coin and the
/// reach-weighted mean of the router's left-probabilities over the batch, minus its
/// minimum `ln 2`. It asks the router to use both children on average without asking
/// any single decision to be unsure, which counters collapse onto one child.
pub fn balance_penalty(z: Tensor<2>, log_reach: Option<&Tensor<2>>) -> Tensor<1> {
    let p = activation::sigmoid(z);
    let (num, den) = match log_reach {
        Some(lr) => {
            let w = lr.clone().exp();
            ((p * w.clone()).sum(), w.sum())
        }
        None => {
            let n = p.dims()[0] as f64;
            let device = p.device();
            (p.sum(), Tensor::<1>::ones([1], &device) * n)
        }
    };
    let a = (num / den).clamp(1e-6, 1.0 - 1e-6);
    (a.clone().log() + (a.neg() + 1.0).log()) * -0.5 - std::f64::consts::LN_2
}

/// Reach-weighted mean entropy (nats) of a router's decisions: low when each sample is
/// sent one way with confidence. With [`balance_penalty`] it makes a router partition
/// the samples it sees (maximising the information its decision carries).
pub fn decision_entropy(z: Tensor<2>, log_reach: Option<&Tensor<2>>) -> Tensor<1> {
    // H(sigmoid(z)) = softplus(z) - z * sigmoid(z), stable for any z.
    let h = activation::softplus(z.clone(), 1.0) - z.clone() * activation::sigmoid(z);
    match log_reach {
        Some(lr) => {
            let w = lr.clone().exp();
            (h * w.clone()).sum() / w.sum()
        }
        None => h.mean(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(v: &[f32], device: &Device) -> Tensor<2> {
        Tensor::from_data(TensorData::new(v.to_vec(), [v.len(), 1]), device)
    }

    fn scalar(t: Tensor<1>) -> f64 {
        t.into_scalar::<f32>() as f64
    }

    #[test]
    fn balance_penalty_is_zero_for_even_use_and_weights_by_reach() {
        let d = Device::flex();
        // Confident but balanced decisions: no penalty.
        let z = col(&[6.0, -6.0, 6.0, -6.0], &d);
        assert!(scalar(balance_penalty(z.clone(), None)).abs() < 1e-3);
        // Everything to the left: large penalty (0.5 * -ln(1 - 0.9975) - ln 2 ~ 2.3).
        let left = col(&[6.0; 4], &d);
        assert!(scalar(balance_penalty(left, None)) > 2.0);
        // The same decisions, but the samples sent right barely reach this node.
        let reach = col(&[0.0, -20.0, 0.0, -20.0], &d);
        assert!(scalar(balance_penalty(z, Some(&reach))) > 2.0);
    }

    #[test]
    fn decision_entropy_is_ln2_when_unsure_and_falls_with_confidence() {
        let d = Device::flex();
        let unsure = scalar(decision_entropy(col(&[0.0, 0.0], &d), None));
        assert!((unsure - std::f64::consts::LN_2).abs() < 1e-6, "{unsure}");
        let sure = scalar(decision_entropy(col(&[12.0, -12.0], &d), None));
        assert!(sure < 1e-3, "{sure}");
        // Its gradient pushes a logit away from 0 (descent on the entropy).
        let ad = Device::flex().autodiff();
        let z = col(&[1.0, -2.0], &ad).require_grad();
        let g = decision_entropy(z.clone(), None).backward();
        let gz: Vec<f32> = z.grad(&g).unwrap().into_data().try_to_vec().unwrap();
        assert!(gz[0] < 0.0 && gz[1] > 0.0, "{gz:?}");
    }
}
