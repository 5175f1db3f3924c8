"""linspace (Scalar and 0-d Tensor bounds; out=): ``steps`` values from ``start`` to ``end``, one kernel; logspace.py
raises ``base`` to them with the same kernel.

It follows ATen's CUDA kernel: the bounds are converted to the result dtype first (checked, as Scalar::to:
``linspace(0, 300, 4, dtype=int8)`` raises), ``step = (end - start) / (steps - 1)``, the first half of the
values is ``start + step * i`` and the second ``end - step * (steps - 1 - i)``, so both ends are exact. Floating
results compute in their dtype (fp16/bf16 in fp32, rounding once: ATen rounds each operation to half); integer
results compute in fp32, as ATen's CUDA kernel does (its CPU kernel uses double), and truncate. One value is
``start`` itself; none is an empty tensor. The Tensor overloads read their 0-d bounds on the host, as ATen does.
An out= of another size is resized to ``(steps,)``; one of the right size but not contiguous gets the values
through a contiguous buffer, as in ATen.
"""

import math

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.checks import checked_scalar
from gems.codegen.pointwise import SUPPORTED_DTYPES, float64_bits
from gems.dtypes import ALL
from gems.ops.copy.shared import launch_copy
from gems.ops.creation.fill import INT32_LIMIT, check_options, factory_perf, factory_samples, fill_dense
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

BLOCK = 1024  # one value per thread-slot: the kernel writes steps values, rarely many


@triton.jit
def _bound(bits, OUT: tl.constexpr, COMPUTE: tl.constexpr, INTEGRAL: tl.constexpr):
    """A bound (float64 bits) as ATen holds it: converted to the result dtype, then read in the compute dtype."""
    value = tl.cast(tl.cast(bits, tl.int64), tl.float64, bitcast=True)
    if not INTEGRAL:
        value = value.to(OUT)
    return value.to(COMPUTE)


@triton.jit
def _space_kernel(out_ptr, start_bits, end_bits, base_bits, steps, halfway, stride, INTEGRAL: tl.constexpr,
                  COMPUTE: tl.constexpr, LOG: tl.constexpr, INT64: tl.constexpr, BLOCK: tl.constexpr):
    """out[i * stride] = start + step * i below halfway, end - step * (steps - 1 - i) from it (LOG: base to it)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    out_ty = out_ptr.dtype.element_ty
    start = _bound(start_bits, out_ty, COMPUTE, INTEGRAL)
    end = _bound(end_bits, out_ty, COMPUTE, INTEGRAL)
    span = (end - start).to(COMPUTE)
    intervals = (steps - 1).to(COMPUTE)
    if COMPUTE == tl.float32:
        step = tl.div_rn(span, intervals)  # Triton's fp32 '/' is approximate on the GPU
    else:
        step = span / intervals
    lower = start + step * offs.to(COMPUTE)
    upper = end - step * (steps - 1 - offs).to(COMPUTE)
    values = tl.where(offs < halfway, lower, upper)
    if LOG:
        values = libdevice.pow(_bound(base_bits, out_ty, COMPUTE, INTEGRAL), values)
    tl.store(out_ptr + offs * stride, values.to(out_ty), mask=offs < steps)


_space = Launcher(_space_kernel)


def space_into(out, start, end, steps, base=None):
    """Write linspace (base None) or logspace values into ``out`` (already of ``steps`` elements)."""
    dtype = out.dtype
    if steps == 0:
        return out
    if steps == 1:  # ATen fills start (logspace: base ** start in double), converted as Scalar::to converts
        return fill_dense(out, checked_scalar(start if base is None else _pow(base, start), dtype))
    first, last = checked_scalar(start, dtype), checked_scalar(end, dtype)
    target = out if out.dim() == 1 or out.is_contiguous() else torch.empty(steps, dtype=dtype, device=out.device)
    integral = not dtype.is_floating_point
    compute = torch.float64 if dtype is torch.float64 else torch.float32
    stride = target.stride(0) if target.dim() == 1 else 1
    _space((cdiv(steps, BLOCK),), target, float64_bits(float(first)), float64_bits(float(last)),
           float64_bits(float(base if base is not None else 1.0)), steps, steps // 2, stride, integral,
           _TL[compute], base is not None, steps * max(stride, 1) > INT32_LIMIT, BLOCK)
    if target is not out:
        launch_copy(out, target.view(out.shape))
    return out


_TL = {torch.float32: tl.float32, torch.float64: tl.float64}


def _pow(base, exponent) -> float:
    """std::pow(double, double): NaN where the real power is undefined (Python's ** would be complex)."""
    try:
        return math.pow(float(base), float(exponent))
    except ValueError:
        return math.nan
    except OverflowError:
        return math.inf


def check_space(steps, dtype):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is torch.bool or dtype.is_complex:
        raise Fallback(f"dtype {dtype} not handled by gems linspace/logspace")
    if dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"dtype {dtype} not handled by gems linspace/logspace")


def new_space(start, end, steps, base, dtype, layout, device, pin_memory):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    check_options(dtype, layout, device, pin_memory)
    check_space(steps, dtype)
    return space_into(torch.empty((steps,), dtype=dtype, device=device), start, end, steps, base)


def space_out(start, end, steps, base, out):
    check_space(steps, out.dtype)
    if out.numel() != steps:
        out.resize_((steps,))
    return space_into(out, start, end, steps, base)


def bound_values(name, start, end):
    """The numbers of 0-d tensor bounds (ATen reads them with .item())."""
    for bound in (start, end):
        if isinstance(bound, torch.Tensor) and bound.dim() != 0:
            dims = [b.dim() if isinstance(b, torch.Tensor) else 0 for b in (start, end)]
            raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got start with "
                               f"{dims[0]} dimension(s) and end with {dims[1]} dimension(s).")
    return [b.item() if isinstance(b, torch.Tensor) else b for b in (start, end)]


def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    start, end = bound_values("linspace", start, end)
    return new_space(start, end, steps, None, dtype, layout, device, pin_memory)


def linspace_out(start, end, steps, *, out):
    start, end = bound_values("linspace", start, end)
    return space_out(start, end, steps, None, out)


def _linspace_calls(dtype, device, quick):
    from gems.testing.samples_copy import space_calls

    return space_calls(torch.linspace, "linspace", dtype, device, quick)


SPECS = [
    OpSpec(
        name="linspace", family="creation",
        impls={"linspace": linspace, "linspace.out": linspace_out, "linspace.Tensor_Tensor": linspace,
               "linspace.Tensor_Scalar": linspace, "linspace.Scalar_Tensor": linspace,
               "linspace.Tensor_Tensor_out": linspace_out, "linspace.Tensor_Scalar_out": linspace_out,
               "linspace.Scalar_Tensor_out": linspace_out},
        call=torch.linspace, samples=factory_samples(_linspace_calls), dtypes=ALL[:-1],  # not bool
        perf=factory_perf(lambda like, shape: torch.linspace(-1.5, 2.5, math.prod(shape), dtype=like.dtype,
                                                              device=like.device)),
    ),
]
