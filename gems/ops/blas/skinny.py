"""Products with few output rows (an LLM's decode step: x (M, K) @ W (K, N), M = 1..16, or up to the vendor's
SKINNY_MAX_ROWS: a decode batch).

out = alpha * (a @ b) + beta * bias with few rows M. Memory-bound on ``b``: each program owns BLOCK_N
output columns for all M rows (one tensor-core tile of 16, 32 or 64 rows, rows past M masked to zero) and reads its
columns of ``b`` once, BLOCK_K rows a step with wide loads along whichever of b's dimensions is contiguous,
accumulating in fp32 (fp64 for fp64). N / BLOCK_N programs are too few to fill a device (4096 columns
in 128-wide blocks: 32 programs for 132 multiprocessors), so K is split over SPLIT_K programs per column
block (:func:`_split`); they write partial sums and a second kernel adds them in a fixed order
(deterministic, as ATen's split-K GEMMs are) and applies alpha, beta and the bias. Key "skinny" of the
vendor's tune_configs.yaml.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.blas.products import INT32_SAFE, TL_ACC, dot_precision, epilogue, kernel_scalars, span
from gems.ops.blas.tuning import Tuned, multiprocessors
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv

# At most this many output rows take this path unless the vendor's gemm_route rules give SKINNY_MAX_ROWS (at
# most _MAX_TILE_ROWS): one tile holds them.
MAX_ROWS = 16
# The rows of the tensor-core tile: M rounded up to a power of two, at least 16 (tl.dot's least), at most this.
_MAX_TILE_ROWS = 64
# At most this many programs share a column block (partial sums: SPLIT_K x M x N accumulator values).
_MAX_SPLIT = 32
# Each program's run of K spans at least this many BLOCK_K steps, so its pipelined loads overlap.
_MIN_STEPS = 2
# Outputs per program of the second pass (a few adds each: any size that fills the device).
_FINISH_BLOCK = 1024
# K is split until the programs fill about this many per multiprocessor. Measured (H100, round 1,
# x[1, 4096] @ W[4096, 4096] fp16): splits giving ~one program per multiprocessor won (64-wide blocks
# in 2 runs 22.8 us, 128-wide in 4 runs 23.1 us; 128-wide in 16 runs 25.6 us; ATen 21.2 us); round 1's
# four per multiprocessor split M = 4 into 32 runs (0.70x ATen). Round 2 (H100, this rule vs four): every
# skinny tile was slower under four for fp16 M = 1 and 4; mm fp16 M = 1/4/16 0.93/0.89/0.95x ATen, bf16
# 0.91/0.91/0.95x.
_PROGRAMS_PER_SM = 1
# The partial sums (SPLIT_K x M x N fp32 values, written then read) stay within 1/_PARTIAL_SHARE of b's bytes.
# The tuner times the first pass only, so without this bound it chose splits whose second pass cost more than
# they saved (H200, bf16 linear 32 x 4096 -> 1024: 256-wide blocks in 32 runs, 17.7 us with the second pass,
# against 11.7 us for 64-wide blocks in 8 runs).
_PARTIAL_SHARE = 4


def _split(args) -> int:
    """Programs per column block: the largest power of two (few compiled variants) that keeps all programs
    within _PROGRAMS_PER_SM per multiprocessor, each run at least _MIN_STEPS BLOCK_K steps of K, and the
    partial sums within _PARTIAL_SHARE of b's bytes (1 on the interpreter, one "multiprocessor":
    tests/test_blas_tuning.py sets an H100's count to reach the split)."""
    programs = cdiv(args["N"], args["BLOCK_N"])
    steps = cdiv(args["K"], args["BLOCK_K"])
    # Per output: split partial sums of 4 bytes, written and read, against K of b's elements.
    thrifty = args["K"] * args["b_ptr"].element_size() // (_PARTIAL_SHARE * 8 * args["M"])
    split = min(_PROGRAMS_PER_SM * multiprocessors(args["a_ptr"].device) // programs, steps // _MIN_STEPS,
                _MAX_SPLIT, thrifty)
    return 1 << (max(split, 1).bit_length() - 1)


