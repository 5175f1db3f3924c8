"""Factories: ones, zeros, full, arange, ones_like, zeros_like, full_like (and their out= forms).

Two small kernels: a fill that writes one value over a dense block of memory, and an iota that
writes ``start + i * step``. A factory allocates with ATen's allocator (torch.empty / empty_like,
which also give ``*_like`` the layout rules of ``memory_format``) and launches one of them.

The fill value goes through ATen's checked conversion (``Scalar::to``): ``full((2,), 300,
dtype=torch.int8)`` raises, a float is truncated for integer dtypes, anything is True for bool.
arange follows ATen's arange_out: the length from doubles (from int64 for int64 results), values
in the accumulation type (int64 for integers, double for floating types).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import SUPPORTED_DTYPES, PointwiseOp, float64_bits, is_dense, pointwise_config
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec
from gems.testing.samples import shape_for
from gems.testing.samples_extra import creation_perf, creation_samples, like_samples, out_tensors

_INT32_LIMIT = 2**31 - 1
_INT_RANGE = {torch.int8: (-(2**7), 2**7 - 1), torch.int16: (-(2**15), 2**15 - 1),
              torch.int32: (-(2**31), 2**31 - 1), torch.int64: (-(2**63), 2**63 - 1), torch.uint8: (0, 255)}
_FLOAT_MAX = {torch.float16: torch.finfo(torch.float16).max, torch.bfloat16: torch.finfo(torch.bfloat16).max,
              torch.float32: torch.finfo(torch.float32).max}
# The C++ type names in ATen's overflow message.
_C_NAMES = {torch.int8: "int8_t", torch.int16: "int16_t", torch.int32: "int", torch.int64: "int64_t",
            torch.uint8: "uint8_t", torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16",
            torch.float32: "float", torch.float64: "double"}


# --------------------------------------------------------------------------- kernels


@triton.jit
def _fill_kernel(out_ptr, value, n_elements, VALUE_BITS: tl.constexpr, INT64: tl.constexpr, BLOCK: tl.constexpr):
    """out[i] = value for i < n_elements (a dense block); a float64 value arrives as its bits."""
    pid = tl.program_id(0)
    if INT64:
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if VALUE_BITS:
        v = tl.cast(tl.cast(value, tl.int64), tl.float64, bitcast=True)
    else:
        v = value
    vals = tl.full([BLOCK], v, out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, vals, mask=offs < n_elements)


@triton.jit
def _arange_kernel(out_ptr, start, step, n_elements, FLOAT: tl.constexpr, INT64: tl.constexpr,
                   BLOCK: tl.constexpr):
    """out[i] = start + i * step: in float64 (start, step as bits) or in int64."""
    pid = tl.program_id(0)
    if INT64:
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if FLOAT:
        first = tl.cast(tl.cast(start, tl.int64), tl.float64, bitcast=True)
        delta = tl.cast(tl.cast(step, tl.int64), tl.float64, bitcast=True)
        vals = first + offs.to(tl.float64) * delta
    else:
        vals = tl.cast(start, tl.int64) + offs.to(tl.int64) * tl.cast(step, tl.int64)
    tl.store(out_ptr + offs, vals.to(out_ptr.dtype.element_ty), mask=offs < n_elements)


@triton.jit
def _fill_strided(x, value):
    return tl.where(x == x, value, value)  # the value at every position of x (NaN positions too)


_fill = Launcher(_fill_kernel)
_arange = Launcher(_arange_kernel)
# A strided out= tensor is filled through the pointwise generator, which walks any layout.
_fill_strided_op = PointwiseOp("fill_strided", _fill_strided, operands=2)


# --------------------------------------------------------------------------- helpers


def checked_scalar(value, dtype: torch.dtype):
    """``value`` converted to a Python number of ``dtype``'s kind, refusing what ATen's
    ``Scalar::to<T>()`` refuses (RuntimeError "value cannot be converted to type T without overflow")."""
    if dtype is torch.bool:
        return bool(value)
    if dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"dtype {dtype} not handled by gems kernels")
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(dtype, dtype)} without overflow")
        value = value.real
    if dtype.is_floating_point:
        v = float(value)
        limit = _FLOAT_MAX.get(dtype)
        if limit is not None and math.isfinite(v) and abs(v) > limit:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype]} without overflow")
        return v
    lo, hi = _INT_RANGE[dtype]
    if isinstance(value, float):
        if not math.isfinite(value) or value < lo or value > hi:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype]} without overflow")
        return int(value)  # truncation towards zero, as a C++ cast
    v = int(value)
    if dtype is torch.uint8:
        # An unsigned target accepts negative values down to -max, which wrap (c10::overflows).
        bad = v > hi or (v < 0 and -v > hi)
    else:
        bad = v < lo or v > hi
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype]} without overflow")
    return v


_device_type = []


def _vendor_device_type() -> str:
    if not _device_type:
        _device_type.append(torch.device(selection.current().device).type)
    return _device_type[0]


def _check_options(dtype, layout, device, pin_memory):
    if layout not in (None, torch.strided):
        raise Fallback(f"layout {layout} is not strided")
    if pin_memory:
        raise Fallback("pin_memory=True")
    if dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"dtype {dtype} not handled by gems fill kernels")
    if device is not None and torch.device(device).type != _vendor_device_type():
        raise Fallback(f"device {device} is not the vendor's device")


def _fill_dense(out: torch.Tensor, value) -> torch.Tensor:
    """Write ``value`` (already converted by :func:`checked_scalar`) into every element of ``out``."""
    numel = out.numel()
    if numel == 0:
        return out
    if not is_dense(out):
        _fill_strided_op(out, value, out=out, inplace=True)
        return out
    bits = out.dtype is torch.float64 and type(value) is float
    if type(value) is bool:
        value = int(value)  # the interpreter cannot take a bool argument
    block, num_warps = pointwise_config(numel, out.dtype.itemsize)
    # A dense tensor with positive strides covers exactly numel elements from its first one.
    _fill((cdiv(numel, block),), out, float64_bits(value) if bits else value, numel, bits, numel > _INT32_LIMIT,
          block, num_warps=num_warps)
    return out


def _infer_dtype(value) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, complex):
        raise Fallback("complex fill value")
    return torch.get_default_dtype()


# --------------------------------------------------------------------------- ATen overloads


def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = _infer_dtype(fill_value) if dtype is None else dtype
    _check_options(dtype, layout, device, pin_memory)
    value = checked_scalar(fill_value, dtype)
    return _fill_dense(torch.empty(size, dtype=dtype, device=device), value)


def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full(size, 1, dtype=dtype or torch.get_default_dtype(), layout=layout, device=device,
                pin_memory=pin_memory)


def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full(size, 0, dtype=dtype or torch.get_default_dtype(), layout=layout, device=device,
                pin_memory=pin_memory)


def full_out(size, fill_value, *, out):
    value = checked_scalar(fill_value, out.dtype)
    out.resize_(size)
    return _fill_dense(out, value)


def ones_out(size, *, out):
    return full_out(size, 1, out=out)


def zeros_out(size, *, out):
    return full_out(size, 0, out=out)


def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    dtype = self.dtype if dtype is None else dtype
    _check_options(dtype, layout, device if device is not None else self.device, pin_memory)
    value = checked_scalar(fill_value, dtype)
    out = torch.empty_like(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                           memory_format=memory_format)
    return _fill_dense(out, value)


def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return full_like(self, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                     memory_format=memory_format)


def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return full_like(self, 0, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                     memory_format=memory_format)


def _c_div(a: int, b: int) -> int:
    """C++ integer division (truncates towards zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _arange_plan(start, end, step, dtype):
    """(length, start, step) as ATen's arange_out computes them for ``dtype``."""
    if dtype is torch.bool:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if dtype not in SUPPORTED_DTYPES:
        raise Fallback(f"dtype {dtype} not handled by gems arange")
    if float(step) == 0:
        raise RuntimeError("step must be nonzero")
    d_start, d_end, d_step = float(start), float(end), float(step)
    if not (math.isfinite(d_start) and math.isfinite(d_end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if dtype.is_floating_point:
        first, delta = d_start, d_step
    else:  # the accumulation type is int64: the bounds and step are truncated
        first, last, delta = (checked_scalar(v, torch.int64) for v in (start, end, step))
    if not ((d_step > 0 and d_end >= d_start) or (d_step < 0 and d_end <= d_start)):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is torch.int64:
        if delta == 0:
            raise ValueError("step must be nonzero")
        if not ((delta > 0 and last >= first) or (delta < 0 and last <= first)):
            raise RuntimeError("upper bound and larger bound inconsistent with step sign")
        sign = 1 if delta > 0 else -1
        length = _c_div(last - first + delta - sign, delta)
    else:
        length_d = math.ceil((d_end - d_start) / d_step)
        if not 0 <= length_d <= 2**63 - 1:
            raise RuntimeError("invalid size, possible overflow?")
        length = int(length_d)
    return length, first, delta


def _arange_into(out, first, delta):
    numel = out.numel()
    if numel == 0:
        return out
    target = out if out.is_contiguous() else torch.empty(out.shape, dtype=out.dtype, device=out.device)
    is_float = out.dtype.is_floating_point
    block, num_warps = pointwise_config(numel, out.dtype.itemsize)
    _arange((cdiv(numel, block),), target, float64_bits(first) if is_float else first,
            float64_bits(delta) if is_float else delta, numel, is_float, numel > _INT32_LIMIT, block,
            num_warps=num_warps)
    if target is not out:
        out.copy_(target)  # ATen too computes a non-contiguous out= in a contiguous buffer
    return out


def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        integral = all(isinstance(v, (bool, int)) for v in (start, end, step))
        dtype = torch.int64 if integral else torch.get_default_dtype()
    _check_options(dtype, layout, device, pin_memory)
    length, first, delta = _arange_plan(start, end, step, dtype)
    return _arange_into(torch.empty((length,), dtype=dtype, device=device), first, delta)


def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def arange_start_out(start, end, step=1, *, out):
    length, first, delta = _arange_plan(start, end, step, out.dtype)
    if out.numel() != length:
        out.resize_((length,))
    return _arange_into(out, first, delta)


# --------------------------------------------------------------------------- declarations

_ALL = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
        torch.int64, torch.uint8, torch.bool)
_ARANGE_DTYPES = _ALL[:-1]


def _factory_calls(factory, overload, value_args=()):
    """make_calls for :func:`creation_samples`: shapes, a negative size, and the out= forms."""

    def make(dtype, device, quick):
        shape = shape_for(quick)
        calls = []
        for variant, size in (("contiguous", shape), ("1d", (37,)), ("0d", ()), ("empty", (0, 5)),
                              ("3d", (3, 5, 7))):
            calls.append((variant, lambda like, s=size: factory(s, *value_args, dtype=like.dtype, device=like.device),
                          overload, ()))
        calls.append(("negative-size-error", lambda like: factory((-1, 3), *value_args, dtype=like.dtype,
                                                                   device=like.device), None, ()))
        for variant, out in out_tensors(shape, dtype, device):
            calls.append((variant, lambda like, o: factory(shape, *value_args, out=o), f"{overload}.out", (out,)))
        return calls

    return make


def _full_calls(dtype, device, quick):
    shape = shape_for(quick)
    calls = _factory_calls(torch.full, "full", (2.5 if dtype.is_floating_point else 3,))(dtype, device, quick)
    big = {torch.float16: 1e6, torch.bfloat16: 1e39, torch.float32: 1e39, torch.int8: 300, torch.int16: 70000,
           torch.int32: 2**40, torch.uint8: 256}.get(dtype)
    values = [("nan", float("nan")), ("negative-zero", -0.0), ("inf", float("-inf")), ("int-value", 7),
              ("float-value", -2.75), ("inexact-value", 0.1), ("negative-int", -1)]
    if big is not None:
        values.append(("overflow", big))
    for variant, value in values:
        calls.append((variant, lambda like, v=value: torch.full(shape, v, dtype=like.dtype, device=like.device),
                      "full", ()))
    if dtype == torch.float32:  # dtype=None: inferred from the value, as ATen does
        for variant, value in (("infer-int", 3), ("infer-float", 3.5), ("infer-bool", True)):
            calls.append((variant, lambda like, v=value: torch.full(shape, v, device=like.device), "full", ()))
    return calls


def _arange_calls(dtype, device, quick):
    n = 37 if quick else 100003
    cases = [  # (variant, (start, end, step) or (end,), expected overload)
        ("end", (n,), "arange"),
        ("start-end", (3, n), "arange.start"),
        ("start-end-step", (-5, n, 3), "arange.start_step"),
        ("negative-step", (n, -4, -2), "arange.start_step"),
        ("float-step", (0.5, 9.7, 0.3), "arange.start_step"),
        ("fractional-bounds", (-0.5, 5.7, 1), "arange.start_step"),
        ("empty-range", (4, 4), "arange.start"),
        ("zero-step-error", (0, 5, 0), None),
        ("truncated-step", (0, 5, 0.5), "arange.start_step"),  # an int64 result refuses it, int32 repeats 0
        ("sign-error", (10, 0, 1), None),
        ("inf-error", (0, float("inf")), None),
    ]
    calls = [(variant, lambda like, a=args: torch.arange(*a, dtype=like.dtype, device=like.device), expects, ())
             for variant, args, expects in cases]
    if dtype == torch.float32:  # dtype=None: int64 when every argument is integral, else the default dtype
        calls += [("infer-int", lambda like: torch.arange(5, n, device=like.device), "arange.start", ()),
                  ("infer-float", lambda like: torch.arange(0.0, 3.0, 0.25, device=like.device), "arange.start_step",
                   ())]
    for variant, out in (("out", torch.empty(0, dtype=dtype, device=device)),
                         ("out-exact", torch.empty((12,), dtype=dtype, device=device)),
                         ("out-noncontiguous", torch.empty((24,), dtype=dtype, device=device)[::2])):
        calls.append((variant, lambda like, o: torch.arange(1, 25, 2, out=o), "arange.start_out", (out,)))
    return calls


def _factory_perf(factory, *value_args):
    return creation_perf(lambda like, shape: factory(shape, *value_args, dtype=like.dtype, device=like.device))


SPECS = [
    OpSpec(
        name="ones", family="creation", impls={"ones": ones, "ones.out": ones_out}, call=torch.ones,
        samples=creation_samples(_factory_calls(torch.ones, "ones")), dtypes=_ALL, tolerance="exact",
        perf=_factory_perf(torch.ones),
    ),
    OpSpec(
        name="zeros", family="creation", impls={"zeros": zeros, "zeros.out": zeros_out}, call=torch.zeros,
        samples=creation_samples(_factory_calls(torch.zeros, "zeros")), dtypes=_ALL, tolerance="exact",
        perf=_factory_perf(torch.zeros),
    ),
    OpSpec(
        name="full", family="creation", impls={"full": full, "full.out": full_out}, call=torch.full,
        samples=creation_samples(_full_calls), dtypes=_ALL, tolerance="exact", perf=_factory_perf(torch.full, 1.5),
    ),
    OpSpec(
        name="arange", family="creation",
        impls={"arange": arange, "arange.start": arange_start, "arange.start_step": arange_start_step,
               "arange.start_out": arange_start_out},
        call=torch.arange, samples=creation_samples(_arange_calls), dtypes=_ARANGE_DTYPES,
        perf=creation_perf(lambda like, shape: torch.arange(math.prod(shape), dtype=like.dtype, device=like.device)),
        skips={("nvidia", "int64", variant): "ATen's CUDA arange kills the process (no Python error) for an int64 "
               "result of a fractional step, so it cannot be the reference; gems raises ValueError "
               "'step must be nonzero' (H200, torch 2.11, 2026-11-22)"
               for variant in ("float-step", "truncated-step")},
    ),
    OpSpec(
        name="ones_like", family="creation", impls={"ones_like": ones_like}, call=torch.ones_like,
        samples=like_samples(torch.ones_like, "ones_like"), dtypes=_ALL, tolerance="exact",
    ),
    OpSpec(
        name="zeros_like", family="creation", impls={"zeros_like": zeros_like}, call=torch.zeros_like,
        samples=like_samples(torch.zeros_like, "zeros_like"), dtypes=_ALL, tolerance="exact",
    ),
    OpSpec(
        name="full_like", family="creation", impls={"full_like": full_like}, call=torch.full_like,
        samples=like_samples(torch.full_like, "full_like", (2,), fill_checks=[
            ("float-value", -1.25), ("overflow", 1e40), ("bool-value", True)]),
        dtypes=_ALL, tolerance="exact",
    ),
]
