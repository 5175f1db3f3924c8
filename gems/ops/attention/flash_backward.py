"""The attention backward kernels (FlashAttention-2 style) and their launcher; the math, layouts and rounding
rules are flash.py's (its docstring): delta_i = sum_d dO_id O_id, then dK, dV per key block (looping over the
query heads of its kv group and their query blocks, no atomics for dK, dV), P recomputed from the forward's lse.
With dropout (DROPOUT, dropout.py) the keep mask Z is regenerated from the key the forward saved:
dV = (P Z s)^T dO, dP = (dO V^T) Z s, dS = P (dP - delta), s = 1 / (1 - p).

Two paths for dQ = scale dS K, chosen per call by :func:`one_pass`:
- one pass: the dK/dV kernel also adds each block's dS K into an fp32 buffer with atomics (5 products per
  tile and one Philox draw of the mask), which the delta kernel zeroes first and a last kernel scales and casts;
- two kernels: a dQ kernel per query block recomputes S, P, dP (and the mask) over the key blocks: 7 products
  per tile and the mask drawn twice, but its sums run in a fixed order (deterministic mode takes it).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.attention.dropout import dropout_constants, keep_mask, saved_key
from gems.ops.attention.flash import (
    _INT32_SAFE,
    _MAX_GRID_Y,
    LOG2E,
    _bias_args,
    _block_d,
    _launch,
    _round_p,
    _span,
    softmax_scale,
)
from gems.ops.blas.gemm import dot_precision
from gems.ops.blas.tuning import launch_tuned
from gems.ops.reduction.planning import reduce_sum
from gems.runtime import selection
from gems.runtime.launch import cdiv
from gems.runtime.registration import Fallback


@triton.jit
def _bwd_delta_kernel(o_ptr, do_ptr, delta_ptr, dq_acc_ptr, stride_ob, stride_oh, stride_om, stride_od,
                      stride_gb, stride_gh, stride_gm, stride_gd, heads, M,
                      HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
                      BLOCK_DV: tl.constexpr, ZERO_DQ: tl.constexpr):
    """delta[bh, i] = sum_d dO[b, h, i, d] * O[b, h, i, d] in fp32; ZERO_DQ: also dq_acc[bh, i, :] = 0 (the
    one-pass path's fp32 dQ buffer, (batch * heads, M, HEAD_DIM) contiguous)."""
    bh = tl.program_id(1).to(tl.int64)
    b = bh // heads
    h = bh % heads
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_DV)
    mask = (offs_m[:, None] < M) & (offs_d[None, :] < HEAD_DIM_V)
    o = tl.load(o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
                mask=mask, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + b * stride_gb + h * stride_gh + offs_m[:, None] * stride_gm + offs_d[None, :] * stride_gd,
                 mask=mask, other=0.0).to(tl.float32)
    tl.store(delta_ptr + bh * M + offs_m, reduce_sum(o * do, 1), mask=offs_m < M)
    if ZERO_DQ:
        offs_dq = tl.arange(0, BLOCK_D)
        zero = tl.full([BLOCK_M, BLOCK_D], 0.0, tl.float32)
        tl.store(dq_acc_ptr + (bh * M + offs_m[:, None]) * HEAD_DIM + offs_dq[None, :], zero,
                 mask=(offs_m[:, None] < M) & (offs_dq[None, :] < HEAD_DIM))


@triton.jit
def _probabilities(s, bias_ptrs, lse2, rows, cols, M, N, causal_offset, HAS_BIAS: tl.constexpr,
                   IS_CAUSAL: tl.constexpr):
    """P = exp2(S2 - lse2) of a (rows x cols) tile in base 2, masked keys and rows out of range 0."""
    keep = (rows < M) & (cols < N)
    if HAS_BIAS:
        s += tl.load(bias_ptrs, mask=keep, other=0.0).to(tl.float32) * 1.4426950408889634
    if IS_CAUSAL:
        keep = keep & (cols <= rows + causal_offset)
    return tl.where(keep, tl.math.exp2(s - lse2), 0.0)


