//! 2-D convolution whose weight gradient is one matrix product.
//!
//! burn computes a convolution's weight gradient generically, as a convolution with batch
//! and channels swapped; burn-flex runs that through its general path (a copy of the
//! whole output gradient as a "kernel", then a small product per input channel), which
//! made it most of the pure-Rust training step (docs/RESULTS.md, "Where a training step
//! goes"). Here, on burn-flex, the input is unrolled (im2col) a chunk of samples at a
//! time and the gradient is `G · colsᵀ`, one gemm per chunk, as PyTorch does. LibTorch
//! keeps its own kernels. The forward pass and the input gradient are burn's.
//!
//! The op is a burn backend extension with its own backward pass: [`conv2d`] is what
//! the modules call.

// burn-tch is deprecated in burn 0.22 but is the GPU backend that builds offline here.
#![cfg_attr(feature = "torch", allow(deprecated))]

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::NodeId;
use burn::backend::flex::FlexTensor;
use burn::backend::ops::{ConvOptions, FloatTensorOps, ModuleOps};
use burn::backend::tensor::FloatTensor;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension};
use burn::nn::PaddingConfig2d;
use burn::nn::conv::Conv2d;
use burn::prelude::*;
use burn::tensor::{DType, Shape, TensorData};
use rayon::prelude::*;

/// Convolutions with [`Self::conv2d_weight_grad`] in their backward pass.
#[backend_extension(Flex, LibTorch: cfg(feature = "torch"), Autodiff)]
pub trait GemmConv: Backend {
    /// The convolution without bias.
    fn conv2d_nobias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        Self::conv2d(x, weight, None, options)
    }

    /// The gradient of the weight, given the output's gradient `grad`.
    fn conv2d_weight_grad(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        Self::conv2d_weight_backward(x, weight, grad, options)
    }
}

#[cfg(feature = "torch")]
impl GemmConv for burn::backend::LibTorch {}

impl GemmConv for Flex {
    fn conv2d_weight_grad(
        x: FlexTensor,
        weight: FlexTensor,
        grad: FlexTensor,
        options: ConvOptions<2>,
    ) -> FlexTensor {
        let plain = options.groups == 1
            && x.dtype() == DType::F32
            && grad.dtype() == DType::F32
            && !options.is_asymmetric();
        if !plain {
            return Flex::conv2d_weight_backward(x, weight, grad, options);
        }
        let w_shape = weight.layout().shape().clone();
        im2col_weight_grad(&x, &grad, &w_shape, &options)
    }
}

/// Floats of unrolled input per chunk (32 MiB): bounds the memory, keeps each gemm large.
const CHUNK_FLOATS: usize = 8 << 20;

/// `dW[o, (c, i, j)] = Σ_(b, y, x) G[b, o, y, x] · X[b, c, y·s + i·d − p, x·s + j·d − p]`,
/// as `G · colsᵀ` over chunks of samples.
fn im2col_weight_grad(
    x: &FlexTensor,
    grad: &FlexTensor,
    w_shape: &Shape,
    options: &ConvOptions<2>,
) -> FlexTensor {
    let x = x.to_contiguous();
    let xs: &[f32] = x.as_slice().expect("contiguous f32");
    let [n, c, h, w] = dims4(x.layout().shape());
    let [o, _, kh, kw] = dims4(w_shape);
    let [_, _, ho, wo] = dims4(grad.layout().shape());
    let (l, ckk) = (ho * wo, c * kh * kw);
    // [o, n·l]: the output gradient with the samples of a chunk side by side.
    let g = grad
        .permute(&[1, 0, 2, 3])
        .to_contiguous()
        .reshape(Shape::new([o, n * l]));
    let per_chunk = (CHUNK_FLOATS / (ckk * l).max(1)).clamp(1, n.max(1));
    let geo = Geometry {
        c,
        h,
        w,
        kh,
        kw,
        ho,
        wo,
        stride: options.stride,
        padding: options.padding_begin(),
        dilation: options.dilation,
    };
    let mut acc: Option<FlexTensor> = None;
    for start in (0..n).step_by(per_chunk) {
        let nb = per_chunk.min(n - start);
        let mut cols = vec![0f32; ckk * nb * l];
        cols.par_chunks_mut(nb * l)
            .enumerate()
            .for_each(|(r, row)| geo.fill_row(xs, start, nb, r, row));
        let cols = FlexTensor::from_data(TensorData::new(cols, [ckk, nb * l]));
        let part = Flex::float_matmul(
            g.narrow(1, start * l, nb * l),
            cols.transpose(0, 1),
        );
        acc = Some(match acc {
            None => part,
            Some(a) => Flex::float_add(a, part),
        });
    }
    let dw = acc.unwrap_or_else(|| FlexTensor::zeros(Shape::new([o, ckk]), DType::F32));
    dw.reshape(w_shape.clone())
}

