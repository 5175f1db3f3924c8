"""conv_depthwise2d: ``aten::_conv_depthwise2d``, ATen's CUDA kernel for 2-d convolutions with one group per
input channel (it has no CPU kernel), served by convolution.py's forward, which takes the direct depthwise
kernel of depthwise.py for it. F.conv2d never reaches it while gems serves ``convolution``; it is registered
for direct callers. Its autograd derivative is ``convolution_backward`` (convolution_backward.py).
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.conv.convolution import conv_forward
from gems.ops.conv.implicit_gemm import geometry
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy


def conv_depthwise2d(self, weight, kernel_size, bias, stride, padding, dilation):
    # What ATen's own kernel refuses, and with which message, is left to it: gems computes only
    # well-formed depthwise calls.
    if self.dim() != 4 or weight.dim() != 4 or weight.shape[1] != 1 or self.shape[1] == 0:
        raise Fallback("not a 4-d depthwise convolution")
    if weight.shape[0] % self.shape[1] or list(kernel_size) != list(weight.shape[2:]):
        raise Fallback("weight of another shape than kernel_size x a multiple of the input channels")
    geo = geometry(self, weight, bias, stride, padding, dilation, False, [0], self.shape[1])
    return conv_forward(geo, bias, (self, weight))


NO_CPU_KERNEL = "ATen has no CPU kernel for _conv_depthwise2d: no reference on this vendor"

SPECS = [
    OpSpec(
        name="conv_depthwise2d", family="conv",
        impls={"_conv_depthwise2d": conv_depthwise2d},
        call=torch.ops.aten._conv_depthwise2d.default,
        samples=lazy("gems.testing.samples_conv", "conv_depthwise2d_samples"),
        dtypes=FLOATS, tolerance="reduction",
        skips={("interpreter", "*", "*"): NO_CPU_KERNEL, ("sim", "*", "*"): NO_CPU_KERNEL},
    ),
]
