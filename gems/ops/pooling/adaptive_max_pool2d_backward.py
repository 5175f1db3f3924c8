"""adaptive_max_pool2d_backward (and .grad_input): the gradient of adaptive_max_pool2d, output-indexed: each
grad_input element sums the gradients of the windows holding it whose index names it (ATen's CUDA kernel adds
atomically). Kernels: adaptive.py."""

import torch

from gems.dtypes import FLOATS
from gems.ops.pooling.adaptive import adaptive_unpool
from gems.ops.pooling.adaptive_avg_pool2d_backward import check_grad_output
from gems.ops.pooling.shared import checked_float, pooling_perf, pooling_samples, result
from gems.ops.shape.shared import suggest_memory_format
from gems.spec import OpSpec


def adaptive_max_pool2d_backward(grad_output, self, indices, *, grad_input=None):
    check_grad_output(grad_output, self, "adaptive_max_pool2d_backward")
    if indices.shape != grad_output.shape:
        raise RuntimeError(f"expected sizes {list(indices.shape)} for `grad_output` but got sizes "
                           f"{list(grad_output.shape)}")
    if indices.dtype != torch.int64:
        raise RuntimeError(f"expected scalar type Long but found {str(indices.dtype).replace('torch.', '')}")
    checked_float(self, "adaptive_max_pool2d_backward")
    gi = result(self, self.shape, suggest_memory_format(self), out=grad_input, inputs=(grad_output, indices))
    adaptive_unpool(grad_output, indices, gi, True)
    return gi


def adaptive_max_pool2d_backward_grad_input(grad_output, self, indices, *, grad_input):
    return adaptive_max_pool2d_backward(grad_output, self, indices, grad_input=grad_input)


SPECS = [
    OpSpec(name="adaptive_max_pool2d_backward", family="pooling",
           impls={"adaptive_max_pool2d_backward": adaptive_max_pool2d_backward,
                  "adaptive_max_pool2d_backward.grad_input": adaptive_max_pool2d_backward_grad_input},
           call=torch.ops.aten.adaptive_max_pool2d_backward.default, dtypes=FLOATS, tolerance="reduction",
           samples=pooling_samples("adaptive_backward_samples", "adaptive_max_pool2d"),
           perf=pooling_perf("adaptive_max_pool2d_backward", "pool_adaptive")),
]
