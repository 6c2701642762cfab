//! The router: the module at every internal node, a small net on the node's
//! representation whose one output is the logit of going left; its sigmoid is the
//! probability of the left child (paper, section 3.1). The sigmoid is applied in the
//! loss (log-sigmoid, `tree/multi_path.rs`), so a router block outputs the logit.
//!
//! A preset's routers (Table 2, with the authors' code where the paper is silent):
//! - `sarcos`, `tabular`: FC(1);
//! - `mnist-*`: conv(k)-n + ReLU + global average pooling + FC(n/2+1) + ReLU + FC(1), a
//!   kernel larger than its input shrunk to the input's size;
//! - `cifar10-*`: 2 x (conv3-n + ReLU) + global average pooling + FC(1).
//!
//! A split's new router starts at random (the paper) or centred (`--router-init
//! centred`: [`centred`]); during growth two optional terms act on its decisions
//! ([`RouterReg`]). A pretrained start copies a CNN's convolution into it
//! (`train/pretrained.rs`).

use burn::module::Param;
use burn::prelude::*;
use burn::tensor::activation;

use crate::modules::{Block, Repr};
use crate::preset::{DEFAULT_WIDTH, Family, Preset};
use crate::spec::{BlockSpec, LayerSpec, Shape};

/// Router logit on a representation, `[B,1]`.
pub fn router_logit(router: &Block, h: Repr) -> Tensor<2> {
    router.forward(h).into_flat()
}

/// A copy of `router` whose last FC layer is rescaled so that, on `h`, its logits have
/// median 0 and standard deviation `spread` (`--router-init centred`: a router that
/// starts by splitting the samples reaching it in half, with decisions far from 0.5).
pub fn centred(router: &Block, h: Repr, spread: f32) -> Block {
    let z = router
        .valid()
        .forward(h)
        .into_flat()
        .into_data()
        .convert::<f32>();
    let mut z: Vec<f32> = z.try_to_vec::<f32>().unwrap_or_default();
    if z.len() < 2 || router.linears.is_empty() {
        return router.clone();
    }
    z.sort_by(|a, b| a.total_cmp(b));
    let median = z[z.len() / 2];
    let mean = z.iter().sum::<f32>() / z.len() as f32;
    let sd = (z.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / z.len() as f32).sqrt();
    let scale = if sd > 1e-6 { spread / sd } else { 1.0 };
    let fresh = |t: Tensor<2>| {
        let ad = t.is_autodiff();
        let v = t.without_autodiff().mul_scalar(scale);
        if ad { v.autodiff() } else { v }
    };
    let mut out = router.clone();
    let last = out.linears.last_mut().expect("checked");
    last.weight = Param::from_tensor(fresh(last.weight.val()));
    last.bias = last.bias.as_ref().map(|b| {
        let b = b.val();
        let ad = b.is_autodiff();
        let v = b.without_autodiff().sub_scalar(median).mul_scalar(scale);
        Param::from_tensor(if ad { v.autodiff() } else { v })
    });
    out
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

impl Preset {
    /// The router for a node whose representation has shape `input`.
    pub fn router(self, input: Shape) -> Option<BlockSpec> {
        let spec = match (self.family(DEFAULT_WIDTH), input) {
            (_, Shape::Flat { d }) => BlockSpec::new(vec![LayerSpec::Linear { d_in: d, d_out: 1 }]),
            (Family::MnistConv { k, router, .. }, Shape::Image { c, h, w }) => {
                let k = k.min(h.min(w));
                let hidden = router / 2 + 1;
                BlockSpec::new(vec![
                    LayerSpec::Conv {
                        c_in: c,
                        c_out: router,
                        k,
                        pad: 0,
                    },
                    LayerSpec::Relu,
                    LayerSpec::Gap,
                    LayerSpec::Linear {
                        d_in: router,
                        d_out: hidden,
                    },
                    LayerSpec::Relu,
                    LayerSpec::Linear {
                        d_in: hidden,
                        d_out: 1,
                    },
                ])
            }
            (Family::CifarConv { router, .. }, Shape::Image { c, .. }) => BlockSpec::new(vec![
                LayerSpec::Conv {
                    c_in: c,
                    c_out: router,
                    k: 3,
                    pad: 1,
                },
                LayerSpec::Relu,
                LayerSpec::Conv {
                    c_in: router,
                    c_out: router,
                    k: 3,
                    pad: 1,
                },
                LayerSpec::Relu,
                LayerSpec::Gap,
                LayerSpec::Linear {
                    d_in: router,
                    d_out: 1,
                },
            ]),
            (Family::Fc { .. }, Shape::Image { .. }) => return None,
        };
        spec.out_shape(input).map(|_| spec)
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

    #[test]
    fn centred_router_splits_its_samples_in_half() {
        let dev = Device::flex();
        // Tanh, not ReLU: with a ReLU a random hidden layer may be dead for many samples,
        // and their equal logits cannot be split at the median.
        let spec = BlockSpec::new(vec![
            LayerSpec::Linear { d_in: 3, d_out: 4 },
            LayerSpec::Tanh,
            LayerSpec::Linear { d_in: 4, d_out: 1 },
        ]);
        let b = Block::init(&spec, &dev);
        let v: Vec<f32> = (0..501 * 3)
            .map(|i| ((i * 7919 + 13) % 1009) as f32 / 504.5 - 1.0)
            .collect();
        let x = Repr::Flat(Tensor::from_data(TensorData::new(v, [501, 3]), &dev));
        let c = centred(&b, x.clone(), 2.0);
        let z: Vec<f32> = c
            .forward(x)
            .into_flat()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        let left = z.iter().filter(|v| **v >= 0.0).count();
        assert!((left as i64 - 251).abs() <= 1, "{left} of 501 go left");
        let mean = z.iter().sum::<f32>() / z.len() as f32;
        let sd = (z.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / z.len() as f32).sqrt();
        assert!((sd - 2.0).abs() < 1e-3, "spread {sd}");
    }
}
