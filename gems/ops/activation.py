"""Activations and their backward operators: relu, sigmoid, tanh, silu, gelu ("none" and "tanh").

Training runs gems kernels end to end: ATen's autograd formulas call sigmoid_backward,
tanh_backward, silu_backward, gelu_backward and threshold_backward (relu's backward), declared here.

Numerics. fp16/bf16 are computed in fp32. exp, erfc and tanh come from libdevice (``tl.exp`` on fp32
is ``ex2.approx`` of ``x * log2e``, see unary_math), fp32 divisions are correctly rounded (``div_rn``).
Forward formulas are the ones ATen evaluates except gelu's, which avoid cancellation:
``0.5 x erfc(-x/sqrt2)`` and, for "tanh", ``0.5 x (1 + tanh u) = x / (1 + exp(-2u))``. Backward
formulas follow ATen's (gelu's normal cdf as ``0.5 erfc(-x/sqrt2)``), so NaN and infinity come out
where ATen's do (gelu_backward(inf) is NaN, for instance); the one exception is documented at
``_gelu_tanh_backward``.

fp16/bf16 gelu ("none") and its backward take ATen's own ``1 + erf`` form and, in the backward, the
fast ``tl.exp``: erfc is several times the work of erf, and in 2-byte dtypes these kernels are bound
by arithmetic, not memory (0.64x of ATen at 64M elements on an H200 with erfc, 0.96-1.0x without).
The fp32 cancellation of ``1 + erf`` is an absolute error below 1e-7 |x|, inside fp16/bf16 tolerance.
"""

import dataclasses

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.ops.unary_math import FLOATS, INTS, INTS_AND_BOOL, checked_overloads, div_rn
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, Sample
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import REJECT_HOST_DTYPE, backward_samples, combined, make_tensor, unary_samples

SQRT1_2 = tl.constexpr(0.7071067811865476)  # 1 / sqrt(2)
INV_SQRT_2PI = tl.constexpr(0.3989422804014327)  # 1 / sqrt(2 pi): the normal density's factor
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)  # the "tanh" approximation's beta, sqrt(2 / pi)
KAPPA = tl.constexpr(0.044715)  # the "tanh" approximation's cubic coefficient
INF = tl.constexpr(float("inf"))
# Beyond this |x| the "tanh" approximation's tanh is +-1 and its second derivative term exactly 0.
GELU_TANH_CLAMP = tl.constexpr(1e10)
# Constants stand right of tensors in the bodies: under the interpreter `libdevice.tanh(K * x)` with a
# constexpr K fails (the product reaches the libdevice shim wrapped in a constexpr; measured).


# --------------------------------------------------------------------------- forward bodies


@triton.jit
def _relu(x):
    # where, not maximum: NaN stays NaN (max.f32 on the GPU returns the other operand).
    return tl.where(x < 0, 0, x)


@triton.jit
def _sigmoid(x):
    return div_rn(1.0, 1.0 + libdevice.exp(-x))


@triton.jit
def _tanh(x):
    return libdevice.tanh(x)


@triton.jit
def _silu(x):
    return div_rn(x, 1.0 + libdevice.exp(-x))


@triton.jit
def _gelu_none(x, COMMON: tl.constexpr):
    if COMMON == tl.float16 or COMMON == tl.bfloat16:
        r = 0.5 * x * (1.0 + libdevice.erf(x * SQRT1_2))  # see the module docstring
    else:
        r = 0.5 * x * libdevice.erfc(-x * SQRT1_2)  # 0.5 x (1 + erf(x / sqrt2)) without its cancellation
    return r


@triton.jit
def _gelu_tanh(x):
    inner = (x + (x * x * x) * KAPPA) * SQRT_2_OVER_PI
    return div_rn(x, 1.0 + libdevice.exp(-2.0 * inner))


# --------------------------------------------------------------------------- backward bodies


@triton.jit
def _threshold_backward(grad, x, threshold):
    # NaN x keeps the gradient, as ATen's `x <= threshold ? 0 : grad`.
    return tl.where(x <= threshold, 0.0, grad)


@triton.jit
def _sigmoid_backward(grad, y):
    return grad * (1.0 - y) * y


@triton.jit
def _tanh_backward(grad, y):
    return grad * (1.0 - y * y)


@triton.jit
def _silu_backward(grad, x):
    sigmoid = div_rn(1.0, 1.0 + libdevice.exp(-x))
    return grad * sigmoid * (1.0 + x * (1.0 - sigmoid))


@triton.jit
def _gelu_none_backward(grad, x, COMMON: tl.constexpr):
    if COMMON == tl.float16 or COMMON == tl.bfloat16:
        cdf = 0.5 * (1.0 + libdevice.erf(x * SQRT1_2))  # see the module docstring
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
    return result  # one return after the static if/else (see unary_math.div_rn)


