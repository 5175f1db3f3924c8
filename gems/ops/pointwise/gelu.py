"""gelu, approximate "none" and "tanh" (floating dtypes only). Its backward is gelu_backward.

The formulas avoid cancellation: ``0.5 x erfc(-x/sqrt2)`` and, for "tanh", ``0.5 x (1 + tanh u) =
x / (1 + exp(-2u))``. fp16/bf16 "none" takes ATen's own ``1 + erf`` form: erfc is several times the
work of erf, and in 2-byte dtypes the kernel is bound by arithmetic, not memory (0.64x of ATen at 64M
elements on an H200 with erfc, 0.96-1.0x without). The fp32 cancellation of ``1 + erf`` is an absolute
error below 1e-7 |x|, inside fp16/bf16 tolerance. "tanh" divides correctly rounded for fp32 and fp64
results and with Triton's approximate fp32 division for fp16/bf16 (shared.div_for_storage).
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import combined, div_for_storage, pointwise_perf, unary_samples
from gems.spec import OpSpec

SQRT1_2 = tl.constexpr(0.7071067811865476)  # 1 / sqrt(2)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)  # the "tanh" approximation's beta, sqrt(2 / pi)
KAPPA = tl.constexpr(0.044715)  # the "tanh" approximation's cubic coefficient
# Constants stand right of tensors in the bodies: under the interpreter `libdevice.tanh(K * x)` with a
# constexpr K fails (the product reaches the libdevice shim wrapped in a constexpr; measured).


@triton.jit
def _gelu_none(x, COMMON: tl.constexpr):
    if COMMON == tl.float16 or COMMON == tl.bfloat16:
        r = 0.5 * x * (1.0 + libdevice.erf(x * SQRT1_2))  # see the module docstring
    else:
        r = 0.5 * x * libdevice.erfc(-x * SQRT1_2)  # 0.5 x (1 + erf(x / sqrt2)) without its cancellation
    return r


@triton.jit
def _gelu_tanh(x, COMMON: tl.constexpr):
    inner = (x + (x * x * x) * KAPPA) * SQRT_2_OVER_PI
    return div_for_storage(x, 1.0 + libdevice.exp(-2.0 * inner), COMMON)


gelu_ops = {"none": PointwiseOp("gelu", _gelu_none, operands=1, dtypes=FLOATS, common_arg=True),
            "tanh": PointwiseOp("gelu", _gelu_tanh, operands=1, dtypes=FLOATS, common_arg=True)}


def approximation(table, approximate):
    """The op of ``table`` for gelu's ``approximate`` argument (ATen's error for another)."""
    op = table.get(approximate)
    if op is None:
        raise RuntimeError("approximate argument must be either none or tanh.")
    return op


def gelu(self, *, approximate="none"):
    return approximation(gelu_ops, approximate)(self)


def gelu_(self, *, approximate="none"):
    return approximation(gelu_ops, approximate)(self, out=self, inplace=True)


def gelu_out(self, *, approximate="none", out):
    return approximation(gelu_ops, approximate)(self, out=out)


def _gelu_inplace(x, **kwargs):
    return torch._C._nn.gelu_(x, **kwargs)


def _bad_approximation(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor

    if dtype != REJECT_HOST_DTYPE:
        return []
    return [Sample("error-approximate", lambda: (make_tensor((3, 4), dtype, device),), {"approximate": "erf"})]


SPECS = [
    OpSpec(
        name="gelu", family="pointwise", impls={"gelu": gelu, "gelu_": gelu_, "gelu.out": gelu_out},
        call=torch.nn.functional.gelu,
        samples=combined(
            unary_samples(out="gelu.out", inplace=("gelu_", _gelu_inplace), grad=True,
                          grad_expects=("gelu", "gelu_backward"), rejects=(torch.int64, torch.bool),
                          more=_bad_approximation),
            ("tanh", unary_samples(out="gelu.out", inplace=("gelu_", _gelu_inplace), grad=True,
                                   grad_expects=("gelu", "gelu_backward"), extra={"approximate": "tanh"})),
        ),
        dtypes=FLOATS, perf=pointwise_perf(1),
    ),
]