# The vendor's product routing rules (persistent.py reads its thresholds; this module SKINNY_MAX_ROWS).
_ROUTE = selection.current().heuristics("gemm_route")


def _tuned(kernel):
    return Tuned(selection.current().autotune(
        "skinny", ["M", "N", "K", "stride_ak", "stride_bk", "stride_bn", "PRECISION"], restore_value=["c_ptr"],
    )(triton.heuristics({"SPLIT_K": _split})(kernel)), scratch=("part_ptr",))


@_tuned
@triton.jit
def _skinny_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr, part_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, stride_im, stride_in,
    alpha, beta,
    HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, FP64_SCALARS: tl.constexpr, PRECISION: tl.constexpr,
    ACC: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr,
):
    """c[m, n] = alpha * sum_k a[m, k] * b[k, n] + beta * bias[m, n], M <= BLOCK_M. Grid (column blocks,
    SPLIT_K): program (j, s) sums columns j*BLOCK_N.. over the s-th of SPLIT_K runs of BLOCK_K steps;
    with SPLIT_K > 1 it writes that partial sum to part[s, m, n] (ACC) and :func:`_finish_kernel`
    completes c."""
    pid_k = tl.program_id(1)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
    run = (tl.cdiv(K, BLOCK_K) + SPLIT_K - 1) // SPLIT_K * BLOCK_K
    k_lo = pid_k * run
    k_hi = tl.minimum(K, k_lo + run)
    mask_m = offs_m < M
    # Columns past the edge wrap onto valid ones: b's loads need no N mask (those sums are not stored).
    cols = offs_n % N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + (k_lo + offs_k[None, :]) * stride_ak
    b_ptrs = b_ptr + (k_lo + offs_k[:, None]) * stride_bk + cols[None, :] * stride_bn
    acc = tl.full([BLOCK_M, BLOCK_N], 0, ACC)
    for k in range(k_lo, k_hi, BLOCK_K):
        mask_k = offs_k < k_hi - k
        a = tl.load(a_ptrs, mask=mask_m[:, None] & mask_k[None, :], other=0)
        b = tl.load(b_ptrs, mask=mask_k[:, None], other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    mask = mask_m[:, None] & (offs_n[None, :] < N)
    if SPLIT_K == 1:
        bias_ptrs = bias_ptr + offs_m[:, None] * stride_im + offs_n[None, :] * stride_in
        acc = epilogue(acc, bias_ptrs, mask, alpha, beta, HAS_BIAS, SCALED, FP64_SCALARS, ACC)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)
    else:
        tl.store(part_ptr + (pid_k * M + offs_m[:, None]) * N + offs_n[None, :], acc, mask=mask)