relu_op = PointwiseOp("relu", _relu, operands=1)
sigmoid_op = PointwiseOp("sigmoid", _sigmoid, operands=1, promotion=Promotion.INT_TO_FLOAT)
tanh_op = PointwiseOp("tanh", _tanh, operands=1, promotion=Promotion.INT_TO_FLOAT)
silu_op = PointwiseOp("silu", _silu, operands=1, dtypes=FLOATS)
gelu_ops = {"none": PointwiseOp("gelu", _gelu_none, operands=1, dtypes=FLOATS, common_arg=True),
            "tanh": PointwiseOp("gelu", _gelu_tanh, operands=1, dtypes=FLOATS)}
threshold_backward_op = PointwiseOp("threshold_backward", _threshold_backward, operands=2, scalars=("threshold",),
                                    dtypes=FLOATS)
sigmoid_backward_op = PointwiseOp("sigmoid_backward", _sigmoid_backward, operands=2, dtypes=FLOATS)
tanh_backward_op = PointwiseOp("tanh_backward", _tanh_backward, operands=2, dtypes=FLOATS)
silu_backward_op = PointwiseOp("silu_backward", _silu_backward, operands=2, dtypes=FLOATS)
gelu_backward_ops = {"none": PointwiseOp("gelu_backward", _gelu_none_backward, operands=2, dtypes=FLOATS,
                                          common_arg=True),
                     "tanh": PointwiseOp("gelu_backward", _gelu_tanh_backward, operands=2, dtypes=FLOATS)}


# --------------------------------------------------------------------------- wrappers


def _reject_bool_relu(x):
    if x.dtype == torch.bool:
        raise RuntimeError("Boolean inputs not supported for relu")


def _gelu_op(table, approximate):
    op = table.get(approximate)
    if op is None:
        raise RuntimeError("approximate argument must be either none or tanh.")
    return op


def gelu(self, *, approximate="none"):
    return _gelu_op(gelu_ops, approximate)(self)


def gelu_(self, *, approximate="none"):
    return _gelu_op(gelu_ops, approximate)(self, out=self, inplace=True)


def gelu_out(self, *, approximate="none", out):
    return _gelu_op(gelu_ops, approximate)(self, out=out)


def gelu_backward(grad_output, self, *, approximate="none"):
    return _gelu_op(gelu_backward_ops, approximate)(grad_output, self)


def gelu_backward_grad_input(grad_output, self, *, approximate="none", grad_input):
    return _gelu_op(gelu_backward_ops, approximate)(grad_output, self, out=grad_input)


def _backward_overloads(op, name):
    """{name: op(grad_output, x), name.grad_input: op(grad_output, x, out=grad_input)}."""

    def with_grad_input(grad_output, x, *, grad_input):
        return op(grad_output, x, out=grad_input)

    return {name: op, f"{name}.grad_input": with_grad_input}


def _check_threshold_operands(grad_output, x):
    # ATen also takes integer tensors here, rounding the threshold to the integer type first; relu's
    # backward never passes them, so they stay with ATen. A float64 threshold is exact: PointwiseOp
    # passes float scalars of a float64 operator as their 64-bit patterns.
    if not (grad_output.is_floating_point() or x.is_floating_point()) and not (
            grad_output.dtype is torch.bool and x.dtype is torch.bool):  # bool: the op raises ATen's error
        raise Fallback("threshold_backward on integer tensors")


def threshold_backward(grad_output, self, threshold):
    _check_threshold_operands(grad_output, self)
    return threshold_backward_op(grad_output, self, threshold)


def threshold_backward_grad_input(grad_output, self, threshold, *, grad_input):
    _check_threshold_operands(grad_output, self)
    return threshold_backward_op(grad_output, self, threshold, out=grad_input)


# --------------------------------------------------------------------------- declarations


def _relu_out(x):
    """torch.relu has no ``out=``; the overload does."""
    return torch.ops.aten.relu.out(x, out=torch.empty(0, dtype=x.dtype, device=x.device))


def _silu_out(x):
    return torch._C._nn.silu(x, out=torch.empty(0, dtype=x.dtype, device=x.device))


def _silu_inplace(x):
    return torch.nn.functional.silu(x, inplace=True)


def _gelu_inplace(x, **kwargs):
    return torch._C._nn.gelu_(x, **kwargs)


def _bad_gelu_approximation(dtype, device, quick):
    if dtype != REJECT_HOST_DTYPE:
        return []
    return [Sample("error-approximate", (make_tensor((3, 4), dtype, device),), {"approximate": "erf"})]


def _with_scalars(perf, *scalars):
    """A pointwise PerfSpec whose calls take trailing scalar arguments too (a threshold)."""
    inputs = perf.inputs

    def with_scalars(shape, dtype, device):
        sample = inputs(shape, dtype, device)
        sample.args = (*sample.args, *scalars)
        return sample

    return dataclasses.replace(perf, inputs=with_scalars)


