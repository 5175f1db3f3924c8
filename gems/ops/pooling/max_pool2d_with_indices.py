"""max_pool2d_with_indices (and .out): the largest element of each (dilated) kernel_size window of a 3-d or 4-d
input and its flat index h * W + w in its plane; the first strict maximum in row-major window order, or the last
NaN, as ATen's CUDA kernels. Kernels and ATen's checks: window.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.shared import checked_float, pooling_perf, pooling_samples, result
from gems.ops.pooling.window import geometry, pool
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, out=None,
                            indices=None):
    kernel, stride, pad, dilation, (oh, ow) = geometry("max_pool2d", self, kernel_size, stride, padding, dilation,
                                                       ceil_mode)
    checked_float(self, "max_pool2d")
    shape, fmt = [*self.shape[:-2], oh, ow], suggest_memory_format(self)
    y = result(self, shape, fmt, out=out)
    index = result(self, shape, fmt, torch.int64, out=indices, inputs=(y,))
    pool(self, y, index, kernel, stride, pad, dilation, True)
    return y, index


def max_pool2d_with_indices_out(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, out,
                                indices):
    return max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, out=out, indices=indices)


SPECS = [
    OpSpec(name="max_pool2d_with_indices", family="pooling",
           impls={"max_pool2d_with_indices": max_pool2d_with_indices,
                  "max_pool2d_with_indices.out": max_pool2d_with_indices_out},
           call=torch.ops.aten.max_pool2d_with_indices.default, dtypes=FLOATS,
           samples=pooling_samples("window_samples", "max_pool2d_with_indices"),
           perf=pooling_perf("max_pool2d_with_indices", "pool_max")),
]
