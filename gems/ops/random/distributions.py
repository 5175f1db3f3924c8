"""The kernel that fills a tensor with draws of one distribution, shared by uniform_, normal_, normal,
exponential_, bernoulli_, bernoulli, random_, randint, rand, randn and their ``_like`` forms.

Each lane makes one Philox call (philox.py): four 32-bit words, which become four values of an fp32
computation (fp16, bf16, fp32 results; integers below 2^32) or two of an fp64 one (53-bit uniforms,
64-bit integers). A lane's values are stored side by side, so a program writes one contiguous block.
The values follow ATen's CUDA transformations:

- uniform: ``from + (to - from) * u``, u in [0, 1) with 24 (fp64: 53) random bits; a value that
  rounds to ``to`` in the result dtype becomes ``from`` (ATen's reversed bound), so every value is in
  [from, to);
- normal: ``mean + std * z``, z from the Box-Muller transform of two uniforms;
- exponential: ``-log(v) / lambda``, v = 1 - u in (0, 1], with ATen's guard: log(v) for v within half
  an epsilon of 1 is -epsilon/2, so no value is 0 before rounding to the result dtype;
- bernoulli: ``u < p``, p a number or a tensor (then read per element);
- integers: ``low + r % span`` with r of 32 bits (span up to 2^32) or 64 bits; span 0 means all 2^64
  values (random_ from the int64 minimum).

A result that is not dense (a strided view) is drawn into a dense buffer and copied into place;
tensor parameters are read in the result's memory order (philox.dense_like).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, float64_bits, is_dense, pointwise_config
from gems.ops.creation.fill import INT32_LIMIT
from gems.ops.random.philox import (
    box_muller,
    dense_like,
    interleave4,
    lanes_and_programs,
    philox_key,
    philox_words,
    uniform24,
    uniform53,
)
from gems.runtime.launch import Launcher

UNIFORM, NORMAL, EXPONENTIAL, BERNOULLI, INTEGERS = (tl.constexpr(i) for i in range(5))


@triton.jit
def _raw_draws(r0, r1, r2, r3, DIST: tl.constexpr, PER_LANE: tl.constexpr):
    """A lane's draws before their parameters, side by side: uniforms in [0, 1), standard normals, or
    integers (int64 from 32 or 64 random bits). One return: Triton checks the types of every return."""
    if DIST == INTEGERS:
        if PER_LANE == 4:
            draws = interleave4(r0.to(tl.int64), r1.to(tl.int64), r2.to(tl.int64), r3.to(tl.int64))
        else:
            w0 = (r0.to(tl.uint64) << 32) | r1.to(tl.uint64)
            w1 = (r2.to(tl.uint64) << 32) | r3.to(tl.uint64)
            draws = tl.interleave(w0.to(tl.int64, bitcast=True), w1.to(tl.int64, bitcast=True))
    elif PER_LANE == 4:
        u0, u1, u2, u3 = uniform24(r0), uniform24(r1), uniform24(r2), uniform24(r3)
        if DIST == NORMAL:
            z0, z1 = box_muller(u0, u1)
            z2, z3 = box_muller(u2, u3)
            draws = interleave4(z0, z1, z2, z3)
        else:
            draws = interleave4(u0, u1, u2, u3)
    else:
        u0, u1 = uniform53(r0, r1), uniform53(r2, r3)
        if DIST == NORMAL:
            z0, z1 = box_muller(u0, u1)
            draws = tl.interleave(z0, z1)
        else:
            draws = tl.interleave(u0, u1)
    return draws


@triton.jit(do_not_specialize=["seed", "offset", "graph"])
def _draw_kernel(out_ptr, a_ptr, b_ptr, seed_ptr, offset_ptr, seed: tl.int64, offset: tl.int64, graph: tl.int32,
                 a, b, low, span, n, DIST: tl.constexpr, A_TENSOR: tl.constexpr, B_TENSOR: tl.constexpr,
                 PER_LANE: tl.constexpr, F64_SCALARS: tl.constexpr, INT64: tl.constexpr, LANES: tl.constexpr):
    """out[i] (a dense block of n elements) = a draw of distribution DIST with parameters a, b (numbers,
    or tensors read at i when A_TENSOR / B_TENSOR), or low and span for integers."""
    pid = tl.program_id(0)
    if INT64:
        pid = pid.to(tl.int64)
    lane = pid * LANES + tl.arange(0, LANES)
    r0, r1, r2, r3 = philox_words(seed, offset, graph, lane, seed_ptr, offset_ptr)
    x = _raw_draws(r0, r1, r2, r3, DIST, PER_LANE)
    offs = pid * (LANES * PER_LANE) + tl.arange(0, LANES * PER_LANE)
    mask = offs < n
    out_ty = out_ptr.dtype.element_ty
    if DIST == INTEGERS:
        if PER_LANE == 4:
            y = x % span + low
        else:  # 64 random bits modulo a span of up to 2^64 (0), in uint64
            spans = (x * 0 + span).to(tl.uint64, bitcast=True)
            drawn = x.to(tl.uint64, bitcast=True)
            y = tl.where(spans == 0, drawn, drawn % tl.maximum(spans, 1)).to(tl.int64, bitcast=True) + low
        y = y.to(out_ty)
    else:
        y = _transformed(x, a, b, a_ptr, b_ptr, offs, mask, out_ty, DIST, A_TENSOR, B_TENSOR, PER_LANE, F64_SCALARS)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def _transformed(x, a, b, a_ptr, b_ptr, offs, mask, out_ty: tl.constexpr, DIST: tl.constexpr, A_TENSOR: tl.constexpr,
                 B_TENSOR: tl.constexpr, PER_LANE: tl.constexpr, F64_SCALARS: tl.constexpr):
    """The float draws ``x`` with their parameters (numbers, or tensors read at offs), in out_ty."""
    if PER_LANE == 2:
        compute: tl.constexpr = tl.float64
        half_eps: tl.constexpr = 1.1102230246251565e-16
    else:
        compute: tl.constexpr = tl.float32
        half_eps: tl.constexpr = 5.960464477539063e-08
    if F64_SCALARS:  # float64 parameters arrive as their bits (a Python float reaches the GPU as fp32)
        a = tl.cast(tl.cast(a, tl.int64), tl.float64, bitcast=True)
        b = tl.cast(tl.cast(b, tl.int64), tl.float64, bitcast=True)
    if A_TENSOR:
        a = tl.load(a_ptr + offs, mask=mask, other=0).to(compute)
    else:
        a = a.to(compute)
    if B_TENSOR:
        b = tl.load(b_ptr + offs, mask=mask, other=1).to(compute)
    else:
        b = b.to(compute)
    if DIST == UNIFORM:
        y = (a + (b - a) * x).to(out_ty)
        y = tl.where(y == b.to(out_ty), a.to(out_ty), y)  # ATen's reversed bound: never `to`
    elif DIST == NORMAL:
        y = (a + b * x).to(out_ty)
    elif DIST == EXPONENTIAL:
        v = 1.0 - x  # in (0, 1]
        log_v = tl.where(v >= 1.0 - half_eps, 0.0 - half_eps, tl.log(v))
        y = ((-1.0 / a) * log_v).to(out_ty)
    else:
        y = tl.where(x < a, 1.0, 0.0).to(out_ty)
    return y


@triton.jit
def _same(x):
    return x


_draw = Launcher(_draw_kernel)
# Values written into a tensor of another dtype or layout (randperm's indices, dropout's copy of x).
_store = PointwiseOp("random_store", _same, operands=1)


def store_as(src: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``out`` (same shape) = ``src`` converted to out's dtype, in any layout: one gems launch."""
    return _store(src, out=out)


