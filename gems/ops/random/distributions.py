"""The kernel that fills a tensor with draws of one distribution, shared by uniform_, normal_, normal,
exponential_, bernoulli_, bernoulli, random_, randint, rand, randn and their ``_like`` forms.

Each lane makes one Philox call (philox.py): four 32-bit words, which become four values of an fp32
computation (fp16, bf16, fp32 results; integers below 2^32) or two of an fp64 one (53-bit uniforms,
64-bit integers). Value k of lane j goes to element 4j + k (2j + k): with whole lanes per thread
(philox.lane_grid), a thread stores each lane's values with one vectorized store. fp32 normals come from
polynomial forms of the logarithm, cosine and sine (philox.normal_pair), fp32 exponentials from the same
logarithm (philox.log_unit).
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

from gems.codegen.pointwise import PointwiseOp, float64_bits
from gems.codegen.pointwise_checks import is_dense
from gems.ops.creation.fill import INT32_LIMIT
from gems.ops.random.philox import (
    box_muller,
    dense_like,
    lane_grid,
    log_unit,
    normal_pair,
    philox_key,
    philox_words,
    side_by_side,
    uniform24,
    uniform53,
)
from gems.runtime.launch import Launcher

UNIFORM, NORMAL, EXPONENTIAL, BERNOULLI, INTEGERS = (tl.constexpr(i) for i in range(5))
# Philox calls (lanes) per GPU thread in exponential_'s draws (philox.lane_grid). Compiled for sm_90 (fp16, 64M):
# 232 instructions per lane at 1 lane a thread (the key schedule and counters, per thread since the key may come
# from memory, and the launch arithmetic, all paid for 4 values), 184 at 2, 166 at 4; 0.85x ATen at 1, where the
# kernel is bound by arithmetic, not by its 2-4 bytes stored a value. From EXPONENTIAL_WIDE_FROM values only, where
# 4 lanes a thread still leave 1024 programs of 8 warps (a full H200 and more); smaller draws keep 1, for occupancy.
EXPONENTIAL_LANES_PER_THREAD = 4
EXPONENTIAL_WIDE_FROM = 1 << 22


@triton.jit
def _log_of_unit_draw(r):
    """ln(v), v = 1 - uniform24(r) in (0, 1], with ATen's guard (v within half an fp32 epsilon of 1, which is
    r >> 8 <= 1, gives -2^-24): the polynomial logarithm of normal_pair, a few instructions where tl.log took
    about 40 and made exponential_ compute bound (0.72x ATen at 64M on an H200)."""
    top = (r >> 8).to(tl.int32)
    return tl.where(top <= 1, -5.960464477539063e-08, log_unit((1 << 24) - top))


@triton.jit
def _raw_draws(r0, r1, r2, r3, DIST: tl.constexpr, PER_LANE: tl.constexpr):
    """A block of lanes' draws before their parameters, side by side (four per lane, two when PER_LANE is 2):
    uniforms in [0, 1), standard normals, integers (int64 from 32 or 64 random bits), or for EXPONENTIAL with
    four per lane the guarded logarithms ln(1 - u) (_log_of_unit_draw)."""
    if DIST == INTEGERS:
        if PER_LANE == 4:  # uint32 words, taken modulo a span of up to 2^32 in 32 bits
            d0, d1, d2, d3 = r0, r1, r2, r3
        else:
            d0 = ((r0.to(tl.uint64) << 32) | r1.to(tl.uint64)).to(tl.int64, bitcast=True)
            d1 = ((r2.to(tl.uint64) << 32) | r3.to(tl.uint64)).to(tl.int64, bitcast=True)
            d2, d3 = d0, d1
    elif PER_LANE == 4:
        if DIST == NORMAL:
            d0, d1 = normal_pair(r0, r1)
            d2, d3 = normal_pair(r2, r3)
        elif DIST == EXPONENTIAL:
            d0, d1 = _log_of_unit_draw(r0), _log_of_unit_draw(r1)
            d2, d3 = _log_of_unit_draw(r2), _log_of_unit_draw(r3)
        else:
            d0, d1, d2, d3 = uniform24(r0), uniform24(r1), uniform24(r2), uniform24(r3)
    else:
        d0, d1 = uniform53(r0, r1), uniform53(r2, r3)
        if DIST == NORMAL:
            d0, d1 = box_muller(d0, d1)
        d2, d3 = d0, d1
    return side_by_side(d0, d1, d2, d3, PER_LANE)


def _draw_values(out_ptr, a_ptr, b_ptr, seed_ptr, offset_ptr, seed: tl.int64, offset: tl.int64, graph: tl.int32,
                 a, b, low, span, n, DIST: tl.constexpr, A_TENSOR: tl.constexpr, B_TENSOR: tl.constexpr,
                 PER_LANE: tl.constexpr, F64_SCALARS: tl.constexpr, INT64: tl.constexpr, LANES: tl.constexpr):
    """out (a dense block of n elements) drawn from distribution DIST with parameters a, b (numbers, or
    tensors read per element when A_TENSOR / B_TENSOR), or low and span for integers: a program covers
    LANES * PER_LANE elements, element PER_LANE * j + k of it taking draw k of its lane j."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    r0, r1, r2, r3 = philox_words(seed, offset, graph, pid * LANES + tl.arange(0, LANES), seed_ptr, offset_ptr)
    x = _raw_draws(r0, r1, r2, r3, DIST, PER_LANE)
    offs = pid * (LANES * PER_LANE) + tl.arange(0, LANES * PER_LANE)
    mask = offs < n
    out_ty = out_ptr.dtype.element_ty
    if DIST == INTEGERS:
        if PER_LANE == 4:  # a 32-bit remainder: in int64 it was a long division, half of ATen's speed at 64M
            span32 = span.to(tl.uint32)  # a span of 2^32 becomes 0: every 32-bit value
            y = tl.where(span32 == 0, x, x % tl.maximum(span32, 1)).to(tl.int64) + low
        else:  # 64 random bits modulo a span of up to 2^64 (0), in uint64
            spans = (x * 0 + span).to(tl.uint64, bitcast=True)
            drawn = x.to(tl.uint64, bitcast=True)
            y = tl.where(spans == 0, drawn, drawn % tl.maximum(spans, 1)).to(tl.int64, bitcast=True) + low
        y = y.to(out_ty)
    else:
        if F64_SCALARS:  # float64 parameters arrive as their bits (a Python float reaches the GPU as fp32)
            a = tl.cast(tl.cast(a, tl.int64), tl.float64, bitcast=True)
            b = tl.cast(tl.cast(b, tl.int64), tl.float64, bitcast=True)
        a = a.to(x.dtype)
        b = b.to(x.dtype)
        if A_TENSOR:
            a = tl.load(a_ptr + offs, mask=mask, other=0).to(x.dtype)
        if B_TENSOR:
            b = tl.load(b_ptr + offs, mask=mask, other=1).to(x.dtype)
        if DIST == UNIFORM:
            y = (a + (b - a) * x).to(out_ty)
            y = tl.where(y == b.to(out_ty), a.to(out_ty), y)  # ATen's reversed bound: never `to`
        elif DIST == NORMAL:
            y = (a + b * x).to(out_ty)
        elif DIST == EXPONENTIAL:
            if PER_LANE == 2:
                half_eps: tl.constexpr = 1.1102230246251565e-16
                v = 1.0 - x  # in (0, 1]
                log_v = tl.where(v >= 1.0 - half_eps, 0.0 - half_eps, tl.log(v))
            else:
                log_v = x  # the guarded logarithm already (_raw_draws)
            y = ((-1.0 / a) * log_v).to(out_ty)
        else:
            if A_TENSOR:  # compiled only in _checked_draw_kernel (debug): ATen's CUDA kernel asserts the same
                tl.device_assert(((a >= 0) & (a <= 1)) | (mask == 0), "Expected p_in >= 0 && p_in <= 1 to be true")
            y = tl.where(x < a, 1.0, 0.0).to(out_ty)
    tl.store(out_ptr + offs, y, mask=mask)


