"""avg_pool2d (and .out): the mean of each kernel_size window of a 3-d (C, H, W) or 4-d (N, C, H, W) input,
stride apart, over zero padding (counted with count_include_pad, up to the input's padded end), or the sum
divided by divisor_override. Kernels and ATen's checks: window.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.shared import checked_float, pooling_perf, pooling_samples, result
from gems.ops.pooling.window import geometry, pool
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def checked_divisor(divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return divisor_override


def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None, *, out=None):
    divisor = checked_divisor(divisor_override)
    kernel, stride, pad, _, (oh, ow) = geometry("avg_pool2d", self, kernel_size, stride, padding, (1,), ceil_mode)
    checked_float(self, "avg_pool2d")
    y = result(self, [*self.shape[:-2], oh, ow], suggest_memory_format(self), out=out)
    pool(self, y, None, kernel, stride, pad, (1, 1), False, divisor, count_include_pad)
    return y


def avg_pool2d_out(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                   divisor_override=None, *, out):
    return avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out=out)


SPECS = [
    # reduction: each output sums its window (up to kernel_size elements)
    OpSpec(name="avg_pool2d", family="pooling", impls={"avg_pool2d": avg_pool2d, "avg_pool2d.out": avg_pool2d_out},
           call=torch.ops.aten.avg_pool2d.default, samples=pooling_samples("window_samples", "avg_pool2d"),
           dtypes=FLOATS, tolerance="reduction", perf=pooling_perf("avg_pool2d", "pool_avg")),
]
