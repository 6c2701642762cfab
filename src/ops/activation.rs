//! Five ops whose backward pass burn builds from primitive ops, given LibTorch's one
//! fused kernel each on `torch` and `cuda`: ReLU, tanh, log-sigmoid, log-softmax and a
//! row's log-sum-exp.
//!
//! burn's autodiff differentiates ReLU by a comparison and a masked fill, tanh (which
//! `cpu` computes from a sigmoid) by three ops, log-sigmoid by about ten elementwise
//! ops, and log-softmax and log-sum-exp (which it composes from a max, an exp, a sum and
//! a log) through each of those; PyTorch runs one kernel forward and one backward
//! (`threshold_backward`, `_log_softmax_backward_data`, ...). On a GPU each op is a
//! kernel launch. Counted on the CPU with `scripts/aten_counts.py`
//! (docs/RESULTS.md). On `cpu` (burn-flex) they are burn's own ops, but for tanh, which
//! burn-flex computes element by element with libm: there it is a kernel of its own,
//! forward (Eigen's rational approximation, which vectorises) and backward.

// burn-tch is deprecated in burn 0.22 but is the GPU backend that builds offline here.
#![cfg_attr(feature = "torch", allow(deprecated))]

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::FlexTensor;
use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::prelude::*;
use burn::tensor::{DType, activation};
use rayon::prelude::*;

use super::{dims4, lane_sum};

/// The forward ops, as one burn backend extension (their defaults are burn's).
#[backend_extension(Flex, LibTorch: cfg(feature = "torch"), Autodiff)]
pub trait FusedOps: Backend {
    /// `max(x, 0)`.
    fn fused_relu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::relu(x)
    }

    /// `tanh(x)`.
    fn fused_tanh(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::float_tanh(x)
    }

    /// `log σ(x)`.
    fn fused_log_sigmoid(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::log_sigmoid(x)
    }

    /// Log-softmax along `dim`.
    fn fused_log_softmax(x: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        Self::log_softmax(x, dim)
    }

    /// The mean over each plane of `max(x, 0)`: `[B,C,H,W]` -> `[B,C]` (a router's
    /// ReLU and global average pooling).
    fn fused_relu_gap(x: FloatTensor<Self>) -> FloatTensor<Self> {
        relu_gap_by_ops::<Self>(x)
    }

    /// `log Σ exp(x)` along `dim`, kept as a dimension of size 1 (max-shifted).
    fn fused_logsumexp(x: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        let m = Self::float_max_dim(x.clone(), dim);
        let e = Self::float_exp(Self::float_sub(x, m.clone()));
        Self::float_add(Self::float_log(Self::float_sum_dim(e, dim)), m)
    }
}

/// The backward passes of [`FusedOps`] (a plain trait beside the extension: only the
/// autodiff backend calls them, on the backend it wraps).
pub trait FusedGrads: FusedOps {
    /// ReLU's input gradient, from its output.
    fn relu_grad(output: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::relu_backward(output, grad)
    }

    /// tanh's input gradient, from its output: `g · (1 − out²)`.
    fn tanh_grad(output: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        tanh_grad_by_ops::<Self>(output, grad)
    }

    /// Log-sigmoid's input gradient, from its input.
    fn log_sigmoid_grad(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::log_sigmoid_backward(x, grad)
    }

    /// Log-softmax's input gradient, from its output: `g − exp(out) · Σ g`.
    fn log_softmax_grad(
        output: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        dim: usize,
    ) -> FloatTensor<Self> {
        let total = Self::float_sum_dim(grad.clone(), dim);
        Self::float_sub(grad, Self::float_mul(Self::float_exp(output), total))
    }

    /// The input gradient of [`FusedOps::fused_relu_gap`], from its input: each plane's
    /// `g / (H·W)` where `x > 0`, else 0.
    fn relu_gap_grad(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        relu_gap_grad_by_ops::<Self>(x, grad)
    }

    /// Log-sum-exp's input gradient, from its input and output: `g · exp(x − out)`.
    fn logsumexp_grad(
        x: FloatTensor<Self>,
        output: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::float_mul(grad, Self::float_exp(Self::float_sub(x, output)))
    }
}

