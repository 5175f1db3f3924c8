"""What the pointwise operators share: scalar Triton helpers, overload tables built from a
:class:`PointwiseOp`, ATen's ``alpha`` check, and the references to the family's sample and perf
generators (imported only when conformance or perf first calls them, so registering operators loads
no test code).
"""

import torch
import triton
import triton.language as tl

from gems.runtime import selection
from gems.spec import lazy, lazy_perf

# Whether max/min give +0.0 over -0.0 (Capabilities.ordered_zeros): the device's ATen decides.
ORDERED_ZEROS = tl.constexpr(selection.current().capabilities.ordered_zeros)

# --------------------------------------------------------------------------- scalar helpers


@triton.jit
def log1p_reduced(t):
    """ln(1 + t) in fp32 for t in [sqrt(1/2) - 1, sqrt(2) - 1]: t + t^2 Q(t), Q fitted to fp32 accuracy (error
    below 5e-8); the mantissa step of a logarithm reduced as ln(m 2^e) = ln m + e ln 2, m = 1 + t (randn's
    philox.log_unit, asinh)."""
    q = 0.09226633608341217 * t - 0.1435229629278183
    q = q * t + 0.1477501094341278
    q = q * t - 0.16562022268772125
    q = q * t + 0.1997445970773697
    q = q * t - 0.2500205934047699
    q = q * t + 0.33333641290664673
    q = q * t - 0.4999999403953552
    return t + t * t * q


@triton.jit
def log_positive_f32(v):
    """ln v in fp32 for normal finite v > 0, branch-free (libdevice's logf has a branch per element): v = m 2^e
    with m in [sqrt(1/2), sqrt(2)) from v's bits, e ln 2 + log1p_reduced(m - 1) (m - 1 exact); absolute error
    below 1e-7."""
    bits = v.to(tl.int32, bitcast=True)
    exponent = (bits - 0x3F3504F3) >> 23
    t = (bits - (exponent << 23)).to(tl.float32, bitcast=True) - 1.0
    return exponent.to(tl.float32) * 0.6931471805599453 + log1p_reduced(t)


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
def div_for_storage(a, b, STORED: tl.constexpr):
    """a / b for a result stored in STORED (the operator's common dtype: PointwiseOp(common_arg=True)). Stored in
    fp16 or bf16, Triton's fp32 '/' (div.full.f32, within 2 ulp) is used: the 16-bit rounding (2^-11 or 2^-8
    relative) dwarfs that error. Anything else divides as div_rn. div_rn's ~25 instructions an element (FCHK, a
    slow-path call) make a 16-bit operator that moves 4 bytes an element compute-bound: hardswish was 0.51x ATen
    at 64M on an H200 with it, hardsigmoid 0.53x."""
    if (STORED == tl.float16) or (STORED == tl.bfloat16):
        result = a / b
    else:
        result = div_rn(a, b)
    return result


@triton.jit
def fdiv(x, y):
    """x / y with IEEE rounding for fp32 operands (Triton's fp32 '/' is approximate on the GPU); other
    dtypes divide with '/'."""
    if x.dtype == tl.float32:
        q = tl.div_rn(x, y)
    else:
        q = x / y
    return q


@triton.jit
def max_nan(x, y):
    """The larger of x and y; NaN in either operand wins (bool: logical or)."""
    if x.dtype == tl.int1:
        r = x | y
    else:
        r = tl.where((x > y) | (x != x), x, y)
        if ORDERED_ZEROS and x.dtype.is_floating():
            r = tl.where(x == 0, tl.where(y == 0, x + y, r), r)  # two zeros: -0.0 only if both are
    return r


@triton.jit
def min_nan(x, y):
    """The smaller of x and y; NaN in either operand wins (bool: logical and)."""
    if x.dtype == tl.int1:
        r = x & y
    else:
        r = tl.where((x < y) | (x != x), x, y)
        if ORDERED_ZEROS and x.dtype.is_floating():
            # two zeros: +0.0 only if both are (negated by * -1: Triton's unary minus is 0 - x, which loses -0.0)
            r = tl.where(x == 0, tl.where(y == 0, (x * -1 + y * -1) * -1, r), r)
    return r


# --------------------------------------------------------------------------- overload tables


def checked_overloads(op, name, check, inplace=True, out=True) -> dict:
    """:func:`gems.codegen.pointwise.unary_overloads` with ``check(x)`` first: it raises ATen's error for
    an input ATen refuses with another exception than PointwiseOp's NotImplementedError (neg and relu of
    bool)."""

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


