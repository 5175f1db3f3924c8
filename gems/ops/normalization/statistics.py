"""Per-row statistics helpers of the normalization kernels (rows.py, batch_norm, group_norm), correctly
rounded where ATen's kernels are: the GPU's fp32 ``/`` and ``tl.sqrt`` are approximations."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def div_n(v, n):
    """v / n correctly rounded: the GPU's fp32 ``/`` is approximate (15 / 6 can miss 2.5); fp64 is exact."""
    if v.dtype == tl.float64:
        return v / n
    else:
        return tl.div_rn(v, tl.full(v.shape, 0, tl.float32) + n)


@triton.jit
def moments(m0, s1, s2, n):
    """(mean, biased variance) from a first mean m0 and the sums of d = x - m0 and d^2. A non-finite
    correction (an infinite row: inf - inf) keeps m0, as ATen's CPU kernel returns inf there."""
    delta = div_n(s1, n)
    var = div_n(s2, n) - delta * delta
    return tl.where(delta == delta, m0 + delta, m0), tl.where(var < 0, 0, var)


@triton.jit
def rsqrt_rn(v):
    """1 / sqrt(v), correctly rounded in fp32 (the GPU's plain rsqrt is approximate); fp64 is exact."""
    if v.dtype == tl.float64:
        return 1.0 / tl.sqrt(v)
    else:
        return tl.div_rn(tl.full(v.shape, 1.0, tl.float32), tl.sqrt_rn(v))
