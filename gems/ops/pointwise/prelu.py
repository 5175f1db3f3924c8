"""prelu: x where x > 0, else weight * x, weight broadcast along the channel dimension. ATen's prelu is
CompositeImplicitAutograd: it checks its arguments, reshapes weight to broadcast over x and calls
_prelu_kernel, which gems serves here (the overload's only ATen kernel is per device); its backward is
_prelu_kernel_backward (prelu_backward.py). As ATen's TensorIterator, x and weight must share their dtype.
Floating dtypes only.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.spec import OpSpec, PerfSpec


@triton.jit
def _prelu(x, weight):
    return tl.where(x > 0, x, weight * x)


prelu_op = PointwiseOp("prelu", _prelu, operands=2, dtypes=FLOATS)


def check_same_dtype(self, weight):
    if self.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype} but found {weight.dtype} (prelu's operands must share "
                           "their dtype)")


def prelu_kernel(self, weight):
    check_same_dtype(self, weight)
    return prelu_op(self, weight)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, special_values

    mk = lambda *shape, d=dtype: make_tensor(shape, d, device)
    grad = lambda *shapes: lambda: tuple(mk(*s).requires_grad_() for s in shapes)
    expects_grad = ("_prelu_kernel", "_prelu_kernel_backward")
    cases = [
        Sample("channels", lambda: (mk(4, 5, 6), mk(5))),
        Sample("2d", lambda: (mk(13, 17), mk(17))),
        Sample("single-weight", lambda: (mk(13, 17), mk(1))),
        Sample("1d", lambda: (mk(19), mk(1))),
        Sample("0d", lambda: (mk(), mk(1))),
        Sample("empty", lambda: (mk(0, 5), mk(5))),
        Sample("noncontiguous-transposed", lambda: (mk(6, 5, 4).transpose(0, 2), mk(5))),
        Sample("channels-last", lambda: (mk(2, 3, 4, 5).to(memory_format=torch.channels_last), mk(3))),
        Sample("special-values", lambda: (special_values(dtype, device).reshape(2, 8), mk(8))),
        Sample("kernel-broadcast", lambda: (mk(3, 5, 7), mk(1, 5, 1)), call=torch.ops.aten._prelu_kernel.default),
        Sample("grad", grad((4, 5, 6), (5,)), grad=True, expects=expects_grad),
        Sample("grad-single-weight", grad((13, 17), (1,)), grad=True, expects=expects_grad),
    ]
    if dtype == REJECT_HOST_DTYPE:
        cases += [Sample("error-dtype-mismatch", lambda: (mk(4, 5), mk(5, d=torch.float64))),
                  Sample("error-channels", lambda: (mk(4, 5), mk(3))),
                  Sample("error-int64-input", lambda: (mk(4, 5, d=torch.int64), mk(5, d=torch.int64)))]
    for case in cases:
        case.expects = case.expects or "_prelu_kernel"
    return cases


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    return Sample("perf", (make_tensor(shape, dtype, device), make_tensor((1,), dtype, device)))


def _perf_bytes(sample, result):
    return 2 * result.numel() * result.element_size()


SPECS = [
    OpSpec(
        name="prelu", family="pointwise", impls={"_prelu_kernel": prelu_kernel}, call=torch.nn.functional.prelu,
        samples=_samples, dtypes=FLOATS, perf=PerfSpec(inputs=_perf_inputs, shapes="pointwise", bytes=_perf_bytes),
    ),
]
