"""Split-KV ("flash-decoding") attention forward for few query rows over a long key sequence, and the forward
every attention overload calls (:func:`attention_forward`), which picks it or flash.py's tiled kernel by shape.

A decode step (M = 1..a few query rows, N = 512..8192 keys) gives flash.py's kernel one program per
(batch, head): 32 programs for a batch of one with 32 heads, each walking all N keys, on a device of 132
multiprocessors. Here one program takes the query rows of a whole GQA group (the ``group`` query heads that
share kv head ``hk``, M rows each: ``rows = group * M`` rows in one tensor-core tile, so K and V are read
once per group, not once per query head) over one chunk of the keys; the keys are split into ``SPLITS``
chunks (a whole number of BLOCK_N blocks each) so that batch * kv_heads * SPLITS programs fill the device.

    per chunk c and row r:  o_c[r] = softmax(S[r, chunk c]) V[chunk c],  lse_c[r] = log2 sum_{j in c} 2^(S[r, j])
    combine:  lse[r] = log2 sum_c 2^(lse_c[r]),  O[r] = sum_c 2^(lse_c[r] - lse[r]) o_c[r]

(S in base 2: log2(e) folded into the scale, as in flash.py.) The chunk kernel writes o_c (fp32, normalized)
and lse_c (-inf for a chunk that no key of the row reaches: a causal or masked-out chunk) to scratch
allocated per call; the combine kernel rescales them into the output and the natural-log logsumexp that the
overloads return and the backward reads. With SPLITS = 1 the chunk kernel writes the output itself. Scores,
masks (additive bias broadcast by strides), causality (``causal_offset``: 0 top-left as SDPA's is_causal,
N - M bottom-right as FlashAttention's), scale, P's rounding and the empty-row rule (O = 0, lse = the
caller's ``empty_lse``) are flash.py's, through its key walk ``_fwd_keys``.

How many chunks and which tiles: the vendor's heuristics, key "attention_decode" (args ``batch``,
``kv_heads``, ``rows``, ``N``, ``HEAD_DIM``, ``q_ptr``; rules ``BLOCK_N``, ``SPLITS``, ``num_warps``,
``num_stages``). SPLITS must be a pure function of the shapes (no device reads: CUDA graphs, and the native
layer's replays), constant over a power-of-two bucket of N (its size-generic plans): the rules see N only
through its next power of two.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.attention import flash
from gems.ops.attention.flash import (
    _INT32_SAFE,
    _MAX_GRID_Y,
    LOG2E,
    _bias_args,
    _block_d,
    _fwd_keys,
    _load,
    _round_p,
    _span,
    softmax_scale,
)
from gems.ops.blas.gemm import dot_precision
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv, next_power_of_2

# At most this many query rows per kv head (group * M) take the split path: one tile of them per program.
# More rows are a prefill, whose query tiles alone fill the device.
_MAX_ROWS = 64
# Up to this many keys stay on flash.py's kernel: a walk of a few key blocks is short enough unsplit (and no
# conformance sample of the general kernel, 24-203 keys, moves to this one). A power of two, so that the choice
# is the same over each of the native layer's size buckets (2^(k-1), 2^k] of a growing KV cache.
_SHORT_KEYS = 256
# The combine kernel's tile (rows x chunks x head dim, fp32): 16 KB, 32 values per thread at 4 warps.
_COMBINE_TILE = 4096


@triton.jit
def _decode_chunk_kernel(
    q_ptr, k_ptr, v_ptr, bias_ptr, o_ptr, lse_ptr, part_o_ptr, part_lse_ptr,
    stride_qb, stride_qh, stride_qm, stride_qd, stride_kb, stride_kh, stride_kn, stride_kd,
    stride_vb, stride_vh, stride_vn, stride_vd, stride_bb, stride_bh, stride_bm, stride_bn,
    stride_ob, stride_oh, stride_om, stride_od, stride_lb, stride_lh, stride_lm,
    kv_heads, group, M, N, qk_scale, empty_lse, causal_offset,
    HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr,
    HAS_BIAS: tl.constexpr, IS_CAUSAL: tl.constexpr, PRECISION: tl.constexpr, ROUND_P: tl.constexpr,
    INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLITS: tl.constexpr,
):
    """Grid (SPLITS, batch * kv_heads). Program (c, b * kv_heads + hk): the group's rows r = g * M + i (query
    head hk * group + g, query i) over chunk c of the keys. SPLITS == 1: O and lse; else o_c and lse_c (base 2)
    to part_o[row, c, :] and part_lse[row, c], row = (b * heads + h) * M + i."""
    split = tl.program_id(0)
    bk = tl.program_id(1).to(tl.int64)
    b = bk // kv_heads
    hk = bk % kv_heads
    n_rows = group * M
    offs_r = tl.arange(0, BLOCK_M)
    row_ok = offs_r < n_rows
    rows = tl.minimum(offs_r, n_rows - 1)  # padding rows repeat the last one: loads stay in bounds, never stored
    h = hk * group + rows // M
    offs_i = rows % M
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_i = offs_i.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
    q = _load(q_ptr + b * stride_qb + h[:, None] * stride_qh + offs_i[:, None] * stride_qm
              + offs_d[None, :] * stride_qd, row_ok[:, None], offs_d[None, :] < HEAD_DIM, False, HEAD_DIM != BLOCK_D)
    k_base = k_ptr + b * stride_kb + hk * stride_kh
    v_base = v_ptr + b * stride_vb + hk * stride_vh
    bias_base = bias_ptr + b * stride_bb + h[:, None] * stride_bh  # per row: (BLOCK_M, 1)
    # Keys some row can see (causal: none past the last query's diagonal), in SPLITS runs of whole blocks.
    n_seen = N
    full = (N // BLOCK_N) * BLOCK_N  # blocks that need no key bound ...
    if IS_CAUSAL:
        n_seen = tl.maximum(tl.minimum(N, M + causal_offset), 0)
        full = tl.minimum(full, (tl.maximum(causal_offset, 0) // BLOCK_N) * BLOCK_N)  # ... nor a causal mask
    chunk = tl.cdiv(n_seen, BLOCK_N * SPLITS) * BLOCK_N
    lo = split * chunk
    hi = tl.minimum(n_seen, lo + chunk)
    mid = tl.maximum(lo, tl.minimum(hi, full))
    acc = tl.full([BLOCK_M, BLOCK_DV], 0.0, tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.full([BLOCK_M], 0.0, tl.float32)
    acc, m_i, l_i = _fwd_keys(acc, m_i, l_i, q, k_base, v_base, bias_base, lo, mid, hi, offs_i, offs_n, offs_d,
                              offs_dv, M, N, stride_kn, stride_kd, stride_vn, stride_vd, stride_bm, stride_bn,
                              qk_scale, causal_offset, HEAD_DIM, HEAD_DIM_V, HEAD_DIM == BLOCK_D,
                              HEAD_DIM_V == BLOCK_DV, HAS_BIAS, IS_CAUSAL, PRECISION, ROUND_P, BLOCK_N)
    empty = l_i == 0.0  # every key of the chunk masked out (or none in it)
    o = acc / tl.where(empty, 1.0, l_i)[:, None]
    lse2 = m_i + tl.math.log2(tl.where(empty, 1.0, l_i))
    dv_ok = offs_dv[None, :] < HEAD_DIM_V
    if SPLITS == 1:
        o_ptrs = (o_ptr + b * stride_ob + h[:, None] * stride_oh + offs_i[:, None] * stride_om
                  + offs_dv[None, :] * stride_od)
        tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None] & dv_ok)
        lse = tl.where(empty, empty_lse, lse2 * 0.6931471805599453)  # natural log
        tl.store(lse_ptr + b * stride_lb + h * stride_lh + offs_i * stride_lm, lse, mask=row_ok)
    else:
        part = ((b * kv_heads * group + h) * M + offs_i) * SPLITS + split
        tl.store(part_o_ptr + part[:, None] * HEAD_DIM_V + offs_dv[None, :], o, mask=row_ok[:, None] & dv_ok)
        tl.store(part_lse_ptr + part, tl.where(empty, float("-inf"), lse2), mask=row_ok)


@triton.jit
def _decode_combine_kernel(
    part_o_ptr, part_lse_ptr, o_ptr, lse_ptr,
    stride_ob, stride_oh, stride_om, stride_od, stride_lb, stride_lh, stride_lm,
    heads, M, n_rows, empty_lse,
    HEAD_DIM_V: tl.constexpr, SPLITS: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
    BLOCK_DV: tl.constexpr,
):
    """O and lse of BLOCK_R rows (row = (b * heads + h) * M + i) from their SPLITS chunks' o_c and lse_c."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < n_rows
    offs_c = tl.arange(0, BLOCK_C)
    offs_dv = tl.arange(0, BLOCK_DV)
    part = rows[:, None] * SPLITS + offs_c[None, :]
    part_ok = row_ok[:, None] & (offs_c[None, :] < SPLITS)
    lse_c = tl.load(part_lse_ptr + part, mask=part_ok, other=float("-inf"))
    top = tl.max(lse_c, 1)
    top_safe = tl.where(top == float("-inf"), 0.0, top)  # a row no key reaches: weights 2^-inf = 0, not NaN
    w = tl.math.exp2(lse_c - top_safe[:, None])
    total = tl.sum(w, 1)
    o_c = tl.load(part_o_ptr + part[:, :, None] * HEAD_DIM_V + offs_dv[None, None, :],
                  mask=part_ok[:, :, None] & (offs_dv[None, None, :] < HEAD_DIM_V), other=0.0)
    empty = total == 0.0
    o = tl.sum(o_c * w[:, :, None], 1) / tl.where(empty, 1.0, total)[:, None]
    lse = tl.where(empty, empty_lse, (top_safe + tl.math.log2(tl.where(empty, 1.0, total))) * 0.6931471805599453)
    b = rows // (heads * M)
    h = (rows // M) % heads
    i = rows % M
    o_ptrs = (o_ptr + b[:, None] * stride_ob + h[:, None] * stride_oh + i[:, None] * stride_om
              + offs_dv[None, :] * stride_od)
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None] & (offs_dv[None, :] < HEAD_DIM_V))
    tl.store(lse_ptr + b * stride_lb + h * stride_lh + i * stride_lm, lse, mask=row_ok)


