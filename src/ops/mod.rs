//! The door to ant's hand-written numerics: the few tensor ops whose kernels ant
//! supplies itself, each on every device (burn-flex on `cpu`, LibTorch on `torch` and
//! `cuda`). Modules, losses and growth call these functions and name no kernel.
//!
//! - `conv`: the 2-D convolution, 2x2 max-pooling and the two as one op, as burn ops
//!   with their own backward passes; `flex_conv` is their burn-flex side, where the
//!   convolution runs as gemms in one of the layouts of `cpu_conv` and the pooling by
//!   `cpu_pool`'s kernel.
//! - `activation`: ReLU, tanh, log-sigmoid, log-softmax and a row's log-sum-exp, one
//!   fused LibTorch kernel each on `torch` and `cuda`.
//! - `libtorch`: the calls into LibTorch that burn-tch does not make (the fused
//!   convolution backward pass, the CUDA device count): the only foreign calls.

mod activation;
mod conv;
mod cpu_conv;
mod cpu_pool;
mod flex_conv;
#[cfg(feature = "torch")]
mod libtorch;

pub use activation::{log_sigmoid, log_softmax, logsumexp_rows, relu, relu_gap, tanh};
pub use conv::{conv2d, conv2d_pool2x2, max_pool2x2};
#[cfg(feature = "torch")]
pub(crate) use libtorch::cuda_device_count;

use burn::prelude::Device;

/// For a LibTorch device, whether it is a GPU; `None` for any other backend.
#[allow(deprecated)]
pub(crate) fn libtorch_is_cuda(device: &Device) -> Option<bool> {
    #[cfg(feature = "torch")]
    {
        use burn::backend::DispatchDevice::LibTorch;
        use burn::backend::libtorch::LibTorchDevice::Cuda;
        match device.clone().inner().as_dispatch() {
            LibTorch(d) => Some(matches!(d, Cuda(_))),
            _ => None,
        }
    }
    #[cfg(not(feature = "torch"))]
    {
        let _ = device;
        None
    }
}

/// The first four sizes of a shape.
fn dims4(s: &burn::tensor::Shape) -> [usize; 4] {
    [s[0], s[1], s[2], s[3]]
}

/// The sum of `f` over `v` in 16 lanes (which vectorises), then across them: the same
/// order, so the same bits, whatever the vector width.
fn lane_sum(v: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0f32; 16];
    let chunks = v.chunks_exact(16);
    let tail: f32 = chunks.remainder().iter().map(|&x| f(x)).sum();
    for c in chunks {
        for (a, &x) in lanes.iter_mut().zip(c) {
            *a += f(x);
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Asserts `a` equals `b` within `tol` times `b`'s largest magnitude (at least 1e-3):
/// sums of the same products in another order differ by f32 rounding.
#[cfg(test)]
fn assert_close(a: &[f32], b: &[f32], tol: f32, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    let scale = b.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tol * scale, "{what}[{i}]: {x} vs {y}");
    }
}

/// A convolution's output and gradients worked out in f64, and beside each value the sum
/// of its products' magnitudes, which bounds any f32 order's rounding.
#[cfg(test)]
struct ExactConv {
    out: (Vec<f64>, Vec<f64>),
    x: (Vec<f64>, Vec<f64>),
    w: (Vec<f64>, Vec<f64>),
    b: (Vec<f64>, Vec<f64>),
}

/// The geometry of a test convolution: input shape, c_out, kernel, stride, dilation,
/// padding (zeros on both sides of each axis).
#[cfg(test)]
type ConvCase = ([usize; 4], usize, [usize; 2], [usize; 2], [usize; 2], [usize; 2]);

/// The exact output for input `x`, weight `w` and bias `b`, and the gradients for the
/// output gradient `dy`: the definition, summed in f64.
#[cfg(test)]
fn exact_conv(case: ConvCase, x: &[f32], w: &[f32], b: &[f32], dy: &[f32]) -> ExactConv {
    let ([_, c_in, h, wd], c_out, k, s, d, p) = case;
    let out_hw = |len: usize, i: usize| (len + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
    let (oh, ow) = (out_hw(h, 0), out_hw(wd, 1));
    let zeros = |len: usize| (vec![0f64; len], vec![0f64; len]);
    let mut e = ExactConv { out: zeros(dy.len()), x: zeros(x.len()), w: zeros(w.len()), b: zeros(b.len()) };
    let add = |acc: &mut (Vec<f64>, Vec<f64>), at: usize, a: f64, b: f64| {
        acc.0[at] += a * b;
        acc.1[at] += (a * b).abs();
    };
    for (at, &g) in dy.iter().enumerate() {
        let (ni, o, r, col) = (at / (c_out * oh * ow), at / (oh * ow) % c_out, at / ow % oh, at % ow);
        let g = g as f64;
        add(&mut e.out, at, b[o] as f64, 1.0);
        add(&mut e.b, o, g, 1.0);
        for (c, i, j) in (0..c_in).flat_map(|c| (0..k[0]).flat_map(move |i| (0..k[1]).map(move |j| (c, i, j)))) {
            let (ih, iw) = (r * s[0] + i * d[0], col * s[1] + j * d[1]);
            if ih < p[0] || iw < p[1] || ih - p[0] >= h || iw - p[1] >= wd {
                continue;
            }
            let xi = ((ni * c_in + c) * h + ih - p[0]) * wd + iw - p[1];
            let wi = ((o * c_in + c) * k[0] + i) * k[1] + j;
            add(&mut e.out, at, w[wi] as f64, x[xi] as f64);
            add(&mut e.w, wi, g, x[xi] as f64);
            add(&mut e.x, xi, g, w[wi] as f64);
        }
    }
    e
}
