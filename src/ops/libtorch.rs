//! The LibTorch calls ant makes itself, beyond burn-tch's ops: the fused convolution
//! backward pass `at::convolution_backward` (what PyTorch's autograd runs: cuDNN's
//! backward-data and backward-filter on a GPU), through the small C++ function build.rs
//! compiles (`csrc/conv_backward.cpp`), since tch does not expose it; and the number of
//! CUDA devices.

// burn-tch is deprecated in burn 0.22 but is the GPU backend that builds offline here.
#![allow(deprecated)]

use std::ffi::{CStr, c_char, c_int};

use burn::backend::LibTorch;
use burn::backend::libtorch::TchTensor;
use burn::backend::ops::ConvOptions;
use burn::backend::tensor::FloatTensor;
use torch_sys::C_tensor;

unsafe extern "C" {
    fn ant_conv2d_backward(
        grad: *const C_tensor,
        x: *const C_tensor,
        w: *const C_tensor,
        stride: *const i64,
        padding: *const i64,
        dilation: *const i64,
        groups: i64,
        need: *const c_int,
        out: *mut *mut C_tensor,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
}

/// The gradients `need` asks for (input, weight, bias), for a convolution with
/// symmetric padding.
pub(crate) fn conv2d_backward(
    x: &TchTensor,
    weight: &TchTensor,
    grad: &TchTensor,
    options: &ConvOptions<2>,
    need: [bool; 3],
) -> [Option<FloatTensor<LibTorch>>; 3] {
    let i64s = |a: [usize; 2]| a.map(|v| v as i64);
    let (stride, padding, dilation) =
        (i64s(options.stride), i64s(options.padding_begin()), i64s(options.dilation));
    let need_c = need.map(c_int::from);
    let mut out = [std::ptr::null_mut(); 3];
    let mut err = [0 as c_char; 512];
    // SAFETY: the three handles are live tch tensors borrowed for the call; the arrays
    // have the lengths the C function reads (2, 2, 2, 3) and writes (3, err's).
    let rc = unsafe {
        ant_conv2d_backward(
            grad.tensor.as_ptr(),
            x.tensor.as_ptr(),
            weight.tensor.as_ptr(),
            stride.as_ptr(),
            padding.as_ptr(),
            dilation.as_ptr(),
            options.groups as i64,
            need_c.as_ptr(),
            out.as_mut_ptr(),
            err.as_mut_ptr(),
            err.len(),
        )
    };
    // burn's backward passes cannot fail; burn-tch panics on LibTorch's errors too.
    if rc != 0 {
        // SAFETY: the C function wrote a NUL-terminated message into `err`.
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) };
        panic!("LibTorch's convolution backward: {}", msg.to_string_lossy());
    }
    // SAFETY: each non-null pointer is a tensor the C function made for the caller.
    out.map(|p| (!p.is_null()).then(|| TchTensor::new(unsafe { tch::Tensor::from_ptr(p) })))
}

/// The number of CUDA devices LibTorch sees.
pub(crate) fn cuda_device_count() -> usize {
    usize::try_from(tch::Cuda::device_count()).unwrap_or(0)
}
