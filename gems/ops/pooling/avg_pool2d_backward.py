"""avg_pool2d_backward (and .grad_input): the gradient of avg_pool2d, output-indexed as ATen's CUDA kernel:
each grad_input element sums the gradients of the windows covering it, each divided by its window's divisor.
Kernels and ATen's checks: window.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.avg_pool2d import checked_divisor
from gems.ops.pooling.shared import check_same_dtype, checked_float, pooling_perf, pooling_samples, result
from gems.ops.pooling.window import check_grad, geometry, unpool
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, *, grad_input=None):
    divisor = checked_divisor(divisor_override)
    kernel, stride, pad, _, out_hw = geometry("avg_pool2d", self, kernel_size, stride, padding, (1,), ceil_mode)
    check_grad(grad_output, self, out_hw)
    check_same_dtype(grad_output, self)
    checked_float(self, "avg_pool2d_backward_out_frame")
    gi = result(self, self.shape, suggest_memory_format(self), out=grad_input, inputs=(grad_output,))
    unpool(grad_output, None, gi, kernel, stride, pad, (1, 1), False, divisor, count_include_pad)
    return gi


def avg_pool2d_backward_grad_input(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override, *, grad_input):
    return avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override, grad_input=grad_input)


SPECS = [
    OpSpec(name="avg_pool2d_backward", family="pooling",
           impls={"avg_pool2d_backward": avg_pool2d_backward,
                  "avg_pool2d_backward.grad_input": avg_pool2d_backward_grad_input},
           call=torch.ops.aten.avg_pool2d_backward.default, tolerance="reduction",
           samples=pooling_samples("window_backward_samples", "avg_pool2d"), dtypes=FLOATS,
           perf=pooling_perf("avg_pool2d_backward", "pool_avg")),
]