# The same kernel twice: plain, and with device asserts (Triton keeps tl.device_assert only in a debug build,
# which also checks int32 arithmetic for overflow: a few instructions per element, paid only by bernoulli's
# tensor p where kernels are compiled).
_draw_kernel = triton.jit(do_not_specialize=["seed", "offset", "graph"])(_draw_values)
_checked_draw_kernel = triton.jit(do_not_specialize=["seed", "offset", "graph"], debug=True)(_draw_values)


@triton.jit
def _same(x):
    return x


_draw = Launcher(_draw_kernel)
_checked_draw = Launcher(_checked_draw_kernel)
# Values written into a tensor of another dtype or layout (randperm's indices, dropout's copy of x).
_store = PointwiseOp("random_store", _same, operands=1)


def store_as(src: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``out`` (same shape) = ``src`` converted to out's dtype, in any layout: one gems launch."""
    return _store(src, out=out)


def draw(out: torch.Tensor, dist, generator, a=0.0, b=0.0, a_tensor=None, b_tensor=None, low=0, span=0,
         assert_p=False):
    """Fill ``out`` with draws of ``dist`` (UNIFORM: a=from, b=to; NORMAL: a=mean, b=std; EXPONENTIAL:
    a=lambda; BERNOULLI: a=p; INTEGERS: low, span) from ``generator`` (None: the device's default).
    ``a_tensor`` / ``b_tensor`` replace a / b element by element (broadcastable to ``out``). ``assert_p``
    (BERNOULLI with ``a_tensor``): the kernel asserts 0 <= p <= 1 on the device (compiled kernels)."""
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
    wide = dist is EXPONENTIAL and numel >= EXPONENTIAL_WIDE_FROM
    lanes, programs, num_warps = lane_grid(numel, per_lane, itemsize, EXPONENTIAL_LANES_PER_THREAD if wide else 1)
    key = philox_key(out.device, generator)
    f64 = out.dtype == torch.float64 and dist is not INTEGERS
    a, b = (float64_bits(float(a)), float64_bits(float(b))) if f64 else (float(a), float(b))
    span_bits = span - 2**64 if span >= 2**63 else span
    launcher = _checked_draw if assert_p else _draw
    launcher((programs,), target, a_src, b_src, *key.kernel_args(out.device), a, b, low, span_bits, numel,
             dist.value, a_tensor is not None, b_tensor is not None, per_lane, f64,
             numel + lanes * per_lane > INT32_LIMIT, lanes, num_warps=num_warps)
    if target is not out:
        out.copy_(target)
    return out