# --------------------------------------------------------------------------- launchers

_chunks = Launcher(_decode_chunk_kernel)
_combine = Launcher(_decode_combine_kernel)
_rules: dict = {}


def decode_config(batch: int, kv_heads: int, rows: int, n: int, head_dim: int, q: torch.Tensor) -> dict:
    """The vendor's "attention_decode" rules for these shapes (N by its next power of two)."""
    rules = _rules.get("attention_decode")
    if rules is None:
        rules = _rules["attention_decode"] = selection.current().heuristics("attention_decode")
    args = {"batch": batch, "kv_heads": kv_heads, "rows": rows, "N": next_power_of_2(n), "HEAD_DIM": head_dim,
            "q_ptr": q}
    for name, rule in rules.items():
        args[name] = rule(args)
    return args


def takes_decode(q: torch.Tensor, k: torch.Tensor) -> bool:
    """Whether a forward of these shapes takes the split-KV kernel: a group's query rows fit one tile and the
    keys are long enough to split."""
    batch, heads, m, _ = q.shape
    kv_heads, n = k.shape[1], k.shape[2]
    return (0 < heads * m // kv_heads <= _MAX_ROWS and n > _SHORT_KEYS and 0 < batch * kv_heads <= _MAX_GRID_Y)


def decode_forward(q, k, v, bias, is_causal, scale, out, lse, empty_lse=0.0, bottom_right=False):
    """flash.attention_forward's contract, computed by the split-KV kernels (``takes_decode`` shapes)."""
    batch, heads, m, d = q.shape
    kv_heads, n, dv = k.shape[1], k.shape[2], v.shape[3]
    group = heads // kv_heads
    config = decode_config(batch, kv_heads, group * m, n, d, q)
    splits = config["SPLITS"]
    bias, bias_strides = _bias_args(bias, q, n)
    block_dv = _block_d(dv)
    int64 = max(_span(t[0, 0]) for t in (q, k, v, out)) > _INT32_SAFE
    if splits > 1:
        part_o = torch.empty((batch * heads * m * splits, dv), dtype=torch.float32, device=q.device)
        part_lse = torch.empty(batch * heads * m * splits, dtype=torch.float32, device=q.device)
    else:
        part_o = part_lse = lse  # not read
    _chunks((splits, batch * kv_heads), q, k, v, bias, out, lse, part_o, part_lse, *q.stride(), *k.stride(),
            *v.stride(), *bias_strides, *out.stride(), *lse.stride(), kv_heads, group, m, n,
            softmax_scale(scale, d) * LOG2E, float(empty_lse), n - m if bottom_right else 0, d, dv, _block_d(d),
            block_dv, bias is not q, bool(is_causal), dot_precision(q.dtype, q.device), _round_p(q), int64,
            max(16, next_power_of_2(group * m)), config["BLOCK_N"], splits,
            num_warps=config["num_warps"], num_stages=config["num_stages"])
    if splits > 1:
        n_rows = batch * heads * m
        block_c = next_power_of_2(splits)
        block_r = min(next_power_of_2(n_rows), max(1, _COMBINE_TILE // (block_c * block_dv)))
        _combine((cdiv(n_rows, block_r),), part_o, part_lse, out, lse, *out.stride(), *lse.stride(), heads, m,
                 n_rows, float(empty_lse), dv, splits, block_r, block_c, block_dv, num_warps=4)


def attention_forward(q, k, v, bias, is_causal, scale, out, lse, empty_lse=0.0, bottom_right=False, dropout=None):
    """Fill ``out`` (batch, heads, M, Dv) and ``lse`` (batch, heads, M) from checked 4-D q, k, v (the contract
    of flash.attention_forward): the split-KV kernels for few query rows over many keys, flash.py's otherwise.
    With ``dropout`` (training, not decoding) always flash.py's kernel, which draws the keep mask."""
    if dropout is None and q.shape[0] * q.shape[1] * q.shape[2] and takes_decode(q, k):
        decode_forward(q, k, v, bias, is_causal, scale, out, lse, empty_lse, bottom_right)
    else:
        flash.attention_forward(q, k, v, bias, is_causal, scale, out, lse, empty_lse, bottom_right, dropout)
