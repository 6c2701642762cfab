//! Three burn ops with ant's own kernels: the 2-D convolution (forward on burn-flex, and
//! its backward pass), 2×2 max-pooling, and the two as one op (the convolution's
//! full-size output never stored on burn-flex: [`super::flex_conv`]).
//!
//! burn computes a convolution's gradients one by one, the weight's generically as a
//! convolution with batch and channels swapped. On burn-flex that ran through its general
//! path, which made it most of the pure-Rust training step (docs/RESULTS.md, "Where a
//! training step goes"). Here, on burn-flex, the convolutions ANTs use (stride 1,
//! symmetric padding) run forward and backward as gemms on the unrolled input
//! ([`super::cpu_conv`]), as PyTorch's CPU convolution without oneDNN does; on LibTorch
//! all three gradients come from its fused `at::convolution_backward` (cuDNN's on a GPU),
//! as in PyTorch's autograd, and the forward pass is burn-tch's.
//!
//! The ops are a burn backend extension with their own backward passes: [`conv2d`],
//! [`conv2d_pool2x2`] and [`max_pool2x2`] are what the modules call.

// burn-tch is deprecated in burn 0.22 but is the GPU backend that builds offline here.
#![cfg_attr(feature = "torch", allow(deprecated))]

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::NodeId;
use burn::backend::ops::ConvOptions;
use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{
    Autodiff, Backend, Dispatch, TensorMetadata, backend_extension, get_or_init_device_settings,
};
use burn::nn::PaddingConfig2d;
use burn::nn::conv::Conv2d;
use burn::prelude::*;
use burn::tensor::IntDType;

use super::dims4;

/// Convolutions with [`ConvGrads`] as their backward pass, and 2×2 max-pooling.
#[backend_extension(Flex, LibTorch: cfg(feature = "torch"), Autodiff)]
pub trait GemmConv: Backend {
    /// The convolution with a bias (burn's forward, bias included).
    fn conv2d_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        Self::conv2d(x, weight, Some(bias), options)
    }

    /// 2×2 max-pooling with stride 2 (the only pooling ANTs use), with the argmax of
    /// each window as burn's `max_pool2d_with_indices` gives it.
    fn max_pool2x2_with_indices(
        x: FloatTensor<Self>,
        int_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let out = Self::max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], false, int_dtype);
        (out.output, out.indices)
    }

    /// 2×2 max-pooling with stride 2, without indices.
    fn max_pool2x2(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], false)
    }

    /// The convolution with a bias then 2×2 max-pooling, with where each window's
    /// maximum came from in a form only the backend's
    /// [`ConvGrads::conv2d_pool2x2_grads`] reads (here burn's index in the plane).
    fn conv2d_bias_pool2x2_with_indices(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        options: ConvOptions<2>,
        int_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        Self::max_pool2x2_with_indices(Self::conv2d_bias(x, weight, bias, options), int_dtype)
    }

    /// The convolution with a bias then 2×2 max-pooling, without indices.
    fn conv2d_bias_pool2x2(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        Self::max_pool2x2(Self::conv2d_bias(x, weight, bias, options))
    }
}

/// The backward pass of [`GemmConv::conv2d_bias`], all three gradients in one call (a
/// plain trait beside the extension: the extension's methods cannot return `Option`s).
pub trait ConvGrads: GemmConv {
    /// The gradients of [`GemmConv::conv2d_bias`] for the output's gradient `grad`: the
    /// input's, the weight's and the bias's, each only where `need` asks for it.
    fn conv2d_grads(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        options: ConvOptions<2>,
        need: [bool; 3],
    ) -> [Option<FloatTensor<Self>>; 3] {
        separate_grads::<Self>(x, weight, bias, grad, options, need)
    }

