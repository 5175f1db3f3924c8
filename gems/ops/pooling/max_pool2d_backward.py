"""max_pool2d_backward (and .out): the gradient of max pooling without the forward's indices (ATen has a kernel
for it on MPS only; CUDA raises NotImplementedError): the windows' argmax is recomputed into a scratch index
tensor (window.py's forward kernel, indices only), then scattered back output-indexed as
max_pool2d_with_indices_backward does. Its reference is that composite."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.shared import check_same_dtype, checked_float, pooling_perf, pooling_samples, result
from gems.ops.pooling.window import check_grad, geometry, pool, unpool
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def max_pool2d_backward(grad_output, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *,
                        out=None):
    check_same_dtype(grad_output, self)
    kernel, stride, pad, dilation, out_hw = geometry("max_pool2d", self, kernel_size, stride, padding, dilation,
                                                     ceil_mode)
    check_grad(grad_output, self, out_hw)
    checked_float(self, "max_pool2d_backward")
    fmt = suggest_memory_format(self)
    indices = torch.empty(grad_output.shape, dtype=torch.int64, device=self.device, memory_format=fmt)
    pool(self, None, indices, kernel, stride, pad, dilation, True)
    gi = result(self, self.shape, fmt, out=out, inputs=(grad_output,))
    unpool(grad_output, indices, gi, kernel, stride, pad, dilation, True)
    return gi


def max_pool2d_backward_out(grad_output, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *,
                            out):
    return max_pool2d_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, out=out)


def composite(grad_output, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """What max_pool2d_backward computes, in ATen overloads every device has."""
    aten = torch.ops.aten
    indices = aten.max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[1]
    return aten.max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                                 indices)


SPECS = [
    OpSpec(name="max_pool2d_backward", family="pooling",
           impls={"max_pool2d_backward": max_pool2d_backward, "max_pool2d_backward.out": max_pool2d_backward_out},
           call=torch.ops.aten.max_pool2d_backward.default, reference=composite, dtypes=FLOATS,
           tolerance="reduction", samples=pooling_samples("max_pool2d_backward_samples"),
           perf=pooling_perf("max_pool2d_backward", "pool_max")),
]
