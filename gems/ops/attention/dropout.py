"""Attention dropout (gems/ops/attention): gems' own keep mask, which the forward and the backward regenerate
from the same Philox key, never stored.

    Z[b, h, i, j] = (top 24 bits of Philox word (i, j) < ceil((1 - p) 2^24)),   scale = 1 / (1 - p)
    forward:  O = (P * Z * scale) V   (P = softmax(S) un-dropped: its normalizer and the lse are the un-dropped ones)
    backward: dV = (P * Z * scale)^T dO,  dP = (dO V^T) * Z * scale,  dS = P * (dP - D),  D_i = sum_d dO_id O_id

Word (i, j) of head bh = b * heads + h is word j % 4 of the Philox4x32-10 block at counter (offset // 4, lane)
(philox.py's philox_words, written out here for 2-D tiles),
lane = (bh * M + i) * ceil(N / 4) + j // 4, under key ``seed``: the layout of gems' other random operators
(gems/ops/random/philox.py: one Philox call per lane, four consecutive values), independent of the kernels'
tiles. A call takes its key with ``philox_key`` (so the generator advances, the native layer's replays and
CUDA graphs draw fresh keys, as for native_dropout) and moves the offset on by 4 words: lanes are Philox's
subsequence, so two calls' counters never meet. The forward kernel writes the key it used (seed, offset) into
the overload's philox_seed / philox_offset outputs (flash: rng_state); the backward kernels read them there,
on the device (no host read, graph-safe).

A forward that gems leaves to ATen must not meet a gems backward (ATen's mask is another one): every reason
the backward has to fall back is checked by the forward too, with the same inputs (:func:`check_dropout`).

:func:`keep_mask_reference` regenerates Z from a key in plain torch integer arithmetic (an independent
Philox4x32-10): the float64 oracle of tests and conformance uses it.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.ops.random.philox import _graph_state_module, side_by_side
from gems.runtime.registration import Fallback

# Offsets of one head past this are left to ATen by the backward (flash_backward.py), hence by a dropout forward.
_INT32_SAFE = 2**31 - 1 - 2**20
_MAX_GRID_Y = 65535


@triton.jit
def keep_mask(seed, offset, lane_base, rows, start_n, n_lanes, keep_threshold, BLOCK_N: tl.constexpr):
    """Z of query rows ``rows`` ([BLOCK_M]) and keys start_n .. start_n + BLOCK_N (start_n a multiple of 4) of the
    head whose first row is lane row ``lane_base`` (bh * M): a [BLOCK_M, BLOCK_N] bool tile."""
    groups = start_n // 4 + tl.arange(0, BLOCK_N // 4)
    lanes = (lane_base + rows.to(tl.int64))[:, None] * n_lanes + groups[None, :].to(tl.int64)
    counter = offset.to(tl.int64) // 4
    c0 = (lanes * 0 + counter).to(tl.uint32)
    c1 = (lanes * 0 + (counter >> 32)).to(tl.uint32)
    r0, r1, r2, r3 = tl.philox(seed.to(tl.int64), c0, c1, lanes.to(tl.uint32), (lanes >> 32).to(tl.uint32))
    bits = side_by_side(r0 >> 8, r1 >> 8, r2 >> 8, r3 >> 8, 4).to(tl.int32)
    return bits < keep_threshold


@triton.jit
def saved_key(seed_ptr, offset_ptr):
    """The (seed, offset) a dropout forward wrote (int64, or flash's uint64 rng_state seen as int64)."""
    return tl.load(seed_ptr).to(tl.int64), tl.load(offset_ptr).to(tl.int64)


def dropout_constants(dropout_p: float) -> tuple[int, float]:
    """(keep_threshold, scale): keep where the word's top 24 bits < ceil((1 - p) 2^24), as native_dropout."""
    keep = 1.0 - dropout_p
    return math.ceil(keep * 2**24), 1.0 / keep


def check_dropout(name, q, k, v, dropout_p) -> None:
    """What gems leaves to ATen when dropout_p > 0, decided alike by a forward and its backward from the same
    inputs (an ATen-dropped forward must never be paired with gems' backward, nor the reverse): p = 1
    (ATen's shortcuts), heads past the grid or int32 offsets (the backward's own limits), and a CUDA graph capture
    whose Philox state gems cannot read (philox_key's Fallback, made here for the backward as well)."""
    if not dropout_p < 1.0:
        raise Fallback(f"{name}: dropout_p = {dropout_p}: left to ATen")
    b, h, m, _ = q.shape
    out_numel = b * h * m * v.shape[3]
    too_large = b * h > _MAX_GRID_Y or max(_span(t) for t in (q, k, v)) > _INT32_SAFE or out_numel > _INT32_SAFE
    if too_large:  # unreached on the interpreter: 65,536+ heads or 2^31 elements (test_attention.py fakes it)
        raise Fallback(f"{name}: attention dropout past 65535 heads or int32 offsets is left to ATen")
    capturing = q.device.type == "cuda" and torch.cuda.is_current_stream_capturing()
    if capturing and _graph_state_module() is None:  # unreached on the interpreter: CUDA graph capture
        raise Fallback(f"{name}: dropout inside CUDA graph capture without gems' graph-state helper")


def _span(t: torch.Tensor) -> int:
    return sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()) if n) + 1


# --------------------------------------------------------------------------- reference (plain torch)

_M32 = 0xFFFFFFFF


def _mulhilo(a: int, x: torch.Tensor):
    """(high, low) 32-bit halves of a * x for a uint32 constant and uint32 values held in int64, without
    overflowing int64 (x split into 16-bit halves)."""
    xh, xl = x >> 16, x & 0xFFFF
    ah, al = a * xh, a * xl
    hi = (ah + (al >> 16)) >> 16
    lo = (((ah & 0xFFFF) << 16) + al) & _M32
    return hi & _M32, lo


def philox4x32(seed: int, c0, c1, c2, c3):
    """Philox4x32-10 of counters (int64 tensors of uint32 values) under a 64-bit key, as tl.philox computes it."""
    seed &= (1 << 64) - 1
    k0, k1 = seed & _M32, seed >> 32
    for _ in range(10):
        hi_b, lo_b = _mulhilo(0xCD9E8D57, c2)
        hi_a, lo_a = _mulhilo(0xD2511F53, c0)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0, k1 = (k0 + 0x9E3779B9) & _M32, (k1 + 0xBB67AE85) & _M32
    return c0, c1, c2, c3


def keep_mask_reference(seed: int, offset: int, shape, dropout_p: float) -> torch.Tensor:
    """Z (bool, on the CPU) of shape (batch, heads, M, N) for the key (seed, offset), as the kernels draw it."""
    b, h, m, n = shape
    n_lanes = -(-n // 4)
    lanes = torch.arange(b * h * m * n_lanes, dtype=torch.int64)
    counter = (offset & ((1 << 64) - 1)) // 4
    c0 = torch.full_like(lanes, counter & _M32)
    c1 = torch.full_like(lanes, counter >> 32)
    words = philox4x32(seed, c0, c1, lanes & _M32, lanes >> 32)
    bits = torch.stack([w >> 8 for w in words], dim=-1).reshape(b, h, m, n_lanes * 4)[..., :n]
    return bits < dropout_constants(dropout_p)[0]


def key_of(seed_t: torch.Tensor, offset_t: torch.Tensor) -> tuple[int, int]:
    """(seed, offset) as Python ints from an overload's philox_seed / philox_offset (or flash's rng_state[0:2])."""
    return int(seed_t.reshape(-1)[0].view(torch.int64).item()), int(offset_t.reshape(-1)[0].view(torch.int64).item())
