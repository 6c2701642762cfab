// LibTorch's fused convolution backward pass (`at::convolution_backward`: cuDNN's
// backward-data and backward-filter on a GPU, oneDNN's on the CPU), which tch 0.22 does
// not expose. burn-tch's own backward builds it from a transposed convolution and a
// convolution with batch and channels swapped. Built by build.rs with the `torch` feature.
#include <ATen/core/Tensor.h>
#include <ATen/ops/convolution_backward.h>

#include <array>
#include <cstring>
#include <exception>
#include <optional>

extern "C" {

// The gradients of a 2-D convolution (not transposed) of `x` by `w` for the output's
// gradient `grad`: `out[0]` the input's, `out[1]` the weight's, `out[2]` the bias's, each
// only where `need[k]` is set (else null). Tensors are tch's handles (`at::Tensor*`); the
// new ones are owned by the caller. Returns 0, or 1 with LibTorch's message in `err`.
int ant_conv2d_backward(const at::Tensor *grad, const at::Tensor *x, const at::Tensor *w,
                        const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                        int64_t groups, const int *need, at::Tensor **out, char *err,
                        size_t err_len) {
    try {
        std::array<bool, 3> mask{need[0] != 0, need[1] != 0, need[2] != 0};
        int64_t bias_size = w->size(0);
        auto bias_sizes = mask[2] ? at::OptionalIntArrayRef(at::IntArrayRef(&bias_size, 1))
                                  : at::OptionalIntArrayRef(std::nullopt);
        auto r = at::convolution_backward(*grad, *x, *w, bias_sizes,
                                          at::IntArrayRef(stride, 2),
                                          at::IntArrayRef(padding, 2),
                                          at::IntArrayRef(dilation, 2), false,
                                          at::IntArrayRef({0, 0}), groups, mask);
        out[0] = mask[0] ? new at::Tensor(std::get<0>(r)) : nullptr;
        out[1] = mask[1] ? new at::Tensor(std::get<1>(r)) : nullptr;
        out[2] = mask[2] ? new at::Tensor(std::get<2>(r)) : nullptr;
        return 0;
    } catch (const std::exception &e) {
        std::strncpy(err, e.what(), err_len - 1);
        err[err_len - 1] = '\0';
        return 1;
    }
}
}