    /// The gradients of [`GemmConv::conv2d_bias_pool2x2_with_indices`] for `pooled`: the
    /// pooled output's gradient and the indices that op returned.
    fn conv2d_pool2x2_grads(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        pooled: (FloatTensor<Self>, IntTensor<Self>),
        options: ConvOptions<2>,
        need: [bool; 3],
    ) -> [Option<FloatTensor<Self>>; 3] {
        unpooled_grads::<Self>(x, weight, bias, pooled, options, need)
    }
}

/// The pooling's gradient by burn's backward pass (onto zeros of the convolution's
/// output shape: only the shape is read), then the convolution's three.
pub(super) fn unpooled_grads<B: ConvGrads>(
    x: FloatTensor<B>,
    weight: FloatTensor<B>,
    bias: FloatTensor<B>,
    (grad, indices): (FloatTensor<B>, IntTensor<B>),
    options: ConvOptions<2>,
    need: [bool; 3],
) -> [Option<FloatTensor<B>>; 3] {
    let ([n, _, h, w], [o, _, kh, kw]) = (dims4(&x.shape()), dims4(&weight.shape()));
    let side = |len: usize, k: usize, i: usize| {
        let (begin, end) = options.padding[i];
        (len + begin + end - options.dilation[i] * (k - 1) - 1) / options.stride[i] + 1
    };
    let shape = burn::tensor::Shape::new([n, o, side(h, kh, 0), side(w, kw, 1)]);
    let out = B::float_zeros(shape, &grad.device(), grad.dtype().into());
    let g = B::max_pool2d_with_indices_backward(out, [2, 2], [2, 2], [0, 0], [1, 1], false, grad, indices);
    B::conv2d_grads(x, weight, bias, g.x_grad, options, need)
}

/// The three gradients one by one, burn's way: the input's by a transposed convolution,
/// the weight's generically, the bias's by a sum.
pub(super) fn separate_grads<B: GemmConv>(
    x: FloatTensor<B>,
    weight: FloatTensor<B>,
    bias: FloatTensor<B>,
    grad: FloatTensor<B>,
    options: ConvOptions<2>,
    [need_x, need_w, need_b]: [bool; 3],
) -> [Option<FloatTensor<B>>; 3] {
    let gx = need_x
        .then(|| B::conv2d_x_backward(x.clone(), weight.clone(), grad.clone(), options.clone()));
    let gw = need_w.then(|| B::conv2d_weight_backward(x.clone(), weight, grad.clone(), options));
    let gb = need_b.then(|| B::conv2d_bias_backward(x, bias, grad));
    [gx, gw, gb]
}

#[cfg(feature = "torch")]
impl GemmConv for burn::backend::LibTorch {}

#[cfg(feature = "torch")]
impl ConvGrads for burn::backend::LibTorch {
    fn conv2d_grads(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        options: ConvOptions<2>,
        need: [bool; 3],
    ) -> [Option<FloatTensor<Self>>; 3] {
        // `ANT_CONV_BACKWARD=burn` keeps burn-tch's backward pass, to compare (read once:
        // this runs for every convolution of every step).
        static BURNS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let burns = *BURNS.get_or_init(crate::env::conv_backward_burn);
        let fused = !options.is_asymmetric() && !burns;
        match fused {
            true => super::libtorch::conv2d_backward(&x, &weight, &grad, &options, need),
            false => separate_grads::<Self>(x, weight, bias, grad, options, need),
        }
    }
}

impl<B: ConvGrads, C: CheckpointStrategy> GemmConv for Autodiff<B, C> {
    fn conv2d_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct Conv2dBias;

        impl<B: ConvGrads> Backward<B, 3> for Conv2dBias {
            type State = (NodeId, NodeId, NodeId, ConvOptions<2>);

