"""arange (end; start, end; start, end, step; out=): ``start + i * step`` written by one iota kernel.

It follows ATen's arange_out: the length from doubles (from int64 for int64 results), values in the
accumulation type (int64 for integers, double for floating types).
"""

import math

import torch
import triton
import triton.language as tl

from gems.checks import checked_scalar
from gems.codegen.pointwise import SUPPORTED_DTYPES, float64_bits, pointwise_config
from gems.dtypes import ALL
from gems.ops.creation.fill import INT32_LIMIT, check_options, factory_perf, factory_samples
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec


@triton.jit
def _arange_kernel(out_ptr, start, step, n_elements, FLOAT: tl.constexpr, INT64: tl.constexpr,
                   BLOCK: tl.constexpr):
    """out[i] = start + i * step: in float64 (start, step as bits) or in int64."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if FLOAT:
        first = tl.cast(tl.cast(start, tl.int64), tl.float64, bitcast=True)
        delta = tl.cast(tl.cast(step, tl.int64), tl.float64, bitcast=True)
        vals = first + offs.to(tl.float64) * delta
    else:
        vals = tl.cast(start, tl.int64) + offs.to(tl.int64) * tl.cast(step, tl.int64)
    tl.store(out_ptr + offs, vals.to(out_ptr.dtype.element_ty), mask=offs < n_elements)


_arange = Launcher(_arange_kernel)


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
            float64_bits(delta) if is_float else delta, numel, is_float, numel > INT32_LIMIT, block,
            num_warps=num_warps)
    if target is not out:
        out.copy_(target)  # ATen too computes a non-contiguous out= in a contiguous buffer
    return out


def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        integral = all(isinstance(v, (bool, int)) for v in (start, end, step))
        dtype = torch.int64 if integral else torch.get_default_dtype()
    check_options(dtype, layout, device, pin_memory)
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
    outs = (("out", lambda: torch.empty(0, dtype=dtype, device=device)),
            ("out-exact", lambda: torch.empty((12,), dtype=dtype, device=device)),
            ("out-noncontiguous", lambda: torch.empty((24,), dtype=dtype, device=device)[::2]))
    for variant, out in outs:
        calls.append((variant, lambda like, o: torch.arange(1, 25, 2, out=o), "arange.start_out",
                      lambda out=out: (out(),)))
    return calls


SPECS = [
    OpSpec(
        name="arange", family="creation",
        impls={"arange": arange, "arange.start": arange_start, "arange.start_step": arange_start_step,
               "arange.start_out": arange_start_out},
        call=torch.arange, samples=factory_samples(_arange_calls), dtypes=ALL[:-1],  # not bool
        perf=factory_perf(lambda like, shape: torch.arange(math.prod(shape), dtype=like.dtype, device=like.device)),
        skips={("nvidia", "int64", variant): "ATen's CUDA arange kills the process (no Python error) for an int64 "
               "result of a fractional step, so it cannot be the reference; gems raises ValueError "
               "'step must be nonzero' (H200, torch 2.11, 2026-11-22)"
               for variant in ("float-step", "truncated-step")},
    ),
]