impl FusedOps for Flex {
    fn fused_relu_gap(x: FlexTensor) -> FlexTensor {
        let [b, c, h, w] = dims4(x.layout().shape());
        if x.dtype() != DType::F32 {
            return relu_gap_by_ops::<Flex>(x);
        }
        let x = x.to_contiguous();
        let l = h * w;
        let planes = x.as_slice::<f32>().expect("f32").par_chunks(l);
        let planes = planes.with_min_len(planes_per_task(l));
        let out: Vec<f32> = planes.map(|p| lane_sum(p, |v| v.max(0.0)) / l as f32).collect();
        FlexTensor::from_data(TensorData::new(out, [b, c]))
    }

    fn fused_tanh(x: FlexTensor) -> FlexTensor {
        match x.dtype() {
            DType::F32 => flex_map(&[&x], |[v]| tanh_f32(v)),
            _ => Flex::float_tanh(x),
        }
    }
}

impl FusedGrads for Flex {
    fn relu_gap_grad(x: FlexTensor, grad: FlexTensor) -> FlexTensor {
        let shape = x.layout().shape().clone();
        let [b, c, h, w] = dims4(&shape);
        if x.dtype() != DType::F32 || grad.dtype() != DType::F32 {
            return relu_gap_grad_by_ops::<Flex>(x, grad);
        }
        let (x, grad) = (x.to_contiguous(), grad.to_contiguous());
        let (xs, gs) = (x.as_slice::<f32>().expect("f32"), grad.as_slice::<f32>().expect("f32"));
        let l = h * w;
        let mut out = vec![0f32; b * c * l];
        let planes = out.par_chunks_mut(l).zip(xs.par_chunks(l)).zip(gs.par_iter());
        planes.with_min_len(planes_per_task(l)).for_each(|((o, x), g)| {
            let g = g / l as f32;
            for (o, x) in o.iter_mut().zip(x) {
                *o = if *x > 0.0 { g } else { 0.0 };
            }
        });
        FlexTensor::from_data(TensorData::new(out, shape))
    }

    fn tanh_grad(output: FlexTensor, grad: FlexTensor) -> FlexTensor {
        let same = output.layout().shape() == grad.layout().shape();
        match (output.dtype(), grad.dtype(), same) {
            (DType::F32, DType::F32, true) => flex_map(&[&output, &grad], |[o, g]| g * (1.0 - o * o)),
            _ => tanh_grad_by_ops::<Flex>(output, grad),
        }
    }
}

/// [`FusedOps::fused_relu_gap`] by a backend's ops.
fn relu_gap_by_ops<B: Backend>(x: FloatTensor<B>) -> FloatTensor<B> {
    let [b, c, h, w] = dims4(&x.shape());
    let flat = B::float_reshape(B::relu(x), Shape::new([b, c, h * w]));
    let sum = B::float_reshape(B::float_sum_dim(flat, 2), Shape::new([b, c]));
    B::float_div_scalar(sum, ((h * w) as f32).into())
}

/// [`FusedGrads::relu_gap_grad`] by a backend's ops.
fn relu_gap_grad_by_ops<B: Backend>(x: FloatTensor<B>, grad: FloatTensor<B>) -> FloatTensor<B> {
    let shape = x.shape();
    let [b, c, h, w] = dims4(&shape);
    let g = B::float_div_scalar(grad, ((h * w) as f32).into());
    let g = B::float_expand(B::float_reshape(g, Shape::new([b, c, 1, 1])), shape);
    B::relu_backward(B::relu(x), g)
}

/// Planes of `l` values per parallel task: about 16K values (a thread woken for fewer
/// costs more than it saves: a router's 8x8 planes are 20,480 at batch 512).
fn planes_per_task(l: usize) -> usize {
    (1 << 14) / l.max(1) + 1
}

/// `g · (1 − out²)` by a backend's elementwise ops.
fn tanh_grad_by_ops<B: Backend>(output: FloatTensor<B>, grad: FloatTensor<B>) -> FloatTensor<B> {
    let sq = B::float_mul(output.clone(), output);
    B::float_mul(grad, B::float_add_scalar(B::float_neg(sq), 1.0.into()))
}