# Key "attention_backward": both paths' dK/dV kernel (ONE_PASS in the tuning key: its atomics change the best
# tile). Tuning reruns a kernel: the one-pass dQ buffer is put back between runs.
@selection.current().autotune("attention_backward", ["M", "N", "HEAD_DIM", "HAS_BIAS", "IS_CAUSAL", "ONE_PASS"],
                              restore_value=["dq_acc_ptr"])
@triton.jit(do_not_specialize=["keep_threshold"])
def _bwd_dkdv_kernel(
    q_ptr, k_ptr, v_ptr, bias_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, dq_acc_ptr, seed_ptr, offset_ptr,
    stride_qb, stride_qh, stride_qm, stride_qd, stride_kb, stride_kh, stride_kn, stride_kd,
    stride_vb, stride_vh, stride_vn, stride_vd, stride_bb, stride_bh, stride_bm, stride_bn,
    stride_gb, stride_gh, stride_gm, stride_gd, stride_lb, stride_lh, stride_lm,
    stride_dkb, stride_dkh, stride_dkn, stride_dkd, stride_dvb, stride_dvh, stride_dvn, stride_dvd,
    heads, kv_heads, group, M, N, qk_scale, scale, causal_offset, keep_threshold: tl.int32, drop_scale,
    HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr,
    HAS_BIAS: tl.constexpr, IS_CAUSAL: tl.constexpr, PRECISION: tl.constexpr, ROUND_P: tl.constexpr,
    DROPOUT: tl.constexpr, ONE_PASS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """dK, dV of BLOCK_N keys of one kv head, summed over the query heads that read it (transposed tiles:
    S^T = K Q^T, so that the key rows stay rows). ONE_PASS: also dq_acc[bh, rows] += dS K (unscaled, fp32)
    for every query block visited."""
    bhk = tl.program_id(1).to(tl.int64)
    b = bhk // kv_heads
    hk = bhk % kv_heads
    start_n = tl.program_id(0) * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    n_ok = offs_n[:, None] < N
    k = tl.load(k_ptr + b * stride_kb + hk * stride_kh + offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kd,
                mask=n_ok & (offs_d[None, :] < HEAD_DIM), other=0.0)
    v = tl.load(v_ptr + b * stride_vb + hk * stride_vh + offs_n[:, None] * stride_vn + offs_dv[None, :] * stride_vd,
                mask=n_ok & (offs_dv[None, :] < HEAD_DIM_V), other=0.0)
    k_dq = k  # dS K's operand: fp32 unless CUDA's fp16/bf16 products round dS (_round_p)
    if not ROUND_P:
        k_dq = k.to(tl.float32)
    dk = tl.full([BLOCK_N, BLOCK_D], 0.0, tl.float32)
    dv = tl.full([BLOCK_N, BLOCK_DV], 0.0, tl.float32)
    seed, offset = 0, 0
    if DROPOUT:
        seed, offset = saved_key(seed_ptr, offset_ptr)
    n_lanes = (N + 3) // 4
    lo = 0
    if IS_CAUSAL:  # queries above the block's first key see none of it
        lo = (tl.maximum(start_n - causal_offset, 0) // BLOCK_M) * BLOCK_M
    for h in range(hk * group, hk * group + group):
        q_base = q_ptr + b * stride_qb + h * stride_qh
        do_base = do_ptr + b * stride_gb + h * stride_gh
        bias_base = bias_ptr + b * stride_bb + h * stride_bh
        for start_m in range(lo, M, BLOCK_M):
            rows = start_m + offs_m
            m_ok = rows[:, None] < M
            q = tl.load(q_base + rows[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                        mask=m_ok & (offs_d[None, :] < HEAD_DIM), other=0.0)
            do = tl.load(do_base + rows[:, None] * stride_gm + offs_dv[None, :] * stride_gd,
                         mask=m_ok & (offs_dv[None, :] < HEAD_DIM_V), other=0.0)
            lse2 = tl.load(lse_ptr + b * stride_lb + h * stride_lh + rows * stride_lm, mask=rows < M, other=0.0)
            delta = tl.load(delta_ptr + (b * heads + h) * M + rows, mask=rows < M, other=0.0)
            st = tl.dot(k, tl.trans(q), input_precision=PRECISION) * qk_scale
            pt = _probabilities(st, bias_base + rows[None, :] * stride_bm + offs_n[:, None] * stride_bn,
                                lse2[None, :] * 1.4426950408889634, rows[None, :], offs_n[:, None], M, N,
                                causal_offset, HAS_BIAS, IS_CAUSAL)
            dpt = tl.dot(v, tl.trans(do), input_precision=PRECISION)
            pt_kept = pt
            if DROPOUT:  # Z^T: the mask of (query rows, key columns), transposed to the key rows
                keep_t = tl.trans(keep_mask(seed, offset, (b * heads + h) * M, rows, start_n, n_lanes,
                                            keep_threshold, BLOCK_N))
                pt_kept = tl.where(keep_t, pt, 0.0)
                dpt = tl.where(keep_t, dpt * drop_scale, 0.0)
            dst = pt * (dpt - delta[None, :])
            if ROUND_P:  # unreached on the interpreter: CUDA's fp16/bf16 rounding (_round_p)
                pt_kept = pt_kept.to(do.dtype)
                dst = dst.to(q.dtype)
            else:
                q = q.to(tl.float32)
                do = do.to(tl.float32)
            dv = tl.dot(pt_kept, do, dv, input_precision=PRECISION)
            dk = tl.dot(dst, q, dk, input_precision=PRECISION)
            if ONE_PASS:  # relaxed: the sums are only read by the next kernel
                dq = tl.dot(tl.trans(dst), k_dq, input_precision=PRECISION)
                tl.atomic_add(dq_acc_ptr + ((b * heads + h) * M + rows[:, None]) * HEAD_DIM + offs_d[None, :], dq,
                              mask=m_ok & (offs_d[None, :] < HEAD_DIM), sem="relaxed")
    dk_ptrs = dk_ptr + b * stride_dkb + hk * stride_dkh + offs_n[:, None] * stride_dkn + offs_d[None, :] * stride_dkd
    tl.store(dk_ptrs, (dk * scale + 0.0).to(dk_ptr.dtype.element_ty), mask=n_ok & (offs_d[None, :] < HEAD_DIM))
    if DROPOUT:
        dv = dv * drop_scale
    dv_ptrs = dv_ptr + b * stride_dvb + hk * stride_dvh + offs_n[:, None] * stride_dvn + offs_dv[None, :] * stride_dvd
    tl.store(dv_ptrs, (dv + 0.0).to(dv_ptr.dtype.element_ty), mask=n_ok & (offs_dv[None, :] < HEAD_DIM_V))


# Key "attention_backward_dq": the two-kernel path's dQ kernel (many query rows per program, few keys per step:
# the reverse of the dK/dV kernel's tiles).
@selection.current().autotune("attention_backward_dq", ["M", "N", "HEAD_DIM", "HAS_BIAS", "IS_CAUSAL"])
@triton.jit(do_not_specialize=["keep_threshold"])
def _bwd_dq_kernel(
    q_ptr, k_ptr, v_ptr, bias_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, seed_ptr, offset_ptr,
    stride_qb, stride_qh, stride_qm, stride_qd, stride_kb, stride_kh, stride_kn, stride_kd,
    stride_vb, stride_vh, stride_vn, stride_vd, stride_bb, stride_bh, stride_bm, stride_bn,
    stride_gb, stride_gh, stride_gm, stride_gd, stride_lb, stride_lh, stride_lm,
    stride_dqb, stride_dqh, stride_dqm, stride_dqd,
    heads, group, M, N, qk_scale, scale, causal_offset, keep_threshold: tl.int32, drop_scale,
    HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr,
    HAS_BIAS: tl.constexpr, IS_CAUSAL: tl.constexpr, PRECISION: tl.constexpr, ROUND_P: tl.constexpr,
    DROPOUT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """dQ of BLOCK_M query rows of one head."""
    bh = tl.program_id(1).to(tl.int64)
    b = bh // heads
    h = bh % heads
    hk = h // group
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    m_ok = rows[:, None] < M
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + rows[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                mask=m_ok & (offs_d[None, :] < HEAD_DIM), other=0.0)
    do = tl.load(do_ptr + b * stride_gb + h * stride_gh + rows[:, None] * stride_gm + offs_dv[None, :] * stride_gd,
                 mask=m_ok & (offs_dv[None, :] < HEAD_DIM_V), other=0.0)
    lse2 = tl.load(lse_ptr + b * stride_lb + h * stride_lh + rows * stride_lm, mask=rows < M, other=0.0)
    lse2 = lse2 * 1.4426950408889634
    delta = tl.load(delta_ptr + bh * M + rows, mask=rows < M, other=0.0)
    k_base = k_ptr + b * stride_kb + hk * stride_kh
    v_base = v_ptr + b * stride_vb + hk * stride_vh
    bias_base = bias_ptr + b * stride_bb + h * stride_bh
    dq = tl.full([BLOCK_M, BLOCK_D], 0.0, tl.float32)
    seed, offset = 0, 0
    if DROPOUT:
        seed, offset = saved_key(seed_ptr, offset_ptr)
    hi = N
    if IS_CAUSAL:
        hi = tl.minimum(N, start_m + BLOCK_M + causal_offset)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        n_ok = cols[:, None] < N
        k = tl.load(k_base + cols[:, None] * stride_kn + offs_d[None, :] * stride_kd,
                    mask=n_ok & (offs_d[None, :] < HEAD_DIM), other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_dv[None, :] * stride_vd,
                    mask=n_ok & (offs_dv[None, :] < HEAD_DIM_V), other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale
        p = _probabilities(s, bias_base + rows[:, None] * stride_bm + cols[None, :] * stride_bn, lse2[:, None],
                           rows[:, None], cols[None, :], M, N, causal_offset, HAS_BIAS, IS_CAUSAL)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        if DROPOUT:
            keep = keep_mask(seed, offset, bh * M, rows, start_n, (N + 3) // 4, keep_threshold, BLOCK_N)
            dp = tl.where(keep, dp * drop_scale, 0.0)
        ds = p * (dp - delta[:, None])
        if not ROUND_P:
            dq = tl.dot(ds, k.to(tl.float32), dq, input_precision=PRECISION)
        else:  # unreached on the interpreter: CUDA's fp16/bf16 rounding (_round_p)
            dq = tl.dot(ds.to(k.dtype), k, dq, input_precision=PRECISION)
    dq_ptrs = dq_ptr + b * stride_dqb + h * stride_dqh + rows[:, None] * stride_dqm + offs_d[None, :] * stride_dqd
    tl.store(dq_ptrs, (dq * scale + 0.0).to(dq_ptr.dtype.element_ty), mask=m_ok & (offs_d[None, :] < HEAD_DIM))


@triton.jit
def _bwd_dq_finish_kernel(dq_acc_ptr, dq_ptr, stride_dqb, stride_dqh, stride_dqm, stride_dqd, heads, M, scale,
                          HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):
    """The one-pass path's dQ[b, h, i] = scale * dq_acc[bh, i] in dQ's dtype (+0.0 where nothing was added)."""
    bh = tl.program_id(1).to(tl.int64)
    b = bh // heads
    h = bh % heads
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (rows[:, None] < M) & (offs_d[None, :] < HEAD_DIM)
    dq = tl.load(dq_acc_ptr + (bh * M + rows[:, None]) * HEAD_DIM + offs_d[None, :], mask=mask, other=0.0)
    dq_ptrs = dq_ptr + b * stride_dqb + h * stride_dqh + rows[:, None] * stride_dqm + offs_d[None, :] * stride_dqd
    tl.store(dq_ptrs, (dq * scale + 0.0).to(dq_ptr.dtype.element_ty), mask=mask)


# --------------------------------------------------------------------------- launcher

# The vendor's ONE_PASS_MAX_KEYS (key "attention_backward_route"): the longest key sequence whose dQ the
# one-pass path serves (each dQ row then takes one atomic add per key block).
_ROUTE = selection.current().heuristics("attention_backward_route")


def one_pass(batch, heads, kv_heads, m, n, d, dropout) -> bool:
    """Whether a backward takes the one-pass path: never in deterministic mode (its atomic adds meet in any
    order), else where the vendor's route allows it."""
    if torch.are_deterministic_algorithms_enabled():
        return False
    args = {"batch": batch, "heads": heads, "kv_heads": kv_heads, "M": m, "N": n, "HEAD_DIM": d,
            "DROPOUT": dropout}
    return n <= _ROUTE["ONE_PASS_MAX_KEYS"](args)


# --------------------------------------------------------------------------- launcher

def attention_backward(grad_out, q, k, v, out, lse, bias, is_causal, scale, dq, dk, dv, bottom_right=False,
                       dropout=None):
    """Fill dq, dk, dv (shapes of q, k, v) from the forward's out and natural-log lse (batch, heads, M).
    ``dropout``: None, or (dropout_p, seed tensor, offset tensor) as the dropout forward wrote them (int64, or
    uint64 seen as int64: one element each)."""
    batch, heads, m, d = q.shape
    kv_heads, n, d_v = k.shape[1], k.shape[2], v.shape[3]
    if batch * heads == 0:
        return
    too_large = batch * heads > _MAX_GRID_Y or max(_span(t[0, 0]) for t in (q, k, v, out)) > _INT32_SAFE
    if too_large:  # unreached on the interpreter: 65,536+ heads or 2^31 elements, minutes to interpret
        raise Fallback("attention backward of more than 65535 heads or of a head past int32 offsets")
    bias, bias_strides = _bias_args(bias, q, n)
    has_bias, causal = bias is not q, bool(is_causal)
    sm_scale = softmax_scale(scale, d)
    offset = n - m if bottom_right else 0
    precision = dot_precision(q.dtype, q.device)
    fused = one_pass(batch, heads, kv_heads, m, n, d, dropout is not None)
    delta = torch.empty((batch * heads, m), dtype=torch.float32, device=q.device)
    # The one-pass dQ sums (zeroed by the delta kernel); the two-kernel path passes delta, never read.
    dq_acc = torch.empty((batch * heads, m, d), dtype=torch.float32, device=q.device) if fused else delta
    # No queries: dK = dV = 0 (the dK/dV kernel visits no query block); no keys: dQ = 0 likewise.
    if m:
        _launch(_bwd_delta_kernel, (cdiv(m, 64), batch * heads), out, grad_out, delta, dq_acc, *out.stride(),
                *grad_out.stride(), heads, m, d, d_v, 64, _block_d(d), _block_d(d_v), fused)
    common = (*q.stride(), *k.stride(), *v.stride(), *bias_strides, *grad_out.stride(), *lse.stride())
    if dropout is None:
        rng, rng_args = (lse, lse), (0, 1.0)  # never read
    else:
        rng, rng_args = dropout[1:], dropout_constants(dropout[0])
    consts = (*rng_args, d, d_v, _block_d(d), _block_d(d_v), has_bias, causal, precision, _round_p(q),
              dropout is not None)
    if n:
        grid = lambda meta: (cdiv(n, meta["BLOCK_N"]), batch * kv_heads)  # noqa: E731
        launch_tuned(_bwd_dkdv_kernel, grid, q, k, v, bias, grad_out, lse, delta, dk, dv, dq_acc, *rng, *common,
                     *dk.stride(), *dv.stride(), heads, kv_heads, heads // kv_heads, m, n, sm_scale * LOG2E, sm_scale,
                     offset, *consts, fused)
    if m and fused:
        _launch(_bwd_dq_finish_kernel, (cdiv(m, 64), batch * heads), dq_acc, dq, *dq.stride(), heads, m, sm_scale, d,
                64, _block_d(d))
    elif m:
        grid = lambda meta: (cdiv(m, meta["BLOCK_M"]), batch * heads)  # noqa: E731
        launch_tuned(_bwd_dq_kernel, grid, q, k, v, bias, grad_out, lse, delta, dq, *rng, *common, *dq.stride(),
                     heads, heads // kv_heads, m, n, sm_scale * LOG2E, sm_scale, offset, *consts)
