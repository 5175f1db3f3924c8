"""adaptive_avg_pool2d_backward: _adaptive_avg_pool2d_backward (and .out), the gradient of _adaptive_avg_pool2d,
output-indexed: each grad_input element sums the gradients of the windows holding it, each divided by its
window's height then width (ATen's CUDA kernel for contiguous tensors adds atomically). Kernels: adaptive.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.adaptive import adaptive_unpool
from gems.ops.pooling.shared import check_same_dtype, checked_float, pooling_perf, pooling_samples, result
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def check_grad_output(grad_output, x, name: str) -> None:
    """ATen's checks of an adaptive pooling's grad_output (its rank, no empty non-batch dim), and its batch and
    channels against the input's (which ATen's kernels read past)."""
    if grad_output.dim() not in (3, 4) or grad_output.dim() != x.dim():
        raise RuntimeError(f"{name}(): Expected {x.dim()}D grad_output, but got: {list(grad_output.shape)}")
    for d in range(1, grad_output.dim()):
        if grad_output.shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected grad_output to have non-zero size for non-batch dimensions, but "
                               f"grad_output has sizes {list(grad_output.shape)} with dimension {d} being empty")
    if grad_output.shape[:-2] != x.shape[:-2]:
        raise RuntimeError(f"{name}(): grad_output's sizes {list(grad_output.shape)} do not match the input's "
                           f"{list(x.shape)}")
    check_same_dtype(grad_output, x, "grad_output")


def adaptive_avg_pool2d_backward(grad_output, self, *, out=None):
    check_grad_output(grad_output, self, "adaptive_avg_pool2d_backward")
    checked_float(self, "adaptive_avg_pool2d_backward_cuda")
    gi = result(self, self.shape, suggest_memory_format(self), out=out, inputs=(grad_output,))
    adaptive_unpool(grad_output, None, gi, False)
    return gi


def adaptive_avg_pool2d_backward_out(grad_output, self, *, out):
    return adaptive_avg_pool2d_backward(grad_output, self, out=out)


SPECS = [
    OpSpec(name="adaptive_avg_pool2d_backward", family="pooling",
           impls={"_adaptive_avg_pool2d_backward": adaptive_avg_pool2d_backward,
                  "_adaptive_avg_pool2d_backward.out": adaptive_avg_pool2d_backward_out},
           call=torch.ops.aten._adaptive_avg_pool2d_backward.default, dtypes=FLOATS, tolerance="reduction",
           samples=pooling_samples("adaptive_backward_samples", "adaptive_avg_pool2d"),
           perf=pooling_perf("adaptive_avg_pool2d_backward", "pool_adaptive")),
]