/// `tanh(x)` for f32 within 4e-7 of the exact value (5 ulp near ±1): Eigen's rational
/// approximation (as PyTorch's and onnxruntime's vectorised tanh), odd polynomials of
/// degree 13 over 6, on `x` clamped where tanh rounds to ±1. Plain arithmetic, so the
/// loops around it vectorise; burn-flex's tanh calls libm per element (W1's forward:
/// 0.43 ms against PyTorch's 0.28 at batch 512, as `2σ(2x) − 1`).
#[inline(always)]
fn tanh_f32(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.760_768_5e-16,
        2.000_188e-13,
        -8.604_672e-11,
        5.122_297e-8,
        1.485_722_4e-5,
        6.372_619e-4,
        4.893_524_6e-3,
    ];
    const BETA: [f32; 4] = [1.198_258_4e-6, 1.185_347e-4, 2.268_434_7e-3, 4.893_525e-3];
    let x = x.clamp(-7.905_311, 7.905_311);
    let x2 = x * x;
    let p = ALPHA.iter().fold(0.0, |p, &a| p * x2 + a) * x;
    let q = BETA.iter().fold(0.0, |q, &b| q * x2 + b);
    p / q
}

/// `f` over the elements of `N` f32 tensors of one shape, in parallel for large ones.
fn flex_map<const N: usize>(xs: &[&FlexTensor; N], f: impl Fn([f32; N]) -> f32 + Sync) -> FlexTensor {
    let shape = xs[0].layout().shape().clone();
    let owned = xs.map(|t| t.to_contiguous());
    let slices: [&[f32]; N] = std::array::from_fn(|k| owned[k].as_slice().expect("contiguous f32"));
    let mut out = vec![0f32; shape.num_elements()];
    let fill = |start: usize, out: &mut [f32]| {
        let ins: [&[f32]; N] = std::array::from_fn(|k| &slices[k][start..start + out.len()]);
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(std::array::from_fn(|k| ins[k][i]));
        }
    };
    // Below this, waking another thread costs more than the loop.
    const PARALLEL: usize = 1 << 16;
    const CHUNK: usize = 1 << 14;
    if out.len() < PARALLEL {
        fill(0, &mut out);
    } else {
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| fill(c * CHUNK, o));
    }
    FlexTensor::from_data(TensorData::new(out, shape))
}

#[cfg(feature = "torch")]
mod libtorch {
    use burn::backend::LibTorch;
    use burn::backend::libtorch::TchTensor;

    use super::{FusedGrads, FusedOps};

    impl FusedOps for LibTorch {
        // LibTorch's CPU tanh measured slower than 2·σ(2x) − 1 (W1's forward at batch 512,
        // one thread: 7.2 against 5.6 ms); on a GPU one kernel beats three.
        fn fused_tanh(x: TchTensor) -> TchTensor {
            let t = &x.tensor;
            TchTensor::new(match t.device().is_cuda() {
                true => t.tanh(),
                false => (t * 2.0).sigmoid() * 2.0 - 1.0,
            })
        }

        fn fused_logsumexp(x: TchTensor, dim: usize) -> TchTensor {
            TchTensor::new(x.tensor.logsumexp([dim as i64], true))
        }
    }

    impl FusedGrads for LibTorch {
        fn relu_grad(output: TchTensor, grad: TchTensor) -> TchTensor {
            TchTensor::new(output.tensor.threshold_backward(&grad.tensor, 0.0))
        }

        fn tanh_grad(output: TchTensor, grad: TchTensor) -> TchTensor {
            TchTensor::new(tch::Tensor::tanh_backward(&grad.tensor, &output.tensor))
        }

        // d/dx log σ(x) = σ(−x). LibTorch's own backward wants the forward's buffer,
        // which tch does not return.
        fn log_sigmoid_grad(x: TchTensor, grad: TchTensor) -> TchTensor {
            TchTensor::new(x.tensor.neg().sigmoid() * &grad.tensor)
        }

        fn log_softmax_grad(output: TchTensor, grad: TchTensor, dim: usize) -> TchTensor {
            TchTensor::new(tch::Tensor::internal_log_softmax_backward_data(
                &grad.tensor,
                &output.tensor,
                dim as i64,
                output.tensor.kind(),
            ))
        }
    }
}

/// One op of [`FusedOps`] as autodiff sees it: the forward pass on the wrapped backend,
/// with what its backward pass keeps, and the backward pass.
trait Unary<B: FusedGrads>: std::fmt::Debug + Copy + Send + Sync + 'static {
    type State: Clone + Send + std::fmt::Debug + 'static;
    fn forward(self, x: FloatTensor<B>) -> (FloatTensor<B>, Self::State);
    fn backward(self, state: Self::State, grad: FloatTensor<B>) -> FloatTensor<B>;
}

