"""adaptive_max_pool2d (and .out): the largest element of each of the (OH, OW) windows that split a 3-d or 4-d
input's planes evenly, and its flat index h * W + w in its plane (the first strict maximum in row-major window
order, or the last NaN, as ATen's CUDA kernel). Kernels: adaptive.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.adaptive import adaptive_pool
from gems.ops.pooling.shared import checked_float, pooling_perf, pooling_samples, result
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def adaptive_max_pool2d(self, output_size, *, out=None, indices=None):
    if self.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(self.shape)}")
    for d in range(1, self.dim()):
        if self.shape[d] <= 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(self.shape)} with dimension {d} being empty")
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    if any(s < 0 for s in output_size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(output_size)}")
    checked_float(self, "adaptive_max_pool2d")
    shape, fmt = [*self.shape[:-2], *output_size], suggest_memory_format(self)
    y = result(self, shape, fmt, out=out)
    index = result(self, shape, fmt, torch.int64, out=indices, inputs=(y,))
    adaptive_pool(self, y, index, True)
    return y, index


def adaptive_max_pool2d_out(self, output_size, *, out, indices):
    return adaptive_max_pool2d(self, output_size, out=out, indices=indices)


SPECS = [
    OpSpec(name="adaptive_max_pool2d", family="pooling",
           impls={"adaptive_max_pool2d": adaptive_max_pool2d, "adaptive_max_pool2d.out": adaptive_max_pool2d_out},
           call=torch.ops.aten.adaptive_max_pool2d.default, dtypes=FLOATS,
           samples=pooling_samples("adaptive_samples", "adaptive_max_pool2d"),
           perf=pooling_perf("adaptive_max_pool2d", "pool_adaptive")),
]