            fn backward(
                self,
                ops: Ops<Self::State, 3>,
                grads: &mut Gradients,
                checkpointer: &mut Checkpointer,
            ) {
                let [node_x, node_weight, node_bias] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, weight_state, bias_state, options) = ops.state;
                let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(x_state);
                let weight =
                    checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(weight_state);
                let bias = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(bias_state);
                let ids = [node_x, node_weight, node_bias].map(|node| node.map(|n| n.id));
                let need = ids.map(|id| id.is_some());
                register::<B>(grads, ids, B::conv2d_grads(x, weight, bias, grad, options, need));
            }
        }

        match Conv2dBias
            .prepare::<C>([x.node(), weight.node(), bias.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let x_state = prep.checkpoint(&x);
                let weight_state = prep.checkpoint(&weight);
                let bias_state = prep.checkpoint(&bias);
                prep.finish(
                    (x_state, weight_state, bias_state, options.clone()),
                    B::conv2d_bias(
                        x.into_primitive(),
                        weight.into_primitive(),
                        bias.into_primitive(),
                        options,
                    ),
                )
            }
            OpsKind::UnTracked(prep) => prep.finish(B::conv2d_bias(
                x.into_primitive(),
                weight.into_primitive(),
                bias.into_primitive(),
                options,
            )),
        }
    }

    fn conv2d_bias_pool2x2(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct Conv2dBiasPool2x2;

        impl<B: ConvGrads> Backward<B, 3> for Conv2dBiasPool2x2 {
            type State = (NodeId, NodeId, NodeId, IntTensor<B>, ConvOptions<2>);

            fn backward(
                self,
                ops: Ops<Self::State, 3>,
                grads: &mut Gradients,
                checkpointer: &mut Checkpointer,
            ) {
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, weight_state, bias_state, indices, options) = ops.state;
                let [x, weight, bias] = [x_state, weight_state, bias_state]
                    .map(|s| checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(s));
                let ids = ops.parents.map(|node| node.map(|n| n.id));
                let need = ids.map(|id| id.is_some());
                let g = B::conv2d_pool2x2_grads(x, weight, bias, (grad, indices), options, need);
                register::<B>(grads, ids, g);
            }
        }

        match Conv2dBiasPool2x2
            .prepare::<C>([x.node(), weight.node(), bias.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let states = [&x, &weight, &bias].map(|t| prep.checkpoint(t));
                let settings = get_or_init_device_settings::<B>(&x.primitive().device());
                let [x, weight, bias] = [x, weight, bias].map(|t| t.into_primitive());
                let (out, indices) =
                    B::conv2d_bias_pool2x2_with_indices(x, weight, bias, options.clone(), settings.int_dtype);
                prep.finish((states[0], states[1], states[2], indices, options), out)
            }
            OpsKind::UnTracked(prep) => {
                let [x, weight, bias] = [x, weight, bias].map(|t| t.into_primitive());
                prep.finish(B::conv2d_bias_pool2x2(x, weight, bias, options))
            }
        }
    }

    fn max_pool2x2(x: FloatTensor<Self>) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct MaxPool2x2;

        impl<B: Backend> Backward<B, 1> for MaxPool2x2 {
            type State = (NodeId, IntTensor<B>);

            fn backward(
                self,
                ops: Ops<Self::State, 1>,
                grads: &mut Gradients,
                checkpointer: &mut Checkpointer,
            ) {
                let [node_parent] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, indices) = ops.state;
                let x = checkpointer.retrieve_node_output(x_state);
                if let Some(node) = node_parent {
                    let g = B::max_pool2d_with_indices_backward(
                        x,
                        [2, 2],
                        [2, 2],
                        [0, 0],
                        [1, 1],
                        false,
                        grad,
                        indices,
                    );
                    grads.register::<B>(node.id, g.x_grad);
                }
            }
        }

        match MaxPool2x2.prepare::<C>([x.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let x_state = prep.checkpoint(&x);
                let settings = get_or_init_device_settings::<B>(&x.primitive().device());
                let (out, indices) = B::max_pool2x2_with_indices(x.into_primitive(), settings.int_dtype);
                prep.finish((x_state, indices), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::max_pool2x2(x.into_primitive())),
        }
    }
}

