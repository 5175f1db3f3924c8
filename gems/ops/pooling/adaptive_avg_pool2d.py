"""adaptive_avg_pool2d: _adaptive_avg_pool2d (and .out) and adaptive_avg_pool2d.out, the mean of each of the
(OH, OW) windows that split a 3-d or 4-d input's planes evenly (window bounds rounded outwards). The functional
adaptive_avg_pool2d is CompositeImplicitAutograd (it calls _adaptive_avg_pool2d, or mean over the plane for a
1 x 1 output). Kernels: adaptive.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.adaptive import adaptive_pool
from gems.ops.pooling.shared import checked_float, pooling_perf, pooling_samples, result
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def output_shape(x: torch.Tensor, output_size, name: str) -> list:
    """ATen's checks of an adaptive pooling's output_size and input; the output's shape."""
    if len(output_size) != 2:
        raise RuntimeError(f"{name}: output_size must be 2")
    if x.dim() not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got {list(x.shape)}")
    for d in (-2, -1):
        if x.shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(x.shape)} with dimension {d + x.dim()} being empty")
    if any(s < 0 for s in output_size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(output_size)}")
    return [*x.shape[:-2], *output_size]


def adaptive_avg_pool2d(self, output_size, *, out=None):
    shape = output_shape(self, list(output_size), "adaptive_avg_pool2d")
    checked_float(self, "adaptive_avg_pool2d")
    y = result(self, shape, suggest_memory_format(self), out=out)
    adaptive_pool(self, y, None, False)
    return y


def adaptive_avg_pool2d_out(self, output_size, *, out):
    return adaptive_avg_pool2d(self, output_size, out=out)


SPECS = [
    # reduction: each output sums its window
    OpSpec(name="adaptive_avg_pool2d", family="pooling",
           impls={"_adaptive_avg_pool2d": adaptive_avg_pool2d, "_adaptive_avg_pool2d.out": adaptive_avg_pool2d_out,
                  "adaptive_avg_pool2d.out": adaptive_avg_pool2d_out},
           call=torch.ops.aten._adaptive_avg_pool2d.default, dtypes=FLOATS, tolerance="reduction",
           samples=pooling_samples("adaptive_samples", "adaptive_avg_pool2d"),
           perf=pooling_perf("adaptive_avg_pool2d", "pool_adaptive")),
]
