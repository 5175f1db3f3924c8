"""gelu, approximate "none" and "tanh" (floating dtypes only). Its backward is gelu_backward.

The formulas avoid cancellation: ``0.5 x erfc(-x/sqrt2)`` and, for "tanh", ``0.5 x (1 + tanh u) =
x / (1 + exp(-2u))``. In 2-byte dtypes the kernel is bound by arithmetic, not memory: libdevice's erfc
made fp16/bf16 "none" 0.64x of ATen at 64M elements on an H200, ATen's ``1 + erf`` form with libdevice's
erf 0.92-0.97x; they take a branch-free erfc of one fast exp (_gelu_none_16bit). "tanh" divides correctly
rounded for fp32 and fp64 results and with Triton's approximate fp32 division and fast exp2 for fp16/bf16
(shared.div_for_storage).
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
TANH_EXP2 = tl.constexpr(-2.302208198144325)  # -2 sqrt(2 / pi) log2(e): exp(-2u) = exp2(TANH_EXP2 (x + KAPPA x^3))
# _gelu_none_16bit: erfc(z) ~ t exp(E0 + E1 t + ... + E9 t^9 - z^2), t = 1 / (1 + z / 2), the classic Chebyshev
# fit (relative error below 1.2e-7 at every z), its coefficients times log2(e) for exp2, E0's less 1 for the 1/2
# of Phi(-|x|) = erfc(|x| / sqrt2) / 2; T_SCALE = 1 / (2 sqrt2) and HALF_LOG2E = log2(e) / 2 turn |x| into z / 2 and
# x^2 into z^2 log2(e).
E0, E1, E2, E3, E4 = (tl.constexpr(-2.825748218), tl.constexpr(1.442729204), tl.constexpr(0.539700616),
                      tl.constexpr(0.139630057), tl.constexpr(-0.26875686))
E5, E6, E7, E8, E9 = (tl.constexpr(0.402321582), tl.constexpr(-1.637753152), tl.constexpr(2.147474464),
                      tl.constexpr(-1.186114945), tl.constexpr(0.246517298))
T_SCALE = tl.constexpr(0.35355339059327373)
HALF_LOG2E = tl.constexpr(0.7213475204444817)
# Constants stand right of tensors in the bodies: under the interpreter `libdevice.tanh(K * x)` with a
# constexpr K fails (the product reaches the libdevice shim wrapped in a constexpr; measured).


@triton.jit
def _gelu_none_16bit(x):
    """gelu(x) = x Phi(x) in fp32 for a result stored in fp16 or bf16, branch-free: Phi(-|x|) = erfc(|x| / sqrt2) / 2
    by the Chebyshev form above through Triton's fast division and exp2 (errors near 2^-22 relative), so relative,
    unlike 1 + erf, into the negative tail (exp2 flushes below 2^-126: -0 from x = -13, ATen's 1 + erf from about
    -5.7); -inf gives NaN as ATen's x (1 + erf) does. Compiled for sm_90: 28.5 instructions an element (load and
    store included) against 36 with libdevice's erf."""
    t = 1.0 / (1.0 + tl.abs(x) * T_SCALE)
    p = E8 + t * E9
    p = E7 + t * p
    p = E6 + t * p
    p = E5 + t * p
    p = E4 + t * p
    p = E3 + t * p
    p = E2 + t * p
    p = E1 + t * p
    p = E0 + t * p
    tail = t * tl.exp2(p - (x * x) * HALF_LOG2E)  # Phi(-|x|)
    return x * tl.where(x < 0, tail, 1.0 - tail)


@triton.jit
def _gelu_none(x, COMMON: tl.constexpr):
    if COMMON == tl.float16 or COMMON == tl.bfloat16:
        r = _gelu_none_16bit(x)
    else:
        r = 0.5 * x * libdevice.erfc(-x * SQRT1_2)  # 0.5 x (1 + erf(x / sqrt2)) without its cancellation
    return r


@triton.jit
def _gelu_tanh(x, COMMON: tl.constexpr):
    cubic = x + (x * x * x) * KAPPA
    if COMMON == tl.float16 or COMMON == tl.bfloat16:
        e = tl.exp2(cubic * TANH_EXP2)  # Triton's fast exp2: its 2^-22 error is far below a 16-bit ulp
    else:
        e = libdevice.exp(-2.0 * (cubic * SQRT_2_OVER_PI))
    return div_for_storage(x, 1.0 + e, COMMON)


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
