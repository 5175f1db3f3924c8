"""One-operand pointwise math: abs, neg, exp, cos, sin, erf, reciprocal, rsqrt.

Precision on the GPU, read from the PTX that triton 3.6 emits for sm_90 (compiled on a machine without
a GPU; not yet measured on one): ``tl.exp`` on fp32 is ``ex2.approx.f32(x * log2e)``, and rounding
``x * log2e`` alone costs up to 2.6e-6 relative (some 20 ulp) at |x| = 80, so exp uses libdevice's
``expf``. ``tl.sin``, ``tl.cos`` and ``tl.erf`` compile to libdevice calls; sin and cos call libdevice
by name because the interpreter then evaluates them with torch's CPU functions, bit for bit ATen's
(numpy's differ by 1 ulp, and the float results of integer inputs are compared exactly). fp32 ``1 / x`` is
``div.full.f32`` (2 ulp) and ``tl.rsqrt`` is ``rsqrt.approx.ftz.f32``, which flushes subnormal inputs to
zero (inf where ATen is finite), so reciprocal and rsqrt use the correctly rounded ``div_rn``/``sqrt_rn``.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.spec import OpSpec
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import unary_samples

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
SIGNED_INTS = (torch.int8, torch.int16, torch.int32, torch.int64)
INTS = (torch.uint8,) + SIGNED_INTS
INTS_AND_BOOL = INTS + (torch.bool,)


# --------------------------------------------------------------------------- scalar bodies
# Integer and bool inputs of the float-valued operators arrive converted to the default float
# dtype (Promotion.INT_TO_FLOAT), as in ATen; fp16/bf16 arrive as fp32.


@triton.jit
def div_rn(a, b):
    """a / b correctly rounded: fp32 ``/`` is ``div.full.f32`` (2 ulp) on NVIDIA GPUs, ATen's is IEEE."""
    # Static if/else, no early return: the GPU compiler still type-checks what follows a `return` in
    # a static branch (tl.div_rn on fp64 fails to compile there), the interpreter never runs it.
    if b.dtype == tl.float64:
        result = a / b  # div.rn.f64
    else:
        result = tl.div_rn(a, b)
    return result


@triton.jit
def _abs(x):
    return tl.abs(x)


@triton.jit
def _neg(x):
    if x.dtype.is_floating():
        r = x * -1.0  # Triton's -x is 0 - x, which makes -(+0.0) +0.0
    else:
        r = -x
    return r


@triton.jit
def _exp(x):
    return libdevice.exp(x)


@triton.jit
def _cos(x):
    return libdevice.cos(x)  # what tl.cos compiles to on the GPU; the interpreter maps it to torch's cos


@triton.jit
def _sin(x):
    return libdevice.sin(x)


@triton.jit
def _erf(x):
    return tl.erf(x)


@triton.jit
def _reciprocal(x):
    return div_rn(1.0, x)


@triton.jit
def _rsqrt(x):
    # Correctly rounded square root and division: subnormal inputs keep their finite result,
    # rsqrt(-0) is -inf and rsqrt(+inf) is 0, as in IEEE arithmetic and ATen.
    if x.dtype == tl.float64:
        root = tl.sqrt(x)
    else:
        root = tl.sqrt_rn(x)
    return div_rn(1.0, root)


abs_op = PointwiseOp("abs", _abs, operands=1, dtypes=FLOATS + INTS)  # bool: NotImplementedError, as ATen
neg_op = PointwiseOp("neg", _neg, operands=1)
exp_op = PointwiseOp("exp", _exp, operands=1, promotion=Promotion.INT_TO_FLOAT)
cos_op = PointwiseOp("cos", _cos, operands=1, promotion=Promotion.INT_TO_FLOAT)
sin_op = PointwiseOp("sin", _sin, operands=1, promotion=Promotion.INT_TO_FLOAT)
erf_op = PointwiseOp("erf", _erf, operands=1, promotion=Promotion.INT_TO_FLOAT)
reciprocal_op = PointwiseOp("reciprocal", _reciprocal, operands=1, promotion=Promotion.INT_TO_FLOAT)
rsqrt_op = PointwiseOp("rsqrt", _rsqrt, operands=1, promotion=Promotion.INT_TO_FLOAT)


# --------------------------------------------------------------------------- overloads


def reject_bool_neg(x):
    if x.dtype is torch.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def checked_overloads(op, name, check, inplace=True, out=True) -> dict:
    """:func:`unary_overloads` with ``check(x)`` first: it raises ATen's error for an input ATen
    refuses with another exception than PointwiseOp's NotImplementedError (neg and relu of bool)."""

    def functional(self):
        check(self)
        return op(self)

    def in_place(self):
        check(self)
        return op(self, out=self, inplace=True)

    def with_out(self, *, out):
        check(self)
        return op(self, out=out)

    table = {name: functional}
    if inplace:
        table[f"{name}_"] = in_place
    if out:
        table[f"{name}.out"] = with_out
    return table


def _float_valued(op, name, torch_fn, inplace_fn, grad_expects=None, domain=None):
    """The declaration of a float-valued one-operand operator that also takes integers and bool."""
    return OpSpec(
        name=name, family="pointwise", impls=unary_overloads(op, name), call=torch_fn,
        samples=unary_samples(out=f"{name}.out", inplace=(f"{name}_", inplace_fn), grad=True,
                              grad_expects=grad_expects, domain=domain),
        dtypes=FLOATS + INTS_AND_BOOL, perf=pointwise_perf(1, domain=domain),
    )


# rsqrt of a negative number is NaN: keep most random values where the function is defined.
_POSITIVE = {"low": 0.01, "high": 10.0, "int_low": 0, "int_high": 100}

SPECS = [
    OpSpec(
        name="abs", family="pointwise", impls=unary_overloads(abs_op, "abs"), call=torch.abs,
        samples=unary_samples(out="abs.out", inplace=("abs_", torch.abs_), grad=True, rejects=(torch.bool,)),
        dtypes=FLOATS + INTS, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="neg", family="pointwise", impls=checked_overloads(neg_op, "neg", reject_bool_neg), call=torch.neg,
        samples=unary_samples(out="neg.out", inplace=("neg_", torch.neg_), grad=True, rejects=(torch.bool,)),
        dtypes=FLOATS + INTS, perf=pointwise_perf(1),
    ),
    _float_valued(exp_op, "exp", torch.exp, torch.exp_),
    # The derivatives of cos and sin are computed by sin and cos: the grad samples prove both ran.
    _float_valued(cos_op, "cos", torch.cos, torch.cos_, grad_expects=("cos", "sin")),
    _float_valued(sin_op, "sin", torch.sin, torch.sin_, grad_expects=("sin", "cos")),
    _float_valued(erf_op, "erf", torch.erf, torch.erf_, grad_expects=("erf", "exp")),
    _float_valued(reciprocal_op, "reciprocal", torch.reciprocal, torch.reciprocal_),
    _float_valued(rsqrt_op, "rsqrt", torch.rsqrt, torch.rsqrt_, domain=_POSITIVE),
]
