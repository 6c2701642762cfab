//! burn-flex's side of [`super::conv`]'s ops: the convolution, its gradients and the
//! convolution pooled in one op on [`cpu_conv`]'s unrolled gemms where it computes the
//! shape (every convolution of an ANT), and 2×2 max-pooling by [`cpu_pool`]'s kernel;
//! burn-flex's own ops otherwise.

use burn::backend::Flex;
use burn::backend::flex::FlexTensor;
use burn::backend::ops::{ConvOptions, IntTensorOps, ModuleOps};
use burn::tensor::{DType, IntDType, TensorData};
use rayon::prelude::*;

use super::conv::{ConvGrads, GemmConv, separate_grads, unpooled_grads};
use super::{cpu_conv, cpu_pool, dims4};

impl GemmConv for Flex {
    fn conv2d_bias(
        x: FlexTensor,
        weight: FlexTensor,
        bias: FlexTensor,
        options: ConvOptions<2>,
    ) -> FlexTensor {
        let Some(shape) = unrolled_shape(&x, &weight, &options).filter(|_| bias.dtype() == DType::F32)
        else {
            return Flex::conv2d(x, weight, Some(bias), options);
        };
        let (ho, wo) = shape.out_hw();
        let out = cpu_conv::conv2d(&shape, &f32s(&x), &f32s(&weight), &f32s(&bias));
        FlexTensor::from_data(TensorData::new(out, [shape.n, shape.o, ho, wo]))
    }

    fn max_pool2x2_with_indices(x: FlexTensor, int_dtype: IntDType) -> (FlexTensor, FlexTensor) {
        if x.dtype() != DType::F32 {
            let out =
                Flex::max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], false, int_dtype);
            return (out.output, out.indices);
        }
        let (out, idx) = pool2x2(&x, true);
        let idx = FlexTensor::from_data(TensorData::new(idx, out.layout().shape().clone()));
        let idx = if idx.dtype() == DType::from(int_dtype) {
            idx
        } else {
            Flex::int_cast(idx, int_dtype)
        };
        (out, idx)
    }

    fn max_pool2x2(x: FlexTensor) -> FlexTensor {
        if x.dtype() != DType::F32 {
            return Flex::max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], false);
        }
        pool2x2(&x, false).0
    }

    /// On [`cpu_conv`]'s convolutions, pooled in the same op; the indices are each
    /// window's cell of its maximum (`u8`, 0..4).
    fn conv2d_bias_pool2x2_with_indices(
        x: FlexTensor,
        weight: FlexTensor,
        bias: FlexTensor,
        options: ConvOptions<2>,
        int_dtype: IntDType,
    ) -> (FlexTensor, FlexTensor) {
        let Some(shape) = pooled_shape(&x, &weight, &bias, &options) else {
            return Flex::max_pool2x2_with_indices(Flex::conv2d_bias(x, weight, bias, options), int_dtype);
        };
        let (out, cells) = pooled_conv(&shape, [&x, &weight, &bias], true);
        (out, cells.expect("cells asked for"))
    }

    fn conv2d_bias_pool2x2(x: FlexTensor, weight: FlexTensor, bias: FlexTensor, options: ConvOptions<2>) -> FlexTensor {
        match pooled_shape(&x, &weight, &bias, &options) {
            Some(shape) => pooled_conv(&shape, [&x, &weight, &bias], false).0,
            None => Flex::max_pool2x2(Flex::conv2d_bias(x, weight, bias, options)),
        }
    }
}

/// [`cpu_conv::conv2d_pool2x2`] on tensors: the pooled output and, if `with_cells`, each
/// window's cell of its maximum (`u8`), both `[n, o, ho / 2, wo / 2]`.
fn pooled_conv(
    shape: &cpu_conv::ConvShape,
    [x, weight, bias]: [&FlexTensor; 3],
    with_cells: bool,
) -> (FlexTensor, Option<FlexTensor>) {
    let (out, cells) = cpu_conv::conv2d_pool2x2(shape, &f32s(x), &f32s(weight), &f32s(bias), with_cells);
    let (ho, wo) = shape.out_hw();
    let dims = [shape.n, shape.o, ho / 2, wo / 2];
    let cells = with_cells.then(|| FlexTensor::from_data(TensorData::new(cells, dims)));
    (FlexTensor::from_data(TensorData::new(out, dims)), cells)
}

impl ConvGrads for Flex {
    fn conv2d_grads(
        x: FlexTensor,
        weight: FlexTensor,
        bias: FlexTensor,
        grad: FlexTensor,
        options: ConvOptions<2>,
        need: [bool; 3],
    ) -> [Option<FlexTensor>; 3] {
        let Some(shape) = unrolled_shape(&x, &weight, &options).filter(|_| grad.dtype() == DType::F32)
        else {
            return separate_grads::<Self>(x, weight, bias, grad, options, need);
        };
        let g = cpu_conv::conv2d_grads(&shape, &f32s(&x), &f32s(&weight), &f32s(&grad), need);
        grad_tensors(g, [&x, &weight, &bias])
    }