#[derive(Debug, Clone, Copy)]
struct Relu;
#[derive(Debug, Clone, Copy)]
struct Tanh;
#[derive(Debug, Clone, Copy)]
struct LogSigmoid;
#[derive(Debug, Clone, Copy)]
struct LogSoftmax(usize);
#[derive(Debug, Clone, Copy)]
struct LogSumExp(usize);
#[derive(Debug, Clone, Copy)]
struct ReluGap;

impl<B: FusedGrads> Unary<B> for ReluGap {
    type State = FloatTensor<B>;
    fn forward(self, x: FloatTensor<B>) -> (FloatTensor<B>, Self::State) {
        (B::fused_relu_gap(x.clone()), x)
    }
    fn backward(self, x: Self::State, grad: FloatTensor<B>) -> FloatTensor<B> {
        B::relu_gap_grad(x, grad)
    }
}

impl<B: FusedGrads> Unary<B> for Relu {
    type State = FloatTensor<B>;
    fn forward(self, x: FloatTensor<B>) -> (FloatTensor<B>, Self::State) {
        let out = B::fused_relu(x);
        (out.clone(), out)
    }
    fn backward(self, out: Self::State, grad: FloatTensor<B>) -> FloatTensor<B> {
        B::relu_grad(out, grad)
    }
}

impl<B: FusedGrads> Unary<B> for Tanh {
    type State = FloatTensor<B>;
    fn forward(self, x: FloatTensor<B>) -> (FloatTensor<B>, Self::State) {
        let out = B::fused_tanh(x);
        (out.clone(), out)
    }
    fn backward(self, out: Self::State, grad: FloatTensor<B>) -> FloatTensor<B> {
        B::tanh_grad(out, grad)
    }
}

impl<B: FusedGrads> Unary<B> for LogSigmoid {
    type State = FloatTensor<B>;
    fn forward(self, x: FloatTensor<B>) -> (FloatTensor<B>, Self::State) {
        (B::fused_log_sigmoid(x.clone()), x)
    }
    fn backward(self, x: Self::State, grad: FloatTensor<B>) -> FloatTensor<B> {
        B::log_sigmoid_grad(x, grad)
    }
}

impl<B: FusedGrads> Unary<B> for LogSoftmax {
    type State = FloatTensor<B>;
    fn forward(self, x: FloatTensor<B>) -> (FloatTensor<B>, Self::State) {
        let out = B::fused_log_softmax(x, self.0);
        (out.clone(), out)
    }
    fn backward(self, out: Self::State, grad: FloatTensor<B>) -> FloatTensor<B> {
        B::log_softmax_grad(out, grad, self.0)
    }
}

impl<B: FusedGrads> Unary<B> for LogSumExp {
    type State = (FloatTensor<B>, FloatTensor<B>);
    fn forward(self, x: FloatTensor<B>) -> (FloatTensor<B>, Self::State) {
        let out = B::fused_logsumexp(x.clone(), self.0);
        (out.clone(), (x, out))
    }
    fn backward(self, (x, out): Self::State, grad: FloatTensor<B>) -> FloatTensor<B> {
        B::logsumexp_grad(x, out, grad)
    }
}

/// A [`Unary`] op as a node of burn's autodiff graph.
#[derive(Debug)]
struct Tracked<K>(K);

impl<B: FusedGrads, K: Unary<B>> Backward<B, 1> for Tracked<K> {
    type State = K::State;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [parent] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        if let Some(node) = parent {
            grads.register::<B>(node.id, self.0.backward(ops.state, grad));
        }
    }
}

fn tracked<B: FusedGrads, C: CheckpointStrategy, K: Unary<B>>(
    op: K,
    x: FloatTensor<Autodiff<B, C>>,
) -> FloatTensor<Autodiff<B, C>> {
    match <Tracked<K> as Backward<B, 1>>::prepare::<C>(Tracked(op), [x.node()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let (out, state) = op.forward(x.into_primitive());
            prep.finish(state, out)
        }
        OpsKind::UnTracked(prep) => prep.finish(op.forward(x.into_primitive()).0),
    }
}

impl<B: FusedGrads, C: CheckpointStrategy> FusedOps for Autodiff<B, C> {
    fn fused_relu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        tracked::<B, C, _>(Relu, x)
    }

    fn fused_tanh(x: FloatTensor<Self>) -> FloatTensor<Self> {
        tracked::<B, C, _>(Tanh, x)
    }

    fn fused_log_sigmoid(x: FloatTensor<Self>) -> FloatTensor<Self> {
        tracked::<B, C, _>(LogSigmoid, x)
    }

    fn fused_log_softmax(x: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        tracked::<B, C, _>(LogSoftmax(dim), x)
    }

    fn fused_logsumexp(x: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        tracked::<B, C, _>(LogSumExp(dim), x)
    }

    fn fused_relu_gap(x: FloatTensor<Self>) -> FloatTensor<Self> {
        tracked::<B, C, _>(ReluGap, x)
    }
}

