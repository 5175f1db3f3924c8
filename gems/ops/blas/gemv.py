"""The GEMV kernel every matrix-vector product shares (mv, addmv, mm/addmm with one output row or column: see
gemm.py's docstring for which take it): y = alpha * (a @ x) + beta * bias for a matrix and a vector, memory-bound,
so each program reduces BLOCK_M rows with plain multiply-adds instead of a tensor-core tile that would be mostly
padding. Key "gemv" of the vendor's tune_configs.yaml. When the row blocks are too few to fill the device, K is
split over more programs and a second kernel adds their partial sums in a fixed order (deterministic). A single
row without alpha or bias is an inner product (inner.py)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.blas.inner import inner
from gems.ops.blas.products import INT32_SAFE, TL_ACC, epilogue, kernel_scalars, span
from gems.ops.blas.tuning import Tuned, multiprocessors
from gems.ops.reduction.planning import reduce_sum
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv

# At most this many programs share a GEMV row block (their partial sums: SPLIT_K x M values in ACC).
_MAX_SPLIT = 64
# Outputs per program of the GEMV's second pass (a few fp32 adds each: any size that fills the device).
_FINISH_BLOCK = 1024


def _gemv_split(args) -> int:
    """Programs sharing each BLOCK_M rows (SPLIT_K, each a run of whole BLOCK_K steps; a second kernel adds
    their partial sums in a fixed order). A matrix read along K (mv, linear's x @ W^T) runs in one pass while
    its row blocks give at least a quarter program per multiprocessor: rows of 1-16 per program read whole
    sectors, and one pass then beat every split with its second launch (H200, bf16, CUDA-graph replays, linear
    1 x 4096 -> 1024: 8x512 tiles in one pass 4.0 us, as tuned with splits 17.6 us, cuBLAS 6.4 us). A matrix
    read along its rows (mm with one output row: x @ W with W row-major) takes 64-256 rows per program to read
    whole 32-byte sectors, so 4096 rows are only 16-64 programs: it splits below two programs per
    multiprocessor, into enough for four."""
    programs = cdiv(args["M"], args["BLOCK_M"])
    units = multiprocessors(args["a_ptr"].device)
    if programs >= (units / 4 if args["stride_ak"] == 1 else 2 * units):
        return 1
    split = min(cdiv(4 * units, programs), cdiv(args["K"], args["BLOCK_K"]), _MAX_SPLIT)
    return 1 << (max(split, 1).bit_length() - 1)  # a power of two (few compiled variants), at most one run per step


def _one_pass_configs(configs, named_args, **kwargs):  # unreached on the interpreter: one config, not pruned
    """For a matrix read along K, the configs that run it in one pass (:func:`_gemv_split`), where any does: the
    tuner times a first pass only, so a split looked faster than it runs (H200, bf16 linear 1 x 4096 -> 1024,
    CUDA-graph replays: 128x32 tiles in 8 runs chosen, 17.1 us; one pass in 8x512 tiles 4.0 us)."""
    if named_args["stride_ak"] != 1:
        return configs
    whole = [c for c in configs if _gemv_split({**named_args, **c.kwargs}) == 1]
    return whole or configs


def _gemv_tuned(kernel):
    return Tuned(selection.current().autotune(
        "gemv", ["M", "K", "stride_am", "stride_ak"], restore_value=["y_ptr"],
        prune_configs_by={"early_config_prune": _one_pass_configs},
    )(triton.heuristics({"SPLIT_K": _gemv_split})(kernel)), scratch=("part_ptr",))


@_gemv_tuned
@triton.jit
def _gemv_kernel(
    a_ptr, x_ptr, y_ptr, bias_ptr, part_ptr,
    M, K,
    stride_am, stride_ak, stride_x, stride_y, stride_bias,
    alpha, beta,
    HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, FP64_SCALARS: tl.constexpr, ACC: tl.constexpr,
    INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr,
):
    """y[m] = alpha * sum_k a[m, k] * x[k] + beta * bias[m]. Grid (row blocks, SPLIT_K): program (i, s)
    sums rows i*BLOCK_M.. over the s-th of SPLIT_K runs of BLOCK_K steps; with SPLIT_K > 1 it writes
    that partial sum to part[s, m] (ACC) and :func:`_gemv_finish_kernel` completes y."""
    pid_k = tl.program_id(1)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_m = offs_m.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
    run = (tl.cdiv(K, BLOCK_K) + SPLIT_K - 1) // SPLIT_K * BLOCK_K
    k_lo = pid_k * run
    k_hi = tl.minimum(K, k_lo + run)
    mask_m = offs_m < M
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + (k_lo + offs_k[None, :]) * stride_ak
    x_ptrs = x_ptr + (k_lo + offs_k) * stride_x
    acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
    for k in range(k_lo, k_hi, BLOCK_K):
        mask_k = offs_k < k_hi - k
        a = tl.load(a_ptrs, mask=mask_m[:, None] & mask_k[None, :], other=0).to(ACC)
        x = tl.load(x_ptrs, mask=mask_k, other=0).to(ACC)
        acc += a * x[None, :]
        a_ptrs += BLOCK_K * stride_ak
        x_ptrs += BLOCK_K * stride_x
    total = reduce_sum(acc, 1)
    if SPLIT_K == 1:
        y = epilogue(total, bias_ptr + offs_m * stride_bias, mask_m, alpha, beta, HAS_BIAS, SCALED, FP64_SCALARS,
                      ACC)
        tl.store(y_ptr + offs_m * stride_y, y.to(y_ptr.dtype.element_ty), mask=mask_m)
    else:
        tl.store(part_ptr + pid_k * M + offs_m, total, mask=mask_m)


@triton.jit
def _gemv_finish_kernel(
    part_ptr, y_ptr, bias_ptr,
    M, stride_y, stride_bias,
    alpha, beta,
    HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, FP64_SCALARS: tl.constexpr, ACC: tl.constexpr,
    INT64: tl.constexpr, SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr,
):
    """y[m] = alpha * sum_s part[s, m] + beta * bias[m], the partial sums added in order s = 0, 1, ..."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_m = offs_m.to(tl.int64)
    mask = offs_m < M
    total = tl.load(part_ptr + offs_m, mask=mask, other=0)
    for s in range(1, SPLIT_K):
        total += tl.load(part_ptr + s * M + offs_m, mask=mask, other=0)
    y = epilogue(total, bias_ptr + offs_m * stride_bias, mask, alpha, beta, HAS_BIAS, SCALED, FP64_SCALARS, ACC)
    tl.store(y_ptr + offs_m * stride_y, y.to(y_ptr.dtype.element_ty), mask=mask)


def gemv(matrix: torch.Tensor, vector: torch.Tensor, y: torch.Tensor, bias=None, alpha=1, beta=0) -> torch.Tensor:
    """y = alpha * (matrix @ vector) + beta * bias for a 2-D matrix and 1-D vectors (bias None or of y's shape)."""
    m, k = matrix.shape
    if m == 0:
        return y
    has_bias = bias is not None and beta != 0
    if m == 1 and not has_bias and alpha == 1:
        inner(matrix[0], vector, y[0])
        return y
    alpha, beta, scaled, fp64 = kernel_scalars(alpha, beta, y.dtype, has_bias)
    bias = bias if has_bias else y
    int64 = max(span(t) for t in (matrix, vector, y, bias)) > INT32_SAFE
    acc = TL_ACC[y.dtype]
    args = (matrix, vector, y, bias, None, m, k, *matrix.stride(), vector.stride(0), y.stride(0), bias.stride(0),
            alpha, beta, has_bias, scaled, fp64, acc, int64)
    named = dict(zip(_gemv_kernel.names, args))
    config = _gemv_kernel.chosen.get(_gemv_kernel.key(named))
    # Room for the partial sums of the chosen config's split, or, before tuning, of any config's.
    configs = [config] if config is not None else _gemv_kernel.autotuner.configs
    rows = max(_gemv_kernel.meta(c, named)["SPLIT_K"] for c in configs)
    part = torch.empty((rows, m), dtype=torch.float64 if fp64 else torch.float32, device=y.device) if rows > 1 else y
    grid = lambda meta: (cdiv(m, meta["BLOCK_M"]), meta["SPLIT_K"])  # noqa: E731
    split = _gemv_kernel.launch(grid, *args[:4], part, *args[5:])["SPLIT_K"]
    if split > 1:
        _finish(cdiv(m, _FINISH_BLOCK), 4, part, y, bias, m, y.stride(0), bias.stride(0), alpha, beta, has_bias,
                scaled, fp64, acc, int64, split, _FINISH_BLOCK)
    return y


_finish = Launcher(_gemv_finish_kernel).flat