fn dims4(s: &Shape) -> [usize; 4] {
    [s[0], s[1], s[2], s[3]]
}

/// The shapes of one convolution, for unrolling its input.
struct Geometry {
    c: usize,
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    ho: usize,
    wo: usize,
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
}

impl Geometry {
    /// Row `r` = (channel, i, j) of the unrolled input for samples `start..start + nb`:
    /// for each sample and output position, the input value under kernel tap (i, j).
    fn fill_row(&self, xs: &[f32], start: usize, nb: usize, r: usize, row: &mut [f32]) {
        let (ch, i, j) = (r / (self.kh * self.kw), (r / self.kw) % self.kh, r % self.kw);
        let (l, plane) = (self.ho * self.wo, self.h * self.w);
        // Output columns x whose input column lies inside the image.
        let col_of = |x: usize| (x * self.stride[1] + j * self.dilation[1]).checked_sub(self.padding[1]);
        let xs_valid: Vec<(usize, usize)> = (0..self.wo)
            .filter_map(|x| col_of(x).filter(|&ix| ix < self.w).map(|ix| (x, ix)))
            .collect();
        for b in 0..nb {
            let img = &xs[((start + b) * self.c + ch) * plane..][..plane];
            let out = &mut row[b * l..][..l];
            for y in 0..self.ho {
                let Some(iy) = (y * self.stride[0] + i * self.dilation[0]).checked_sub(self.padding[0])
                else {
                    continue;
                };
                if iy >= self.h {
                    continue;
                }
                let src = &img[iy * self.w..][..self.w];
                let dst = &mut out[y * self.wo..][..self.wo];
                if self.stride[1] == 1 && self.dilation[1] == 1 {
                    // One contiguous run: output columns x0..x0+len read ix0..ix0+len.
                    if let (Some(&(x0, ix0)), Some(&(x1, _))) = (xs_valid.first(), xs_valid.last()) {
                        let len = x1 + 1 - x0;
                        dst[x0..x0 + len].copy_from_slice(&src[ix0..ix0 + len]);
                    }
                } else {
                    for &(x, ix) in &xs_valid {
                        dst[x] = src[ix];
                    }
                }
            }
        }
    }
}

impl<B: Backend + GemmConv, C: CheckpointStrategy> GemmConv for Autodiff<B, C> {
    fn conv2d_nobias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct Conv2dNoBias;

        impl<B: Backend + GemmConv> Backward<B, 2> for Conv2dNoBias {
            type State = (NodeId, NodeId, ConvOptions<2>);

            fn backward(
                self,
                ops: Ops<Self::State, 2>,
                grads: &mut Gradients,
                checkpointer: &mut Checkpointer,
            ) {
                let [node_x, node_weight] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, weight_state, options) = ops.state;
                let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(x_state);
                let weight =
                    checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(weight_state);
                if let Some(node) = node_x {
                    let g = B::conv2d_x_backward(
                        x.clone(),
                        weight.clone(),
                        grad.clone(),
                        options.clone(),
                    );
                    grads.register::<B>(node.id, g)
                }
                if let Some(node) = node_weight {
                    let g = B::conv2d_weight_grad(x, weight, grad, options);
                    grads.register::<B>(node.id, g)
                }
            }
        }

        match Conv2dNoBias
            .prepare::<C>([x.node(), weight.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let x_state = prep.checkpoint(&x);
                let weight_state = prep.checkpoint(&weight);
                prep.finish(
                    (x_state, weight_state, options.clone()),
                    B::conv2d_nobias(x.into_primitive(), weight.into_primitive(), options),
                )
            }
            OpsKind::UnTracked(prep) => prep.finish(B::conv2d_nobias(
                x.into_primitive(),
                weight.into_primitive(),
                options,
            )),
        }
    }
}