/// Whether `t` lives on LibTorch (`torch` or `cuda`), where the fused ops run.
fn on_libtorch<const D: usize>(t: &Tensor<D>) -> bool {
    super::libtorch_is_cuda(&t.device()).is_some()
}

/// `max(x, 0)`.
pub fn relu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    match on_libtorch(&x) {
        true => Tensor::from_dispatch(<Dispatch as FusedOps>::fused_relu(x.into_dispatch())),
        false => activation::relu(x),
    }
}

/// The mean over each plane of `max(x, 0)`: `[B,C,H,W]` -> `[B,C]`, one pass forward
/// and one backward (burn composes it from a ReLU, a sum and a division, and
/// differentiates each: five passes over the router's largest tensor).
pub fn relu_gap(x: Tensor<4>) -> Tensor<2> {
    Tensor::from_dispatch(<Dispatch as FusedOps>::fused_relu_gap(x.into_dispatch()))
}

/// `tanh(x)` (on `cpu`, within 4e-7: see [`tanh_f32`]).
pub fn tanh<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as FusedOps>::fused_tanh(x.into_dispatch()))
}

/// `log σ(x)`.
pub fn log_sigmoid<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    match on_libtorch(&x) {
        true => Tensor::from_dispatch(<Dispatch as FusedOps>::fused_log_sigmoid(x.into_dispatch())),
        false => activation::log_sigmoid(x),
    }
}

/// Log-softmax along `dim`.
pub fn log_softmax<const D: usize>(x: Tensor<D>, dim: usize) -> Tensor<D> {
    match on_libtorch(&x) {
        true => {
            Tensor::from_dispatch(<Dispatch as FusedOps>::fused_log_softmax(x.into_dispatch(), dim))
        }
        false => activation::log_softmax(x, dim),
    }
}

/// Row-wise log-sum-exp of `[B,L]` -> `[B,1]` (max-shifted; the shift carries no gradient).
pub fn logsumexp_rows(t: Tensor<2>) -> Tensor<2> {
    if on_libtorch(&t) {
        return Tensor::from_dispatch(<Dispatch as FusedOps>::fused_logsumexp(t.into_dispatch(), 1));
    }
    let m = t.clone().max_dim(1).detach();
    (t - m.clone()).exp().sum_dim(1).log() + m
}

#[cfg(test)]
mod tests {
    use burn::prelude::*;
    use burn::tensor::activation;

    use crate::modules::to_vec;

    /// The value of `f` on a `[4,5]` input with zeros, ties and large magnitudes, and the
    /// input's gradient of a weighted sum of it.
    fn value_and_grad(device: &Device, f: impl Fn(Tensor<2>) -> Tensor<2>) -> (Vec<f32>, Vec<f32>) {
        let v: Vec<f32> = (0..20).map(|i| ((i * 7 + 3) % 11) as f32 - 5.0).collect();
        let mut v = v;
        v[3] = 0.0;
        v[7] = 40.0;
        v[8] = -40.0;
        let x = Tensor::<2>::from_data(TensorData::new(v, [4, 5]), device).require_grad();
        let y = f(x.clone());
        let w = Tensor::<2>::ones(y.dims(), device) + y.clone().detach() * 0.25;
        let grads = (y.clone() * w).sum().backward();
        let g = x.grad(&grads).expect("a gradient");
        (to_vec(y), to_vec(g))
    }