    fn conv2d_pool2x2_grads(
        x: FlexTensor,
        weight: FlexTensor,
        bias: FlexTensor,
        (grad, indices): (FlexTensor, FlexTensor),
        options: ConvOptions<2>,
        need: [bool; 3],
    ) -> [Option<FlexTensor>; 3] {
        // The forward pass pooled in the same op exactly where this holds.
        let pooled = pooled_shape(&x, &weight, &bias, &options)
            .filter(|_| grad.dtype() == DType::F32 && indices.dtype() == DType::U8);
        let Some(shape) = pooled else {
            return unpooled_grads::<Self>(x, weight, bias, (grad, indices), options, need);
        };
        let cells = indices.to_contiguous();
        let cells: &[u8] = cells.as_slice().expect("contiguous u8");
        let g = cpu_conv::conv2d_pool2x2_grads(&shape, &f32s(&x), &f32s(&weight), (&f32s(&grad), cells), need);
        grad_tensors(g, [&x, &weight, &bias])
    }
}

/// [`cpu_conv`]'s gradients as tensors shaped like the input, weight and bias.
fn grad_tensors(g: cpu_conv::ConvGradients, like: [&FlexTensor; 3]) -> [Option<FlexTensor>; 3] {
    let tensor = |v: Option<Vec<f32>>, like: &FlexTensor| {
        v.map(|v| FlexTensor::from_data(TensorData::new(v, like.layout().shape().clone())))
    };
    [tensor(g.x, like[0]), tensor(g.weight, like[1]), tensor(g.bias, like[2])]
}

/// The shapes of a convolution [`cpu_conv`] computes and pools in one op: one it
/// computes, with a bias in f32 and an output of 2 × 2 or more.
fn pooled_shape(
    x: &FlexTensor,
    weight: &FlexTensor,
    bias: &FlexTensor,
    options: &ConvOptions<2>,
) -> Option<cpu_conv::ConvShape> {
    let shape = unrolled_shape(x, weight, options)?;
    let (ho, wo) = shape.out_hw();
    (bias.dtype() == DType::F32 && ho >= 2 && wo >= 2).then_some(shape)
}

/// The shapes of a convolution [`cpu_conv`] computes (f32, stride 1, no dilation or
/// groups, symmetric padding: every convolution of an ANT); `None` for burn's own.
fn unrolled_shape(
    x: &FlexTensor,
    weight: &FlexTensor,
    options: &ConvOptions<2>,
) -> Option<cpu_conv::ConvShape> {
    let plain = options.groups == 1
        && options.stride == [1, 1]
        && options.dilation == [1, 1]
        && !options.is_asymmetric()
        && x.dtype() == DType::F32
        && weight.dtype() == DType::F32;
    let [n, c, h, w] = dims4(x.layout().shape());
    let [o, wc, kh, kw] = dims4(weight.layout().shape());
    let shape = cpu_conv::ConvShape { n, c, h, w, o, kh, kw, pad: options.padding_begin() };
    (plain && wc == c && shape.valid()).then_some(shape)
}

/// An f32 tensor's values in row-major order.
fn f32s(t: &FlexTensor) -> std::borrow::Cow<'_, [f32]> {
    match t.as_slice::<f32>() {
        Some(v) => std::borrow::Cow::Borrowed(v),
        None => std::borrow::Cow::Owned(t.clone().into_data().try_into_vec::<f32>().expect("f32")),
    }
}

/// 2×2, stride-2 max-pooling of an f32 `[n, c, h, w]` tensor (odd edges dropped), with
/// the argmax (`row · w + column` in the plane) when `with_indices`. Ties and NaNs as
/// burn-flex: the first maximum in row-major order wins, a NaN wins over any number
/// and the last NaN over earlier ones.
fn pool2x2(x: &FlexTensor, with_indices: bool) -> (FlexTensor, Vec<i64>) {
    let x = x.to_contiguous();
    let xs: &[f32] = x.as_slice().expect("contiguous f32");
    let [n, c, h, w] = dims4(x.layout().shape());
    let (ho, wo) = (h / 2, w / 2);
    let mut out = vec![0f32; n * c * ho * wo];
    let mut idx = vec![0i64; if with_indices { out.len() } else { 0 }];
    let plane_out = (ho * wo).max(1);
    let planes = out.par_chunks_mut(plane_out).zip(xs.par_chunks(h * w));
    if with_indices {
        planes
            .zip(idx.par_chunks_mut(plane_out))
            .for_each(|((o, plane), ix)| cpu_pool::pool_plane(plane, w, o, Some(ix)));
    } else {
        planes.for_each(|(o, plane)| cpu_pool::pool_plane::<i64>(plane, w, o, None));
    }
    let out = FlexTensor::from_data(TensorData::new(out, [n, c, ho, wo]));
    (out, idx)
}
