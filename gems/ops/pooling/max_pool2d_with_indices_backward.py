"""max_pool2d_with_indices_backward (and .grad_input): the gradient of max_pool2d_with_indices, output-indexed as
ATen's CUDA kernel: each grad_input element sums the gradients of the windows covering it whose index names it.
Kernels and ATen's checks: window.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.shared import check_same_dtype, checked_float, pooling_perf, pooling_samples, result
from gems.ops.pooling.window import check_grad, geometry, unpool
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices,
                                     *, grad_input=None):
    check_same_dtype(grad_output, self)
    kernel, stride, pad, dilation, out_hw = geometry("max_pool2d", self, kernel_size, stride, padding, dilation,
                                                     ceil_mode)
    check_grad(grad_output, self, out_hw)
    check_grad(indices, self, out_hw, "indices")
    if indices.dtype != torch.int64:
        raise RuntimeError(f"expected scalar type Long but found {str(indices.dtype).replace('torch.', '')}")
    checked_float(self, "max_pool2d_with_indices_backward")
    gi = result(self, self.shape, suggest_memory_format(self), out=grad_input, inputs=(grad_output, indices))
    unpool(grad_output, indices, gi, kernel, stride, pad, dilation, True)
    return gi


def max_pool2d_with_indices_backward_grad_input(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                                indices, *, grad_input):
    return max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                            indices, grad_input=grad_input)


SPECS = [
    OpSpec(name="max_pool2d_with_indices_backward", family="pooling",
           impls={"max_pool2d_with_indices_backward": max_pool2d_with_indices_backward,
                  "max_pool2d_with_indices_backward.grad_input": max_pool2d_with_indices_backward_grad_input},
           call=torch.ops.aten.max_pool2d_with_indices_backward.default, tolerance="reduction",
           samples=pooling_samples("window_backward_samples", "max_pool2d_with_indices"), dtypes=FLOATS,
           perf=pooling_perf("max_pool2d_with_indices_backward", "pool_max")),
]