aten = torch.ops.aten
_NOT_FLOAT = (torch.int64, torch.bool)

SPECS = [
    OpSpec(
        name="relu", family="pointwise", impls=checked_overloads(relu_op, "relu", _reject_bool_relu),
        call=torch.relu,
        samples=unary_samples(out=("relu.out", _relu_out), inplace=("relu_", torch.relu_), grad=True,
                              grad_expects=("relu", "threshold_backward"), rejects=(torch.bool,)),
        dtypes=FLOATS + INTS, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="sigmoid", family="pointwise", impls=unary_overloads(sigmoid_op, "sigmoid"),
        call=torch.sigmoid,
        samples=unary_samples(out="sigmoid.out", inplace=("sigmoid_", torch.sigmoid_), grad=True,
                              grad_expects=("sigmoid", "sigmoid_backward")),
        dtypes=FLOATS + INTS_AND_BOOL, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="tanh", family="pointwise", impls=unary_overloads(tanh_op, "tanh"),
        call=torch.tanh,
        samples=unary_samples(out="tanh.out", inplace=("tanh_", torch.tanh_), grad=True,
                              grad_expects=("tanh", "tanh_backward")),
        dtypes=FLOATS + INTS_AND_BOOL, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="silu", family="pointwise", impls=unary_overloads(silu_op, "silu"),
        call=torch.nn.functional.silu,
        samples=unary_samples(out=("silu.out", _silu_out), inplace=("silu_", _silu_inplace), grad=True,
                              grad_expects=("silu", "silu_backward"), rejects=_NOT_FLOAT),
        dtypes=FLOATS, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="gelu", family="pointwise", impls={"gelu": gelu, "gelu_": gelu_, "gelu.out": gelu_out},
        call=torch.nn.functional.gelu,
        samples=combined(
            unary_samples(out="gelu.out", inplace=("gelu_", _gelu_inplace), grad=True,
                          grad_expects=("gelu", "gelu_backward"), rejects=_NOT_FLOAT,
                          more=_bad_gelu_approximation),
            ("tanh", unary_samples(out="gelu.out", inplace=("gelu_", _gelu_inplace), grad=True,
                                   grad_expects=("gelu", "gelu_backward"), extra={"approximate": "tanh"})),
        ),
        dtypes=FLOATS, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="threshold_backward", family="pointwise",
        impls={"threshold_backward": threshold_backward,
               "threshold_backward.grad_input": threshold_backward_grad_input},
        call=aten.threshold_backward.default,
        samples=combined(
            backward_samples(grad_input=("threshold_backward.grad_input", aten.threshold_backward.grad_input),
                             scalars=(0,)),
            ("threshold", backward_samples(scalars=(1.5,))),
        ),
        dtypes=FLOATS, perf=_with_scalars(pointwise_perf(2), 0),
    ),
    OpSpec(
        name="sigmoid_backward", family="pointwise",
        impls=_backward_overloads(sigmoid_backward_op, "sigmoid_backward"), call=aten.sigmoid_backward.default,
        samples=backward_samples(grad_input=("sigmoid_backward.grad_input", aten.sigmoid_backward.grad_input),
                                 domain={"low": 0.0, "high": 1.0}, rejects=_NOT_FLOAT),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="tanh_backward", family="pointwise",
        impls=_backward_overloads(tanh_backward_op, "tanh_backward"), call=aten.tanh_backward.default,
        samples=backward_samples(grad_input=("tanh_backward.grad_input", aten.tanh_backward.grad_input),
                                 domain={"low": -1.0, "high": 1.0}, rejects=_NOT_FLOAT),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="silu_backward", family="pointwise",
        impls=_backward_overloads(silu_backward_op, "silu_backward"), call=aten.silu_backward.default,
        samples=backward_samples(grad_input=("silu_backward.grad_input", aten.silu_backward.grad_input),
                                 rejects=_NOT_FLOAT),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
    OpSpec(
        name="gelu_backward", family="pointwise",
        impls={"gelu_backward": gelu_backward, "gelu_backward.grad_input": gelu_backward_grad_input},
        call=aten.gelu_backward.default,
        samples=combined(
            # No broadcast variant for "none": ATen's CPU kernel raises a oneDNN error ("could not create a
            # primitive descriptor for the reorder primitive") when x broadcasts against grad_output in
            # fp16/bf16/fp32 (measured, torch 2.13), so the case cannot pass on the CPU vendor.
            backward_samples(grad_input=("gelu_backward.grad_input", aten.gelu_backward.grad_input),
                             rejects=_NOT_FLOAT, broadcast=False),
            ("tanh", backward_samples(grad_input=("gelu_backward.grad_input", aten.gelu_backward.grad_input),
                                      extra={"approximate": "tanh"})),
        ),
        dtypes=FLOATS, perf=pointwise_perf(2),
    ),
]