    fn close(a: &[f32], b: &[f32], what: &str) {
        assert_eq!(a.len(), b.len(), "{what}");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{what}[{i}]: {x} vs {y}");
        }
    }

    /// burn-flex's own tanh is within 4e-7 of the exact value everywhere (3.1e-7 at
    /// worst), NaN stays NaN, and its gradient through autodiff is burn's.
    #[test]
    fn flex_tanh_is_within_4e7_of_tanh() {
        use burn::backend::Flex;

        use super::FusedOps;

        let mut xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 * 1e-3).collect();
        xs.extend([0.0, -0.0, 1e-30, -1e-8, 7.9, 8.0, 20.0, -1e30, f32::INFINITY, f32::NEG_INFINITY]);
        let t = burn::backend::flex::FlexTensor::from_data(TensorData::new(xs.clone(), [xs.len()]));
        let ys = Flex::fused_tanh(t).into_data().try_to_vec::<f32>().unwrap();
        for (x, y) in xs.iter().zip(&ys) {
            let exact = f64::from(*x).tanh();
            assert!((f64::from(*y) - exact).abs() <= 4e-7, "tanh({x}) = {y}, not {exact}");
        }
        let nan = burn::backend::flex::FlexTensor::from_data(TensorData::new(vec![f32::NAN], [1]));
        assert!(Flex::fused_tanh(nan).into_data().try_to_vec::<f32>().unwrap()[0].is_nan());
        let device = Device::flex().autodiff();
        let (fy, fg) = value_and_grad(&device, super::tanh);
        let (by, bg) = value_and_grad(&device, activation::tanh);
        close(&fy, &by, "tanh value on flex");
        close(&fg, &bg, "tanh gradient on flex");
    }

    /// A router's fused ReLU and global average pooling gives burn's ReLU then mean, value
    /// and input gradient, with and without autodiff, on planes of 1 to 37 positions
    /// (zeros, negatives and ties among them); on LibTorch too with `torch`.
    #[test]
    #[allow(deprecated)]
    fn relu_gap_is_relu_then_the_planes_mean() {
        #[allow(unused_mut)]
        let mut devices = vec![Device::flex().autodiff(), Device::flex()];
        #[cfg(feature = "torch")]
        devices.extend([Device::libtorch().autodiff(), Device::libtorch()]);
        for (device, [b, c, h, w]) in devices
            .into_iter()
            .flat_map(|d| [[2, 3, 4, 5], [1, 2, 1, 1], [3, 1, 1, 37]].map(|s| (d.clone(), s)))
        {
            let n = b * c * h * w;
            let v: Vec<f32> = (0..n).map(|i| ((i * 7 + 3) % 11) as f32 - 5.0).collect();
            let x = Tensor::<4>::from_data(TensorData::new(v, [b, c, h, w]), &device);
            let by_burn = |x: Tensor<4>| activation::relu(x).mean_dim(3).mean_dim(2).reshape([b, c]);
            let what = format!("[{b}, {c}, {h}, {w}] on {device:?}");
            close(&to_vec(super::relu_gap(x.clone())), &to_vec(by_burn(x.clone())), &what);
            if device.is_autodiff() {
                let wts = Tensor::<2>::from_data(TensorData::new((0..b * c).map(|i| i as f32 - 1.5).collect(), [b, c]), &device);
                let grad = |f: &dyn Fn(Tensor<4>) -> Tensor<2>| {
                    let x = x.clone().require_grad();
                    let g = (f(x.clone()) * wts.clone()).sum().backward();
                    to_vec(x.grad(&g).expect("a gradient"))
                };
                close(&grad(&super::relu_gap), &grad(&by_burn), &format!("gradient {what}"));
            }
        }
    }

    /// On LibTorch (and on GPU 0 with `ANT_TEST_CUDA`), each fused op gives burn's values
    /// and gradients.
    #[cfg(feature = "torch")]
    #[test]
    #[allow(deprecated)]
    fn fused_ops_match_burns_on_libtorch() {
        let mut devices = vec![Device::libtorch().autodiff()];
        if crate::env::test_cuda() {
            devices.push(Device::libtorch_cuda(0).autodiff());
        }
        type Op = fn(Tensor<2>) -> Tensor<2>;
        let cases: [(&str, Op, Op); 5] = [
            ("relu", super::relu, activation::relu),
            ("tanh", super::tanh, activation::tanh),
            ("log_sigmoid", super::log_sigmoid, activation::log_sigmoid),
            ("log_softmax", |t| super::log_softmax(t, 1), |t| activation::log_softmax(t, 1)),
            ("logsumexp", super::logsumexp_rows, |t| {
                let m = t.clone().max_dim(1).detach();
                (t - m.clone()).exp().sum_dim(1).log() + m
            }),
        ];
        for (device, (name, fused, burns)) in devices.iter().flat_map(|d| cases.map(|c| (d, c))) {
            let (fy, fg) = value_and_grad(device, fused);
            let (by, bg) = value_and_grad(device, burns);
            close(&fy, &by, &format!("{name} value on {device:?}"));
            close(&fg, &bg, &format!("{name} gradient on {device:?}"));
        }
    }
}
