"""The attention kernels every attention overload shares (FlashAttention-2 style), their launchers and
ATen's argument checks.

    S = scale * Q K^T + bias (causal: -inf where key j > query i, top-left aligned as SDPA's is_causal)
    P = softmax(S) row-wise,  O = P V,  lse = log(sum_j exp(S_ij))  (natural log, fp32)

Q is (batch, heads, M, D), K (batch, kv_heads, N, D), V (batch, kv_heads, N, Dv), any strides; query head
h reads kv head h // (heads // kv_heads) (grouped-query attention). bias is an additive float mask
broadcast to (batch, heads, M, N) by strides (0 where broadcast).

- forward: one program per (BLOCK_M query rows, batch*head); it walks the key blocks with an online
  softmax in fp32, in base 2 (log2(e) folded into the scale, exp2). Causal programs stop at their
  diagonal block, and the blocks before it (and, without causality, every block inside N) run without
  bound or causal masks. Configs: the vendor's ``tune_configs.yaml``, key "attention", tuned once per
  shape class (M and N by their next power of two: gems/ops/blas/tuning.py), so a decode loop's growing N
  tunes once per power of two and its calls are plain launches the native layer replays. A few query rows over
  a long key sequence take decode.py's split-KV kernels instead (its ``attention_forward`` is the forward
  every overload calls, and it shares this kernel's key walk, ``_fwd_keys``).
- backward (flash_backward.py; from the forward's lse, P is recomputed, never stored): delta_i = sum_d dO_id O_id; then
  dK, dV per key block (one program per BLOCK_N keys of one kv head, looping over the query heads of its
  group and their query blocks: no atomics for dK, dV), and dQ either added atomically by that kernel (one
  pass) or computed per query block by a second kernel (deterministic). dS = P (dP - delta), dQ = scale dS K,
  dK = scale dS^T Q, dV = P^T dO. Keys "attention_backward", "attention_backward_dq", "attention_backward_route".

fp16/bf16 operands go to tl.dot as they are with fp32 accumulation; P and dS are rounded to the input
dtype for their products on CUDA, as ATen's CUDA kernels do, and stay fp32 elsewhere, as ATen's CPU
kernel keeps them. Gradients store +0.0 where nothing contributed (not the -0.0 of 0 * negative), as
ATen's do. fp32 products are IEEE unless the user allowed TF32 matmuls. A row that every key is masked
out of gets O = 0 and the lse the caller names.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.ops.attention.dropout import dropout_constants, keep_mask
from gems.ops.blas.gemm import dot_precision
from gems.ops.blas.tuning import launch_tuned
from gems.ops.reduction.planning import reduce_max, reduce_sum
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback

ATTENTION_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
LOG2E = 1.4426950408889634
# Batch*heads go on the grid's second axis, which CUDA caps at 65535 programs.
_MAX_GRID_Y = 65535
# Offsets inside one head in 64 bits once a head spans more elements than int32 offsets reach.
_INT32_SAFE = 2**31 - 1 - 2**20


@triton.jit
def _load(ptrs, mask_a, mask_b, USE_A: tl.constexpr, USE_B: tl.constexpr):
    """A tile load masked by mask_a and/or mask_b only where the flags say a bound can be crossed."""
    if USE_A and USE_B:
        return tl.load(ptrs, mask=mask_a & mask_b, other=0.0)
    elif USE_A:
        return tl.load(ptrs, mask=mask_a, other=0.0)
    elif USE_B:
        return tl.load(ptrs, mask=mask_b, other=0.0)
    else:
        return tl.load(ptrs)


@triton.jit
def _fwd_block(acc, m_i, l_i, q, k_base, v_base, bias_base, start_n, offs_m, offs_n, offs_d, offs_dv, M, N,
               stride_kn, stride_kd, stride_vn, stride_vd, stride_bm, stride_bn, qk_scale, causal_offset,
               HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr, EVEN_D: tl.constexpr, EVEN_DV: tl.constexpr,
               HAS_BIAS: tl.constexpr, IS_CAUSAL: tl.constexpr, BOUNDED: tl.constexpr, PRECISION: tl.constexpr,
               ROUND_P: tl.constexpr, seed, offset, lane_base, n_lanes, keep_threshold, DROPOUT: tl.constexpr,
               BLOCK_N: tl.constexpr):
    """One key block of the online softmax; BOUNDED blocks mask keys past N and (causal) past the diagonal.
    DROPOUT: P V takes P * Z (dropout.py's keep mask), the normalizer l_i the un-dropped P."""
    cols = start_n + offs_n
    kt = _load(k_base + cols[None, :] * stride_kn + offs_d[:, None] * stride_kd, cols[None, :] < N,
               offs_d[:, None] < HEAD_DIM, BOUNDED, not EVEN_D)
    s = tl.dot(q, kt, input_precision=PRECISION) * qk_scale
    if HAS_BIAS:
        bias = tl.load(bias_base + offs_m[:, None] * stride_bm + cols[None, :] * stride_bn,
                       mask=(offs_m[:, None] < M) & (cols[None, :] < N), other=0.0)
        s += bias.to(tl.float32) * 1.4426950408889634
    if BOUNDED:
        keep = cols[None, :] < N
        if IS_CAUSAL:
            keep = keep & (cols[None, :] <= offs_m[:, None] + causal_offset)
        s = tl.where(keep, s, float("-inf"))
    m_new = tl.maximum(m_i, reduce_max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with no key yet: exp2(-inf) = 0, not NaN
    p = tl.math.exp2(s - m_safe[:, None])
    alpha = tl.math.exp2(m_i - m_safe)
    l_i = l_i * alpha + reduce_sum(p, 1)
    v = _load(v_base + cols[:, None] * stride_vn + offs_dv[None, :] * stride_vd, cols[:, None] < N,
              offs_dv[None, :] < HEAD_DIM_V, BOUNDED, not EVEN_DV)
    if DROPOUT:
        p = tl.where(keep_mask(seed, offset, lane_base, offs_m, start_n, n_lanes, keep_threshold, BLOCK_N), p, 0.0)
    if not ROUND_P:
        acc = tl.dot(p, v.to(tl.float32), acc * alpha[:, None], input_precision=PRECISION)
    else:  # unreached on the interpreter: CUDA's fp16/bf16 rounding (_round_p)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
    return acc, m_new, l_i


@triton.jit
def _fwd_keys(acc, m_i, l_i, q, k_base, v_base, bias_base, lo, mid, hi, offs_m, offs_n, offs_d, offs_dv, M, N,
              stride_kn, stride_kd, stride_vn, stride_vd, stride_bm, stride_bn, qk_scale, causal_offset,
              HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr, EVEN_D: tl.constexpr, EVEN_DV: tl.constexpr,
              HAS_BIAS: tl.constexpr, IS_CAUSAL: tl.constexpr, PRECISION: tl.constexpr, ROUND_P: tl.constexpr,
              BLOCK_N: tl.constexpr, seed=0, offset=0, lane_base=0, n_lanes=0, keep_threshold=0,
              DROPOUT: tl.constexpr = False):
    """The online softmax over keys [lo, hi) (lo and mid multiples of BLOCK_N): the blocks before mid need no
    key bound nor causal mask, the rest are BOUNDED. DROPOUT: see _fwd_block (the caller scales O by 1 / (1 - p))."""
    for start_n in range(lo, mid, BLOCK_N):
        acc, m_i, l_i = _fwd_block(acc, m_i, l_i, q, k_base, v_base, bias_base, start_n, offs_m, offs_n, offs_d,
                                   offs_dv, M, N, stride_kn, stride_kd, stride_vn, stride_vd, stride_bm, stride_bn,
                                   qk_scale, causal_offset, HEAD_DIM, HEAD_DIM_V, EVEN_D, EVEN_DV, HAS_BIAS,
                                   IS_CAUSAL, False, PRECISION, ROUND_P, seed, offset, lane_base, n_lanes,
                                   keep_threshold, DROPOUT, BLOCK_N)
    for start_n in range(mid, hi, BLOCK_N):
        acc, m_i, l_i = _fwd_block(acc, m_i, l_i, q, k_base, v_base, bias_base, start_n, offs_m, offs_n, offs_d,
                                   offs_dv, M, N, stride_kn, stride_kd, stride_vn, stride_vd, stride_bm, stride_bn,
                                   qk_scale, causal_offset, HEAD_DIM, HEAD_DIM_V, EVEN_D, EVEN_DV, HAS_BIAS,
                                   IS_CAUSAL, True, PRECISION, ROUND_P, seed, offset, lane_base, n_lanes,
                                   keep_threshold, DROPOUT, BLOCK_N)
    return acc, m_i, l_i


@selection.current().autotune("attention", ["M", "N", "HEAD_DIM", "HAS_BIAS", "IS_CAUSAL"])
@triton.jit(do_not_specialize=["seed", "offset", "graph", "keep_threshold"])
def _attn_fwd_kernel(
    q_ptr, k_ptr, v_ptr, bias_ptr, o_ptr, lse_ptr, seed_ptr, offset_ptr, seed_out_ptr, offset_out_ptr,
    stride_qb, stride_qh, stride_qm, stride_qd, stride_kb, stride_kh, stride_kn, stride_kd,
    stride_vb, stride_vh, stride_vn, stride_vd, stride_bb, stride_bh, stride_bm, stride_bn,
    stride_ob, stride_oh, stride_om, stride_od, stride_lb, stride_lh, stride_lm,
    heads, group, M, N, qk_scale, empty_lse, causal_offset, seed: tl.int64, offset: tl.int64, graph: tl.int32,
    keep_threshold: tl.int32, drop_scale,
    HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr,
    HAS_BIAS: tl.constexpr, IS_CAUSAL: tl.constexpr, PRECISION: tl.constexpr, ROUND_P: tl.constexpr,
    INT64: tl.constexpr, DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """O[b, h, rows] and lse[b, h, rows] for BLOCK_M query rows; qk_scale = scale * log2(e). Causal: key j
    is seen by query i where j <= i + causal_offset (0: top-left, N - M: bottom-right). DROPOUT: O = (P * Z) V
    * drop_scale (dropout.py), the key (seed, offset; inside a CUDA graph, graph != 0, read from seed_ptr and
    offset_ptr + offset) written by program (0, 0) to seed_out_ptr / offset_out_ptr for the backward."""
    pid_m = tl.program_id(0)
    if IS_CAUSAL:  # the longest rows first: they set the kernel's tail
        pid_m = tl.num_programs(0) - 1 - pid_m
    bh = tl.program_id(1).to(tl.int64)
    b = bh // heads
    h = bh % heads
    hk = h // group
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
    q = _load(q_ptr + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
              offs_m[:, None] < M, offs_d[None, :] < HEAD_DIM, True, HEAD_DIM != BLOCK_D)
    k_base = k_ptr + b * stride_kb + hk * stride_kh
    v_base = v_ptr + b * stride_vb + hk * stride_vh
    bias_base = bias_ptr + b * stride_bb + h * stride_bh
    acc = tl.full([BLOCK_M, BLOCK_DV], 0.0, tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.full([BLOCK_M], 0.0, tl.float32)
    hi = N
    full = (N // BLOCK_N) * BLOCK_N  # blocks that need no key bound
    if IS_CAUSAL:
        hi = tl.minimum(N, start_m + BLOCK_M + causal_offset)
        first = tl.maximum(start_m + causal_offset, 0)  # the first row's last key, + 1
        full = tl.minimum(full, (first // BLOCK_N) * BLOCK_N)  # and lie wholly left of the diagonal
    if DROPOUT:
        if graph != 0:  # unreached on the interpreter: CUDA graph capture
            seed = tl.load(seed_ptr)
            offset = tl.load(offset_ptr) + offset
        if (tl.program_id(0) == 0) & (tl.program_id(1) == 0):
            tl.store(seed_out_ptr, seed.to(seed_out_ptr.dtype.element_ty))
            tl.store(offset_out_ptr, offset.to(offset_out_ptr.dtype.element_ty))
    acc, m_i, l_i = _fwd_keys(acc, m_i, l_i, q, k_base, v_base, bias_base, 0, full, hi, offs_m, offs_n, offs_d,
                              offs_dv, M, N, stride_kn, stride_kd, stride_vn, stride_vd, stride_bm, stride_bn,
                              qk_scale, causal_offset, HEAD_DIM, HEAD_DIM_V, HEAD_DIM == BLOCK_D,
                              HEAD_DIM_V == BLOCK_DV, HAS_BIAS, IS_CAUSAL, PRECISION, ROUND_P, BLOCK_N, seed, offset,
                              bh * M, (N + 3) // 4, keep_threshold, DROPOUT)
    empty = l_i == 0.0  # every key masked out (or none at all)
    o = acc / tl.where(empty, 1.0, l_i)[:, None]
    if DROPOUT:
        o = o * drop_scale
    lse = tl.where(empty, empty_lse, (m_i + tl.math.log2(tl.where(empty, 1.0, l_i))) * 0.6931471805599453)
    row_ok = offs_m < M
    o_ptrs = o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_dv[None, :] * stride_od
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None] & (offs_dv[None, :] < HEAD_DIM_V))
    tl.store(lse_ptr + b * stride_lb + h * stride_lh + offs_m * stride_lm, lse, mask=row_ok)


# --------------------------------------------------------------------------- launchers

_launchers: dict = {}


def _launch(kernel, grid, *args):
    launcher = _launchers.get(kernel)
    if launcher is None:
        launcher = _launchers[kernel] = Launcher(kernel)
    launcher(grid, *args)


def _block_d(d: int) -> int:
    return max(16, triton.next_power_of_2(d))  # tl.dot needs 16 at least


def _span(t: torch.Tensor) -> int:
    return sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()) if n) + 1


def _bias_args(bias, q, n):
    """The bias (or q as an unread stand-in) and its 4 strides, broadcast to (batch, heads, M, N)."""
    if bias is None:
        return q, (0, 0, 0, 0)
    bias = bias.expand(q.shape[0], q.shape[1], q.shape[2], n)
    return bias, bias.stride()


def _round_p(q) -> bool:
    """Round P and dS to fp16/bf16 for their products where ATen's kernels do (CUDA's flash and
    memory-efficient kernels feed tensor cores); ATen's CPU kernel keeps them in fp32."""
    return q.device.type == "cuda" and q.dtype != torch.float32


def softmax_scale(scale, head_dim: int) -> float:
    return float(scale) if scale is not None else 1.0 / math.sqrt(head_dim)


def forward_launch(q, k, v, bias, is_causal, scale, out, lse, empty_lse=0.0, bottom_right=False, dropout=None):
    """The forward kernel's grid (a function of its config) and arguments, every constexpr but the config's
    (a variants bench launched them with its own configs: tools/gpu_attnperf.py in git history at ca8e18b).
    ``dropout``: None, or (dropout_p, PhiloxKey, seed_out, offset_out) (dropout.py)."""
    batch, heads, m, d = q.shape
    kv_heads, n, dv = k.shape[1], k.shape[2], v.shape[3]
    bias, bias_strides = _bias_args(bias, q, n)
    int64 = max(_span(t[0, 0]) for t in (q, k, v, out)) > _INT32_SAFE
    grid = lambda meta: (cdiv(m, meta["BLOCK_M"]), batch * heads)  # noqa: E731
    if dropout is None:
        rng = (lse, lse, lse, lse)  # never read nor written
        rng_args = (0, 0, 0, 0, 1.0)
    else:
        p, key, seed_out, offset_out = dropout
        seed_ptr, offset_ptr, seed, offset, graph = key.kernel_args(q.device)
        rng = (seed_ptr, offset_ptr, seed_out, offset_out)
        rng_args = (seed, offset, graph, *dropout_constants(p))
    return grid, (q, k, v, bias, out, lse, *rng, *q.stride(), *k.stride(), *v.stride(), *bias_strides,
                  *out.stride(), *lse.stride(), heads, heads // kv_heads, m, n, softmax_scale(scale, d) * LOG2E,
                  float(empty_lse), n - m if bottom_right else 0, *rng_args, d, dv, _block_d(d), _block_d(dv),
                  bias is not q, bool(is_causal), dot_precision(q.dtype, q.device), _round_p(q), int64,
                  dropout is not None)


def attention_forward(q, k, v, bias, is_causal, scale, out, lse, empty_lse=0.0, bottom_right=False, dropout=None):
    """Fill ``out`` (batch, heads, M, Dv) and ``lse`` (batch, heads, M) from checked 4-D q, k, v. Causal
    masks align top-left (SDPA's) or ``bottom_right`` (FlashAttention's own for M != N). ``dropout``: see
    forward_launch."""
    batch, heads, m, _ = q.shape
    if batch * heads * m == 0:
        return
    if batch * heads > _MAX_GRID_Y:  # unreached on the interpreter: 65,536+ heads, minutes to interpret
        raise Fallback(f"batch * heads = {batch * heads} exceeds the grid's {_MAX_GRID_Y} programs")
    grid, args = forward_launch(q, k, v, bias, is_causal, scale, out, lse, empty_lse, bottom_right, dropout)
    launch_tuned(_attn_fwd_kernel, grid, *args)