/// Each gradient given registered for its parent, where that parent is tracked.
fn register<B: Backend>(grads: &mut Gradients, ids: [Option<NodeId>; 3], g: [Option<FloatTensor<B>>; 3]) {
    for (id, g) in ids.into_iter().zip(g) {
        if let (Some(id), Some(g)) = (id, g) {
            grads.register::<B>(id, g)
        }
    }
}

/// 2×2 max-pooling with stride 2 (burn's, with burn-flex's kernel replaced by one made
/// for this window: it was 1.5× PyTorch's forward).
pub fn max_pool2x2(x: Tensor<4>) -> Tensor<4> {
    Tensor::<4>::from_dispatch(<Dispatch as GemmConv>::max_pool2x2(x.into_dispatch()))
}

/// `conv`'s output for `x`: burn-nn's `Conv2d::forward`, with the weight gradient of
/// [`GemmConv`].
pub fn conv2d(conv: &Conv2d, x: Tensor<4>) -> Tensor<4> {
    // ANTs' convolutions all have a bias and explicit padding; others keep burn's own.
    let Some((options, b)) = options_and_bias(conv) else {
        return conv.forward(x);
    };
    let (x, w, b) = (x.into_dispatch(), conv.weight.val().into_dispatch(), b.into_dispatch());
    Tensor::<4>::from_dispatch(<Dispatch as GemmConv>::conv2d_bias(x, w, b, options))
}

/// `conv` then 2×2 max-pooling with stride 2 as one op ([`GemmConv::conv2d_bias_pool2x2`]):
/// the same values and gradients as [`max_pool2x2`] of [`conv2d`], without the
/// convolution's full-size output in memory on the CPU. `ANT_CONV_POOL=separate` runs
/// the two ops instead, to compare.
pub fn conv2d_pool2x2(conv: &Conv2d, x: Tensor<4>) -> Tensor<4> {
    static SEPARATE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let separate = *SEPARATE.get_or_init(crate::env::conv_pool_separate);
    match options_and_bias(conv).filter(|_| !separate) {
        Some((options, b)) => {
            let (x, w, b) = (x.into_dispatch(), conv.weight.val().into_dispatch(), b.into_dispatch());
            Tensor::<4>::from_dispatch(<Dispatch as GemmConv>::conv2d_bias_pool2x2(x, w, b, options))
        }
        None => max_pool2x2(conv2d(conv, x)),
    }
}

/// `conv`'s options and bias where [`GemmConv`] computes it: a bias, and padding given
/// (burn works `Same` out from the input).
fn options_and_bias(conv: &Conv2d) -> Option<(ConvOptions<2>, Tensor<1>)> {
    let ((top, bottom), (left, right)) = match conv.padding {
        PaddingConfig2d::Valid => ((0, 0), (0, 0)),
        PaddingConfig2d::Explicit(top, left, bottom, right) => ((top, bottom), (left, right)),
        PaddingConfig2d::Same => return None,
    };
    let padding = [(top, bottom), (left, right)];
    let options = ConvOptions::new_with_padding(conv.stride, padding, conv.dilation, conv.groups);
    Some((options, conv.bias.as_ref()?.val()))
}

#[cfg(test)]
mod tests {
    use burn::nn::PaddingConfig2d;
    use burn::nn::conv::{Conv2d, Conv2dConfig};
    use burn::prelude::*;

    use burn::nn::pool::MaxPool2dConfig;

    use super::{conv2d, max_pool2x2};
    use crate::modules::to_vec;

    fn input(shape: [usize; 4], device: &Device) -> Tensor<4> {
        let n: usize = shape.iter().product();
        let v = (0..n).map(|i| ((i * 37 + 11) % 23) as f32 / 11.0 - 1.0).collect();
        let x = Tensor::from_data(TensorData::new(v, shape), device);
        if device.is_autodiff() { x.require_grad() } else { x }
    }

