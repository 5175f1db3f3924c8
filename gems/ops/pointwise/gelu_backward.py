"""gelu_backward, approximate "none" and "tanh": ATen's formulas (the normal cdf as ``0.5 erfc(-x/sqrt2)``),
so NaN and infinity come out where ATen's do (gelu_backward(inf) is NaN, for instance); the one exception
is documented at ``_gelu_tanh_backward``. fp16/bf16 "none" takes ``1 + erf`` and the fast ``tl.exp``, for
the reason given in gelu.py.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.gelu import KAPPA, SQRT1_2, SQRT_2_OVER_PI, approximation
from gems.ops.pointwise.shared import backward_samples, combined, div_rn, pointwise_perf
from gems.spec import OpSpec

INV_SQRT_2PI = tl.constexpr(0.3989422804014327)  # 1 / sqrt(2 pi): the normal density's factor
INF = tl.constexpr(float("inf"))
# Beyond this |x| the "tanh" approximation's tanh is +-1 and its second derivative term exactly 0.
GELU_TANH_CLAMP = tl.constexpr(1e10)


@triton.jit
def _gelu_none_backward(grad, x, COMMON: tl.constexpr):
    if COMMON == tl.float16 or COMMON == tl.bfloat16:
        cdf = 0.5 * (1.0 + libdevice.erf(x * SQRT1_2))  # see gelu.py
        pdf = tl.exp(-0.5 * x * x) * INV_SQRT_2PI
    else:
        cdf = 0.5 * libdevice.erfc(-x * SQRT1_2)
        pdf = libdevice.exp(-0.5 * x * x) * INV_SQRT_2PI
    return grad * (cdf + x * pdf)


@triton.jit
def _gelu_tanh_backward(grad, x):
    """d/dx 0.5 x (1 + tanh u), u = beta (x + kappa x^3).

    fp64 evaluates ATen's formula, 0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2), whose overflow
    and NaN the float64 oracle shares. In fp32 that formula cancels (1 + t, 1 - t^2 as t -> -1): about
    1e-4 relative error near x = -4. With s = sigmoid(2u) = (1 + t) / 2 and 1 - t^2 = 4 s (1 - s), the
    derivative is s (1 + 2 x (1 - s) beta (1 + 3 kappa x^2)), free of that cancellation. x is clamped
    where t is already +-1 so that x*x cannot overflow (the fp64 oracle is finite for every finite fp32
    x); infinite x gives NaN, as in ATen.
    """
    if x.dtype == tl.float64:
        x_sq = x * x
        t = libdevice.tanh((x + (x_sq * x) * KAPPA) * SQRT_2_OVER_PI)
        left_derivative = 0.5 * (1.0 + t)
        right_derivative = 0.5 * x * (1.0 - t * t) * ((x_sq * (3.0 * KAPPA) + 1.0) * SQRT_2_OVER_PI)
        result = grad * (left_derivative + right_derivative)
    else:
        xc = tl.where(x > GELU_TANH_CLAMP, GELU_TANH_CLAMP, tl.where(x < -GELU_TANH_CLAMP, -GELU_TANH_CLAMP, x))
        x_sq = xc * xc
        two_u = (xc + (x_sq * xc) * KAPPA) * (2.0 * SQRT_2_OVER_PI)
        # sigmoid(2u) and sigmoid(-2u) from one exp of a non-positive number: neither overflows.
        e = libdevice.exp(-tl.abs(two_u))
        p = div_rn(1.0, 1.0 + e)
        q = e * p
        s = tl.where(two_u >= 0, p, q)
        s_complement = tl.where(two_u >= 0, q, p)
        derivative = s * (1.0 + 2.0 * xc * s_complement * ((x_sq * (3.0 * KAPPA) + 1.0) * SQRT_2_OVER_PI))
        # + 0.0: ATen's derivative 0.5 (1 + t) + ... is +0.0 where it vanishes, this product may be -0.0.
        result = tl.where(tl.abs(x) == INF, INF - INF, grad * (derivative + 0.0))  # NaN (a NaN global breaks the JIT)
    return result  # one return after the static if/else (see shared.div_rn)


gelu_backward_ops = {"none": PointwiseOp("gelu_backward", _gelu_none_backward, operands=2, dtypes=FLOATS,
                                          common_arg=True),
                     "tanh": PointwiseOp("gelu_backward", _gelu_tanh_backward, operands=2, dtypes=FLOATS)}


def gelu_backward(grad_output, self, *, approximate="none"):
    return approximation(gelu_backward_ops, approximate)(grad_output, self)


def gelu_backward_grad_input(grad_output, self, *, approximate="none", grad_input):
    return approximation(gelu_backward_ops, approximate)(grad_output, self, out=grad_input)


aten = torch.ops.aten

SPECS = [
    OpSpec(
        name="gelu_backward", family="pointwise",
        impls={"gelu_backward": gelu_backward, "gelu_backward.grad_input": gelu_backward_grad_input},
        call=aten.gelu_backward.default,
        samples=combined(
            # No broadcast variant for "none": ATen's CPU kernel raises a oneDNN error ("could not create a
            # primitive descriptor for the reorder primitive") when x broadcasts against grad_output in
            # fp16/bf16/fp32 (measured, torch 2.13), so the case cannot pass on the CPU vendor.
            backward_samples(grad_input=("gelu_backward.grad_input", aten.gelu_backward.grad_input),
                             rejects=(torch.int64, torch.bool), broadcast=False),
            ("tanh", backward_samples(grad_input=("gelu_backward.grad_input", aten.gelu_backward.grad_input),
                                      extra={"approximate": "tanh"})),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
