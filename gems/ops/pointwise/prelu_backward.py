"""prelu_backward: ATen's _prelu_kernel_backward(grad, x, weight) -> (grad_input, grad_weight), both of the
broadcast shape, in one launch with two outputs: grad where x > 0, else weight * grad; and 0 where x > 0,
else x * grad. Autograd then sums grad_weight to weight's shape. Floating dtypes only.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.prelu import check_same_dtype
from gems.spec import OpSpec, PerfSpec


@triton.jit
def _prelu_backward(x, weight, grad):
    positive = x > 0
    return tl.where(positive, grad, weight * grad), tl.where(positive, 0.0, x * grad)


prelu_backward_op = PointwiseOp("prelu_backward", _prelu_backward, operands=3, outputs=2, dtypes=FLOATS)


def prelu_kernel_backward(grad_output, self, weight):
    check_same_dtype(self, weight)
    return prelu_backward_op(self, weight, grad_output)


aten = torch.ops.aten


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, special_values

    mk = lambda *shape, d=dtype: make_tensor(shape, d, device)
    cases = [
        Sample("channels", lambda: (mk(4, 5, 6), mk(4, 5, 6), mk(5, 1))),
        Sample("single-weight", lambda: (mk(13, 17), mk(13, 17), mk(1))),
        Sample("same-shape", lambda: (mk(13, 17), mk(13, 17), mk(13, 17))),
        Sample("0d", lambda: (mk(), mk(), mk(1))),
        Sample("empty", lambda: (mk(0, 5), mk(0, 5), mk(5))),
        Sample("noncontiguous-transposed", lambda: (mk(17, 13).t(), mk(17, 13).t(), mk(13))),
        Sample("special-values", lambda: (mk(2, 8), special_values(dtype, device).reshape(2, 8), mk(8))),
        Sample("special-grad", lambda: (special_values(dtype, device).reshape(2, 8), mk(2, 8), mk(8))),
    ]
    if dtype == REJECT_HOST_DTYPE:
        cases.append(Sample("error-dtype-mismatch", lambda: (mk(4, 5), mk(4, 5), mk(5, d=torch.float64))))
    return cases


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    return Sample("perf", (make_tensor(shape, dtype, device), make_tensor(shape, dtype, device),
                           make_tensor((1,), dtype, device)))


def _perf_bytes(sample, result):
    return 4 * result[0].numel() * result[0].element_size()  # grad and x read, two results written


SPECS = [
    OpSpec(
        name="prelu_backward", family="pointwise", impls={"_prelu_kernel_backward": prelu_kernel_backward},
        call=aten._prelu_kernel_backward.default, samples=_samples, dtypes=FLOATS,
        perf=PerfSpec(inputs=_perf_inputs, shapes="pointwise", bytes=_perf_bytes),
    ),
]