    /// `got` is within `tol` times each value's sum of product magnitudes from the
    /// exact value.
    fn close(got: &[f32], exact: &(Vec<f64>, Vec<f64>), tol: f64, what: &str) {
        assert_eq!(got.len(), exact.0.len(), "{what}");
        for (i, ((&g, &e), &m)) in got.iter().zip(&exact.0).zip(&exact.1).enumerate() {
            let err = (g as f64 - e).abs();
            assert!(err <= tol * m + 1e-12, "{what}[{i}]: {g} vs exactly {e} (products' magnitudes {m})");
        }
    }

    /// Output and gradients (input, weight, bias), ours and burn's `Conv2d`'s, equal the
    /// exact values up to rounding, for padded, strided and dilated kernels and a batch
    /// split into several chunks.
    #[test]
    fn ours_and_burns_convolutions_are_exact_up_to_rounding() {
        for device in devices() {
            convolution_cases(&device);
        }
    }

    /// burn-flex, and LibTorch's CPU kernels in a build with `torch`.
    fn devices() -> Vec<Device> {
        #[allow(unused_mut)]
        let mut d = vec![Device::flex().autodiff()];
        #[cfg(feature = "torch")]
        #[allow(deprecated)]
        d.extend(torch_devices().into_iter().map(|t| t.autodiff()));
        d
    }

    /// LibTorch on the CPU, and on GPU 0 when `ANT_TEST_CUDA` is set (GPU machines:
    /// `scripts/gpu-prebuilt.sh … checks`).
    #[cfg(feature = "torch")]
    #[allow(deprecated)]
    fn torch_devices() -> Vec<Device> {
        let mut d = vec![Device::libtorch()];
        if crate::env::test_cuda() {
            d.push(Device::libtorch_cuda(0));
        }
        d
    }

    fn convolution_cases(device: &Device) {
        let device = device.clone();
        let cases = [
            // (input shape, c_out, kernel, stride, dilation, padding)
            ([3, 2, 9, 8], 4, [3, 3], [1, 1], [1, 1], 0),
            ([2, 3, 10, 11], 5, [5, 5], [1, 1], [1, 1], 2),
            ([2, 2, 11, 9], 3, [3, 2], [2, 3], [1, 1], 1),
            ([2, 1, 12, 12], 2, [3, 3], [1, 1], [2, 2], 1),
            // 136,000 unrolled floats a sample: a chunk each, 19 in a group.
            ([300, 40, 14, 14], 3, [5, 5], [1, 1], [1, 1], 0),
        ];
        for (shape, c_out, k, stride, dilation, pad) in cases {
            let conv: Conv2d = Conv2dConfig::new([shape[1], c_out], k)
                .with_stride(stride)
                .with_dilation(dilation)
                .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
                .init(&device);
            let what = format!("{device:?} {shape:?} k{k:?} s{stride:?} d{dilation:?} p{pad}");
            let run = |f: &dyn Fn(Tensor<4>) -> Tensor<4>| {
                let x = input(shape, &device);
                let y = f(x.clone());
                let out = to_vec(y.clone());
                let g = (y.clone() * y).sum().backward();
                let grad = |t: Option<Tensor<4>>| to_vec(t.expect("gradient"));
                (
                    out,
                    grad(x.grad(&g)),
                    grad(conv.weight.val().grad(&g)),
                    to_vec(conv.bias.as_ref().unwrap().val().grad(&g).unwrap()),
                )
            };
            let case = (shape, c_out, k, stride, dilation, [pad, pad]);
            // burn-flex: our kernels' blocked sums, measured within 4.4e-7 (a few f32
            // roundings), where a wrong index misses by a whole product. LibTorch: both
            // sides are its kernels, in orders we do not choose (its weight gradient
            // differed from the fused one by 1.3e-4 on CI's CPU): the bound that any order
            // of 30,000 f32 additions keeps (n·2⁻²⁴ ≈ 1.8e-3), on a GPU with TF32's rounding
            // of the factors (2⁻¹⁰) added.
            let tol = match crate::ops::libtorch_is_cuda(&device) {
                None => 2e-6,
                Some(false) => 2e-3,
                Some(true) => 3e-3,
            };
            let x = to_vec(input(shape, &device));
            let w = to_vec(conv.weight.val());
            let b = to_vec(conv.bias.as_ref().unwrap().val());
            let ours = |x| conv2d(&conv, x);
            let burns = |x| conv.forward(x);
            let impls: [(&str, &dyn Fn(Tensor<4>) -> Tensor<4>); 2] = [("ours", &ours), ("burn's", &burns)];
            for (who, f) in impls {
                let (out, gx, gw, gb) = run(f);
                let dy: Vec<f32> = out.iter().map(|y| 2.0 * y).collect();
                let e = crate::ops::exact_conv(case, &x, &w, &b, &dy);
                close(&out, &e.out, tol, &format!("{who} output {what}"));
                close(&gx, &e.x, tol, &format!("{who} input gradient {what}"));
                close(&gw, &e.w, tol, &format!("{who} weight gradient {what}"));
                close(&gb, &e.b, tol, &format!("{who} bias gradient {what}"));
            }
        }
    }