@triton.jit
def _finish_kernel(
    part_ptr, c_ptr, bias_ptr,
    M, N, stride_cm, stride_cn, stride_im, stride_in,
    alpha, beta,
    HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, FP64_SCALARS: tl.constexpr, ACC: tl.constexpr,
    INT64: tl.constexpr, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr,
):
    """c[m, n] = alpha * sum_s part[s, m, n] + beta * bias[m, n], the partial sums added in order s = 0, 1, ..."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    size = M * N
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs = offs.to(tl.int64)
        size = M.to(tl.int64) * N
    mask = offs < size
    part_ptrs = part_ptr + offs
    total = tl.load(part_ptrs, mask=mask, other=0)
    for _ in range(1, SPLIT_K):
        part_ptrs += size
        total += tl.load(part_ptrs, mask=mask, other=0)
    m = offs // N
    n = offs % N
    total = epilogue(total, bias_ptr + m * stride_im + n * stride_in, mask, alpha, beta, HAS_BIAS, SCALED,
                     FP64_SCALARS, ACC)
    tl.store(c_ptr + m * stride_cm + n * stride_cn, total.to(c_ptr.dtype.element_ty), mask=mask)


_finish = Launcher(_finish_kernel).flat


def max_rows(args: dict) -> int:
    """The most rows (or columns) a product of ``args`` (gemm_route's: M, N, K, A_K_MAJOR, B_K_MAJOR) may have
    to take this path: the vendor's SKINNY_MAX_ROWS rule, else MAX_ROWS."""
    rule = _ROUTE.get("SKINNY_MAX_ROWS")
    return MAX_ROWS if rule is None else min(rule(args), _MAX_TILE_ROWS)


def takes(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype, along_k: bool = False) -> bool:
    """Whether the single product a (M, K) @ b (K, N) takes this path (else gemm.py's GEMM or GEMV): a few
    rows or columns (:func:`max_rows`; more than MAX_ROWS only in fp16/bf16), more than one of each; one row or
    column of fp16/bf16 too (tensor cores keep the 16-row padding free; an fp32 or fp64 one stays on the FMA
    GEMV, which does not pay 16x the math) unless its matrix is read ``along_k`` (contiguous along K), which the
    GEMV reads faster."""
    (m, k), n = a.shape, b.shape[1]
    few = min(m, n)
    half = dtype in (torch.float16, torch.bfloat16)
    if few == 1:
        return half and not along_k
    limit = max_rows({"M": m, "N": n, "K": k, "A_K_MAJOR": a.stride(1) == 1, "B_K_MAJOR": b.stride(0) == 1})
    # Wider tiles only where measured: fp16/bf16 (an fp64 tile of 32 rows outgrows shared memory).
    return few <= (limit if half else min(limit, MAX_ROWS))


def product(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, bias=None, alpha=1, beta=0) -> torch.Tensor:
    """out = alpha * (a @ b) + beta * bias for 2-D a (M, K), b (K, N), out (M, N), bias None or expanded
    to out's shape, min(M, N) <= MAX_ROWS; with N the smaller, computed as out^T = b^T a^T."""
    if out.shape[1] < out.shape[0]:
        return product(b.t(), a.t(), out.t(), None if bias is None else bias.t(), alpha, beta)
    m, n = out.shape
    k = a.shape[1]
    has_bias = bias is not None and beta != 0
    alpha, beta, scaled, fp64 = kernel_scalars(alpha, beta, out.dtype, has_bias)
    bias = bias if has_bias else out
    int64 = max(span(t) for t in (a, b, out, bias)) > INT32_SAFE or 32 * m * n > INT32_SAFE
    acc = TL_ACC[out.dtype]
    args = (a, b, out, bias, None, m, n, k, *a.stride(), *b.stride(), *out.stride(), *bias.stride(), alpha, beta,
            has_bias, scaled, fp64, dot_precision(a.dtype, a.device), acc, int64, max(16, triton.next_power_of_2(m)))
    named = dict(zip(_skinny_kernel.names, args))
    config = _skinny_kernel.chosen.get(_skinny_kernel.key(named))
    # Room for the partial sums of the chosen config's split, or, before tuning, of any config's.
    configs = [config] if config is not None else _skinny_kernel.autotuner.configs
    rows = max(_skinny_kernel.meta(c, named)["SPLIT_K"] for c in configs)
    part = torch.empty((rows, m, n), dtype=torch.float64 if fp64 else torch.float32,
                       device=out.device) if rows > 1 else out
    grid = lambda meta: (cdiv(n, meta["BLOCK_N"]), meta["SPLIT_K"])  # noqa: E731
    split = _skinny_kernel.launch(grid, *args[:4], part, *args[5:])["SPLIT_K"]
    if split > 1:
        finish_split(part, out, bias, split, alpha, beta, has_bias, scaled, fp64)
    return out


def finish_split(part, out, bias, split, alpha, beta, has_bias, scaled, fp64=False):
    """out = alpha * sum_s part[s] + beta * bias, the second pass of a product whose K was split over
    ``split`` programs per output (here and in persistent.py): part (>= split, M, N) in the accumulator type,
    alpha and beta as :func:`~gems.ops.blas.products.kernel_scalars` gives them, bias out itself when unused."""
    m, n = out.shape
    int64 = max(span(t) for t in (out, bias)) > INT32_SAFE or split * m * n > INT32_SAFE
    _finish(cdiv(m * n, _FINISH_BLOCK), 4, part, out, bias, m, n, *out.stride(), *bias.stride(), alpha, beta,
            has_bias, scaled, fp64, TL_ACC[out.dtype], int64, split, _FINISH_BLOCK)