def draw(out: torch.Tensor, dist, generator, a=0.0, b=0.0, a_tensor=None, b_tensor=None, low=0, span=0):
    """Fill ``out`` with draws of ``dist`` (UNIFORM: a=from, b=to; NORMAL: a=mean, b=std; EXPONENTIAL:
    a=lambda; BERNOULLI: a=p; INTEGERS: low, span) from ``generator`` (None: the device's default).
    ``a_tensor`` / ``b_tensor`` replace a / b element by element (broadcastable to ``out``)."""
    numel = out.numel()
    if numel == 0:
        return out
    target = out if is_dense(out) else torch.empty(out.shape, dtype=out.dtype, device=out.device)
    a_src = target if a_tensor is None else dense_like(a_tensor, target)
    b_src = target if b_tensor is None else dense_like(b_tensor, target)
    if dist is INTEGERS:
        per_lane = 2 if span == 0 or span > 2**32 else 4
        itemsize = 8 if per_lane == 2 else 4
    else:
        per_lane = 2 if out.dtype == torch.float64 else 4
        itemsize = max(out.dtype.itemsize, 4)
    block_values, num_warps = pointwise_config(numel, itemsize)
    lanes, programs = lanes_and_programs(numel, per_lane, block_values)
    key = philox_key(out.device, generator)
    f64 = out.dtype == torch.float64 and dist is not INTEGERS
    a, b = (float64_bits(float(a)), float64_bits(float(b))) if f64 else (float(a), float(b))
    span_bits = span - 2**64 if span >= 2**63 else span
    _draw((programs,), target, a_src, b_src, *key.kernel_args(out.device), a, b, low, span_bits, numel,
          dist.value, a_tensor is not None, b_tensor is not None, per_lane, f64,
          numel + lanes * per_lane > INT32_LIMIT, lanes, num_warps=num_warps)
    if target is not out:
        out.copy_(target)
    return out