    /// The convolution pooled in one op, then ReLU, gives the output and the input's,
    /// weight's and bias's gradients of the convolution, ReLU and pooling one after the
    /// other, bit for bit: with and without autodiff, padded or not, odd outputs (an
    /// edge dropped), an input that needs no gradient (the data's layer), and an output
    /// too small to pool in one op (burn's ops then).
    #[test]
    fn the_pooled_convolution_is_the_convolution_relu_and_pooling() {
        use crate::ops::{conv2d_pool2x2, relu};
        let bits = |t: Tensor<4>| to_vec(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let bits1 = |t: Tensor<1>| to_vec(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        #[allow(unused_mut)]
        let mut devices = vec![Device::flex().autodiff(), Device::flex()];
        #[cfg(feature = "torch")]
        #[allow(deprecated)]
        devices.extend(torch_devices().into_iter().flat_map(|t| [t.clone().autodiff(), t]));
        // (input shape, c_out, kernel, padding, input needs a gradient)
        let cases = [
            ([37, 1, 28, 28], 6, 5, 0, false),
            ([5, 3, 9, 8], 4, 3, 1, true),
            ([3, 2, 12, 11], 5, 4, 2, true),
            ([2, 2, 3, 3], 3, 3, 0, true),
        ];
        for device in devices {
            for (shape, c_out, k, pad, grad_x) in cases {
                // LibTorch refuses to pool a 1x1 output at all.
                if shape[2] + 2 * pad - k < 2 && crate::ops::libtorch_is_cuda(&device).is_some() {
                    continue;
                }
                let conv: Conv2d = Conv2dConfig::new([shape[1], c_out], [k, k])
                    .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
                    .init(&device);
                let what = format!("{device:?} {shape:?} k{k} p{pad}");
                let run = |f: &dyn Fn(Tensor<4>) -> Tensor<4>| {
                    let x = input(shape, &device);
                    let x = if grad_x { x } else { Tensor::from_data(x.into_data(), &device) };
                    let y = relu(f(x.clone()));
                    let out = bits(y.clone());
                    if !device.is_autodiff() {
                        return (out, None);
                    }
                    let g = (y.clone() * y).sum().backward();
                    let grads = (
                        x.grad(&g).map(&bits),
                        bits(conv.weight.val().grad(&g).unwrap()),
                        bits1(conv.bias.as_ref().unwrap().val().grad(&g).unwrap()),
                    );
                    (out, Some(grads))
                };
                let fused = run(&|x| conv2d_pool2x2(&conv, x));
                let separate = run(&|x| max_pool2x2(conv2d(&conv, x)));
                assert_eq!(fused.0, separate.0, "output {what}");
                assert_eq!(fused.1, separate.1, "gradients {what}");
                if let Some((gx, ..)) = &fused.1 {
                    assert_eq!(gx.is_some(), grad_x, "input gradient {what}");
                }
            }
        }
    }

    /// Pooling's output and input gradient are burn's bit for bit, ties and odd edges
    /// included, with and without autodiff.
    #[test]
    fn pooling_matches_burns() {
        for device in [Device::flex().autodiff(), Device::flex()] {
            // Three values, most windows holding a tie; then a fourth, NaN, in about
            // half of the windows (compared bit for bit).
            for (shape, values) in [([2, 3, 8, 8], 3), ([3, 2, 7, 9], 3), ([1, 1, 2, 2], 3), ([2, 3, 8, 10], 4)] {
                let burns_pool = MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init();
                let run = |f: &dyn Fn(Tensor<4>) -> Tensor<4>| {
                    let n: usize = shape.iter().product();
                    let value = |k: usize| if k == 3 { f32::NAN } else { k as f32 };
                    let v = (0..n).map(|i| value((i * i / 3 + i / 5) % values)).collect();
                    let x = Tensor::<4>::from_data(TensorData::new(v, shape), &device);
                    let x = if device.is_autodiff() { x.require_grad() } else { x };
                    let y = f(x.clone());
                    let out: Vec<u32> = to_vec(y.clone()).iter().map(|v| v.to_bits()).collect();
                    let grad = device.is_autodiff().then(|| {
                        let w = Tensor::<4>::from_data(
                            TensorData::new(
                                (0..y.shape().num_elements()).map(|i| i as f32).collect(),
                                y.dims(),
                            ),
                            &device,
                        );
                        to_vec(x.grad(&(y * w).sum().backward()).unwrap())
                    });
                    (out, grad)
                };
                assert_eq!(run(&max_pool2x2), run(&|x| burns_pool.forward(x)), "{shape:?}");
            }
        }
    }

    /// LibTorch's fused backward pass gives burn-tch's three gradients, for every subset
    /// of them, with strides, padding and several channels.
    #[cfg(feature = "torch")]
    #[test]
    #[allow(deprecated)]
    fn libtorch_fused_gradients_match_burns() {
        use burn::backend::LibTorch;
        use burn::backend::libtorch::TchTensor;
        use burn::backend::ops::ConvOptions;

        fn unwrap<const D: usize>(t: Tensor<D>) -> TchTensor {
            match t.into_dispatch().kind {
                burn::backend::DispatchTensorKind::LibTorch(p) => p.float(),
                _ => unreachable!("a LibTorch tensor"),
            }
        }
        let v = |t: TchTensor| {
            Vec::<f32>::try_from(t.tensor.flatten(0, -1).to_device(tch::Device::Cpu)).expect("f32")
        };
        // (input, weight, output, stride, padding)
        let cases = [
            ([3, 2, 9, 8], [4, 2, 3, 3], [3, 4, 7, 6], [1, 1], 0),
            ([2, 3, 11, 10], [5, 3, 5, 5], [2, 5, 6, 10], [2, 1], 2),
        ];
        for (device, (xs, ws, gs, stride, pad)) in torch_devices()
            .into_iter()
            .flat_map(|d| cases.map(|c| (d.clone(), c)))
        {
            let options = ConvOptions::new(stride, [pad, pad], [1, 1], 1);
            let x = input(xs, &device);
            let w = input(ws, &device);
            let g = input(gs, &device) * 0.5 + 1.0;
            let bias = unwrap(Tensor::<1>::zeros([ws[0]], &device));
            for need in [[true; 3], [false, true, true], [true, false, false], [false, true, false]]
            {
                let (x, w, g) = (unwrap(x.clone()), unwrap(w.clone()), unwrap(g.clone()));
                let fused = super::super::libtorch::conv2d_backward(&x, &w, &g, &options, need);
                let burns =
                    super::separate_grads::<LibTorch>(x, w, bias.clone(), g, options.clone(), need);
                for (k, (f, b)) in fused.into_iter().zip(burns).enumerate() {
                    match (f, b) {
                        (Some(f), Some(b)) => {
                            let what = format!("{xs:?} {need:?} {k}");
                            crate::ops::assert_close(&v(f), &v(b), 1e-4, &what)
                        }
                        (None, None) => {}
                        _ => panic!("{xs:?} {need:?}: gradient {k} given by one side only"),
                    }
                }
            }
        }
    }

    /// burn-flex's gradients by [`super::cpu_conv`] against burn's one by one, for each
    /// subset of them (the first convolution of a tree needs no input gradient), on
    /// padded and non-square kernels and batches split into several chunks and groups;
    /// and burn's own where `unrolled` does not apply (strides, dilation).
    #[test]
    fn unrolled_gradients_match_burns() {
        use burn::backend::Flex;
        use burn::backend::flex::FlexTensor;
                use burn::backend::ops::ConvOptions;

        use super::ConvGrads;

        let data = |shape: [usize; 4], k: usize| {
            let n: usize = shape.iter().product();
            let v = (0..n).map(|i| ((i * k + 11) % 23) as f32 / 11.0 - 1.0).collect();
            FlexTensor::from_data(TensorData::new(v, shape))
        };
        let v = |t: Option<FlexTensor>| t.map(|t| t.into_data().try_to_vec::<f32>().unwrap());
        // (input, weight, output, stride, padding, dilation)
        let cases = [
            ([3, 2, 9, 8], [4, 2, 3, 3], [3, 4, 7, 6], [1, 1], [0, 0], [1, 1]),
            ([2, 3, 10, 11], [5, 3, 5, 5], [2, 5, 10, 11], [1, 1], [2, 2], [1, 1]),
            ([3, 2, 6, 9], [3, 2, 2, 5], [3, 3, 7, 7], [1, 1], [1, 1], [1, 1]),
            // 13 samples a chunk: 11 chunks, a group each, the last one short; unrolled
            // by rows (4 channels of 5-wide kernel rows).
            ([131, 4, 12, 12], [6, 4, 5, 5], [131, 6, 12, 12], [1, 1], [2, 2], [1, 1]),
            // By rows, a kernel neither square nor padded alike on both axes.
            ([3, 8, 7, 10], [3, 8, 3, 4], [3, 3, 7, 11], [1, 1], [1, 2], [1, 1]),
            ([2, 2, 11, 9], [3, 2, 3, 2], [2, 3, 6, 4], [2, 3], [1, 1], [1, 1]),
            ([2, 1, 12, 12], [2, 1, 3, 3], [2, 2, 10, 10], [1, 1], [1, 1], [2, 2]),
        ];
        for (xs, ws, gs, stride, pad, dilation) in cases {
            let options = ConvOptions::new(stride, pad, dilation, 1);
            let (x, w, g, b) = (data(xs, 37), data(ws, 5), data(gs, 13), data([1, 1, 1, ws[0]], 3));
            let b = b.reshape(burn::tensor::Shape::new([ws[0]]));
            for need in [[true; 3], [false, true, true], [true, false, false], [false, false, true]] {
                let args = (x.clone(), w.clone(), b.clone(), g.clone(), options.clone());
                let ours = Flex::conv2d_grads(args.0, args.1, args.2, args.3, args.4, need);
                let burns = super::separate_grads::<Flex>(
                    x.clone(),
                    w.clone(),
                    b.clone(),
                    g.clone(),
                    options.clone(),
                    need,
                );
                for (k, (o, b)) in ours.into_iter().zip(burns).enumerate() {
                    let what = format!("{xs:?} {ws:?} {need:?} gradient {k}");
                    match (v(o), v(b)) {
                        (Some(o), Some(b)) => crate::ops::assert_close(&o, &b, 1e-4, &what),
                        (None, None) => {}
                        _ => panic!("{what}: given by one side only"),
                    }
                }
            }
        }
    }
}