def out_of(op):
    """``f(self, other, *, out)`` for a two-operand op."""

    def with_out(self, other, *, out):
        return op(self, other, out=out)

    return with_out


def inplace_of(op):
    """``f_(self, other)`` for a two-operand op."""

    def in_place(self, other):
        return op(self, other, out=self, inplace=True)

    return in_place


def backward_overloads(op, name) -> dict:
    """{name: op(grad_output, x), name.grad_input: op(grad_output, x, out=grad_input)}."""

    def with_grad_input(grad_output, x, *, grad_input):
        return op(grad_output, x, out=grad_input)

    return {name: op, f"{name}.grad_input": with_grad_input}


def check_alpha(self, other, alpha):
    """ATen refuses an alpha its result type cannot hold (add, sub)."""
    if alpha == 1 and type(alpha) is int:
        return
    dtype = torch.result_type(self, other)
    if isinstance(alpha, bool) and dtype != torch.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


# --------------------------------------------------------------------------- lazy generator references


def unary_samples(**traits):
    """gems.testing.samples.UnarySamples(**traits), made on first use."""
    return lazy("gems.testing.samples", "unary_samples", **traits)


def backward_samples(**traits):
    """gems.testing.samples.BackwardSamples(**traits), made on first use."""
    return lazy("gems.testing.samples", "backward_samples", **traits)


def binary_samples(call, **traits):
    """gems.testing.samples_extra.binary_op_samples(call, **traits), made on first use."""
    return lazy("gems.testing.samples_extra", "binary_op_samples", call, **traits)


def comparison_samples(name, call):
    """gems.testing.samples_extra.comparison_samples for the comparison ``name`` (eq, lt...)."""
    return lazy("gems.testing.samples_extra", "comparison_samples", name, call,
                (f"{name}.Tensor_out", f"{name}.Scalar_out"))


def combined(*parts):
    """gems.testing.samples.combined(*parts): generators, or (variant suffix, generator) pairs."""
    return lazy("gems.testing.samples", "combined", *parts)


def edge_samples(generator, *args, **kwargs):
    """gems.testing.samples_edges.<generator>(*args, **kwargs), made on first use: the numeric edges
    (integer extremes, exact halves, subnormal intermediates) that random values miss."""
    return lazy("gems.testing.samples_edges", generator, *args, **kwargs)


def pointwise_perf(operands, **options):
    """gems.testing.perf_inputs.pointwise_perf(operands, **options) on the "pointwise" shapes."""
    return lazy_perf("gems.testing.perf_inputs", "pointwise_perf", operands, shapes="pointwise", **options)


# --------------------------------------------------------------------------- ternary operators (addcmul, addcdiv, lerp)


def accumulate_scalar(value, common, on_cpu):
    """``value`` (addcmul's and addcdiv's) as ATen's kernels take it: converted with Scalar::to's overflow check
    to the accumulate type, fp32 for fp16/bf16/fp32 and fp64 for fp64; for integers int64 on CUDA (a float
    value is truncated) but the tensors' own dtype on the CPU (``on_cpu``), whose kernel converts to that."""
    from gems.checks import checked_scalar

    if common.is_floating_point:
        target = torch.float64 if common is torch.float64 else torch.float32
    else:
        target = common if on_cpu else torch.int64
    return checked_scalar(value, target)


def check_cpu_scalars(name, tensors, refused):
    """ATen's CUDA kernels of addcmul, addcdiv and lerp read a CPU 0-d tensor beside CUDA tensors only in one
    operand (addcmul's tensor2, lerp's weight). ``tensors``: every tensor operand; ``refused``: (argument name,
    tensor) pairs of the others: one that is a CPU 0-d tensor beside a CUDA tensor raises RuntimeError, as
    ATen does."""
    if any(t.is_cuda for t in tensors):  # unreached on the interpreter: CUDA
        for argument, tensor in refused:
            if tensor.dim() == 0 and tensor.is_cpu:
                raise RuntimeError(f"CPU Scalar support for {argument} argument is not supported when calling "
                                   f"{name} on CUDA tensors.")


def checked_binary_overloads(op, check):
    """(functional, in-place, out=) implementations of a two-operand op with ``check(self, other)`` first
    (fmod and remainder: ATen's CPU error for an integer division by zero)."""

    def functional(self, other):
        check(self, other)
        return op(self, other)

    def in_place(self, other):
        check(self, other)
        return op(self, other, out=self, inplace=True)

    def with_out(self, other, *, out):
        check(self, other)
        return op(self, other, out=out)

    return functional, in_place, with_out