/// `conv`'s output for `x`: burn-nn's `Conv2d::forward`, with the bias added after the
/// convolution and the weight gradient of [`GemmConv`].
pub fn conv2d(conv: &Conv2d, x: Tensor<4>) -> Tensor<4> {
    let ((top, bottom), (left, right)) = match conv.padding {
        PaddingConfig2d::Valid => ((0, 0), (0, 0)),
        PaddingConfig2d::Explicit(top, left, bottom, right) => ((top, bottom), (left, right)),
        // Not used by ANTs: burn's own, which works the padding out from the input.
        PaddingConfig2d::Same => return conv.forward(x),
    };
    let options = ConvOptions::new_with_padding(
        conv.stride,
        [(top, bottom), (left, right)],
        conv.dilation,
        conv.groups,
    );
    let y = Tensor::<4>::from_dispatch(<Dispatch as GemmConv>::conv2d_nobias(
        x.into_dispatch(),
        conv.weight.val().into_dispatch(),
        options,
    ));
    match &conv.bias {
        Some(b) => {
            let [o] = b.val().dims();
            y + b.val().reshape([1, o, 1, 1])
        }
        None => y,
    }
}

#[cfg(test)]
mod tests {
    use burn::nn::PaddingConfig2d;
    use burn::nn::conv::{Conv2d, Conv2dConfig};
    use burn::prelude::*;

    use super::conv2d;
    use crate::modules::to_vec;

    fn input(shape: [usize; 4], device: &Device) -> Tensor<4> {
        let n: usize = shape.iter().product();
        let v = (0..n).map(|i| ((i * 37 + 11) % 23) as f32 / 11.0 - 1.0).collect();
        Tensor::from_data(TensorData::new(v, shape), device).require_grad()
    }

    fn close(a: &[f32], b: &[f32], what: &str) {
        assert_eq!(a.len(), b.len(), "{what}");
        let scale = b.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() <= 1e-5 * scale, "{what}[{i}]: {x} vs {y}");
        }
    }

    /// Output and gradients (input, weight, bias) equal burn's `Conv2d` up to rounding,
    /// for padded, strided and dilated kernels and a batch split into several chunks.
    #[test]
    fn matches_burns_convolution() {
        let device = Device::flex().autodiff();
        let cases = [
            // (input shape, c_out, kernel, stride, dilation, padding)
            ([3, 2, 9, 8], 4, [3, 3], [1, 1], [1, 1], 0),
            ([2, 3, 10, 11], 5, [5, 5], [1, 1], [1, 1], 2),
            ([2, 2, 11, 9], 3, [3, 2], [2, 3], [1, 1], 1),
            ([2, 1, 12, 12], 2, [3, 3], [1, 1], [2, 2], 1),
            // 100,000 unrolled floats a sample: four chunks.
            ([300, 40, 14, 14], 3, [5, 5], [1, 1], [1, 1], 0),
        ];
        for (shape, c_out, k, stride, dilation, pad) in cases {
            let conv: Conv2d = Conv2dConfig::new([shape[1], c_out], k)
                .with_stride(stride)
                .with_dilation(dilation)
                .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
                .init(&device);
            let what = format!("{shape:?} k{k:?} s{stride:?} d{dilation:?} p{pad}");
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
            let ours = run(&|x| conv2d(&conv, x));
            let burns = run(&|x| conv.forward(x));
            close(&ours.0, &burns.0, &format!("output {what}"));
            close(&ours.1, &burns.1, &format!("input gradient {what}"));
            close(&ours.2, &burns.2, &format!("weight gradient {what}"));
            close(&ours.3, &burns.3, &format!("bias gradient {what}"));
        }
    }
}
