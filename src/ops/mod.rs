//! The door to ant's hand-written numerics: the few tensor ops whose kernels ant
//! supplies itself, each on every device (burn-flex on `cpu`, LibTorch on `torch` and
//! `cuda`). Modules, losses and growth call these functions and name no kernel.
//!
//! - `conv`: the 2-D convolution and 2x2 max-pooling as burn ops with their own
//!   backward pass; on the CPU the convolution runs as gemms in one of the layouts of
//!   `cpu_conv`.
//! - `activation`: ReLU, tanh, log-sigmoid, log-softmax and a row's log-sum-exp, one
//!   fused LibTorch kernel each on `torch` and `cuda`.
//! - `libtorch`: the calls into LibTorch that burn-tch does not make (the fused
//!   convolution backward pass, the CUDA device count): the only foreign calls.

mod activation;
mod conv;
mod cpu_conv;
#[cfg(feature = "torch")]
mod libtorch;

pub use activation::{log_sigmoid, log_softmax, logsumexp_rows, relu, relu_gap, tanh};
pub use conv::{conv2d, max_pool2x2};
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
