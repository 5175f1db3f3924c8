"""The matrix-product kernel every blas operator shares, its launcher and ATen's argument checks.

Two kernels cover mm, bmm, addmm, baddbmm, mv, addmv and addr's products:

- ``gemm``: out[b] = alpha * (a[b] @ b[b]) + beta * bias[b] for (batch, M, K) x (batch, K, N) views
  with any strides (a batch stride 0 is an expanded operand, a bias of strides 0 a broadcast one).
  Tiles of BLOCK_M x BLOCK_N outputs, visited in groups of GROUP_M tile rows so that the tiles running
  together share their operand rows and columns in L2; fp32 accumulation for fp16/bf16/fp32, fp64 for
  fp64. The configs are autotuned from the vendor's ``tune_configs.yaml``, key "gemm".
- ``gemv`` (gemv.py): a matrix and a vector. An mm with a single output row or column takes it too: fp32/fp64
  always, fp16/bf16 when its matrix is read along K (linear's x @ W^T, 1x4096x11008 fp16 on an H100: 43.3 us,
  1.08x ATen; skinny.py's kernel 49.9 us as tuned, 45.4 us at best).

A large single fp16/bf16 product (a linear layer's, prefill or training) goes to persistent.py's persistent
GEMM (:func:`persistent.mode`: its TMA mode above the vendor's TMA_MIN_FLOPS, pointer loads above
PERSISTENT_MIN_FLOPS); this kernel keeps batches, fp32, fp64 and the smaller products.

A single product with at most 16 output rows or columns (a vendor may raise it to 64: a decode batch's; one row or
column only in fp16/bf16 read across K, x @ W with W row-major) goes to skinny.py (:func:`skinny.takes`).

Both launch through :class:`~gems.ops.blas.tuning.Tuned`: tuned on a key's first call, a plain launch after.

fp32 products are exact IEEE products (``input_precision="ieee"``) on the FMA units unless the user
allowed TF32 for CUDA matmuls (``torch.backends.cuda.matmul.allow_tf32``), where ATen uses TF32 too. Either
way one operand is first copied column-major when it is row-major (:func:`products.column_major`, a Triton
tile transpose): b K-major for TF32, a M-major for the FMA dot (why: :func:`gemm`). ``beta == 0`` ignores bias
entirely (NaN in it does not propagate), as BLAS and ATen do.
"""

from __future__ import annotations

import importlib

import torch
import triton
import triton.language as tl

from gems.ops.blas import persistent, skinny
from gems.ops.blas.gemv import gemv
from gems.ops.blas.products import (
    INT32_SAFE,
    MAX_GRID_Y,
    TL_ACC,
    column_major,
    dot_precision,
    epilogue,
    kernel_scalars,
    span,
)
from gems.ops.blas.tuning import Tuned, fitting_configs
from gems.runtime import selection
from gems.runtime.launch import cdiv
from gems.runtime.registration import Fallback
from gems.spec import PerfSpec, lazy

# The dtypes gems multiplies; ATen refuses integer products on CUDA and computes them on the CPU, so
# for those it runs its own kernel (a Fallback) and refuses or computes as it does.
GEMM_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _gemm_tuned(kernel):
    # PRECISION is in the key: an fp32 product tuned for TF32 tensor cores is not the best IEEE one.
    return Tuned(selection.current().autotune(
        "gemm", ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "PRECISION"],
        restore_value=["c_ptr"],  # tuning runs the kernel repeatedly; an in-place c is also its bias
        prune_configs_by={"early_config_prune": fitting_configs},
    )(triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})(kernel)))


@_gemm_tuned
@triton.jit
def _gemm_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    stride_ib, stride_im, stride_in,
    alpha, beta,
    HAS_BIAS: tl.constexpr, SCALED: tl.constexpr, FP64_SCALARS: tl.constexpr, PRECISION: tl.constexpr,
    ACC: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    """c[batch, m, n] = alpha * sum_k a[batch, m, k] * b[batch, k, n] + beta * bias[batch, m, n].

    Grid: (output tiles, batches). Tile pid is placed group by group: GROUP_M tile rows, all tile
    columns, column-major inside the group.
    """
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    width = GROUP_M * grid_n
    first_m = (pid // width) * GROUP_M
    group_rows = tl.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % group_rows
    pid_n = (pid % width) // group_rows
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
    # Rows and columns past the edge wrap onto valid ones: operand loads need no M/N mask (their
    # results land in the masked-off part of the tile).
    rows = offs_m % M
    cols = offs_n % N
    a_ptrs = a_ptr + batch * stride_ab + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + batch * stride_bb + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.full([BLOCK_M, BLOCK_N], 0, ACC)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k, other=0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k, other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    bias_ptrs = bias_ptr + batch * stride_ib + offs_m[:, None] * stride_im + offs_n[None, :] * stride_in
    acc = epilogue(acc, bias_ptrs, mask, alpha, beta, HAS_BIAS, SCALED, FP64_SCALARS, ACC)
    c_ptrs = c_ptr + batch * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


# --------------------------------------------------------------------------- launchers

def gemm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, bias=None, alpha=1, beta=0) -> torch.Tensor:
    """out = alpha * (a @ b) + beta * bias for 3-D (batch, M, K), (batch, K, N), (batch, M, N) tensors;
    ``bias`` is None or expanded to out's shape. Arguments must have been checked (:func:`check_same`)."""
    batches, m, n = out.shape
    if out.numel() == 0:
        return out
    k = a.shape[2]
    has_bias = bias is not None and beta != 0
    # A one-row (or one-column) product reads its matrix along K when b's columns (a's rows) are contiguous.
    along_k = (m == 1 and b.stride(1) == 1) or (n == 1 and a.stride(2) == 1)
    if batches == 1 and skinny.takes(a[0], b[0], out.dtype, along_k):
        skinny.product(a[0], b[0], out[0], bias[0] if has_bias else None, alpha, beta)
        return out
    if batches == 1 and (m == 1 or n == 1):
        # One output row: y = b^T a[0]; one output column: y = a b[:, 0]. Both are matrix-vector products.
        if m == 1:
            matrix, vector, y = b[0].t(), a[0, 0], out[0, 0]
        else:
            matrix, vector, y = a[0], b[0, :, 0], out[0, :, 0]
        gemv(matrix, vector, y, (bias[0, 0] if m == 1 else bias[0, :, 0]) if has_bias else None, alpha, beta)
        return out
    how = persistent.mode(a[0], b[0], out.dtype) if batches == 1 else None
    if how is not None:
        persistent.product(a[0], b[0], out[0], bias[0] if has_bias else None, alpha, beta, how)
        return out
    alpha, beta, scaled, fp64 = kernel_scalars(alpha, beta, out.dtype, has_bias)
    bias = bias if has_bias else out
    precision = dot_precision(a.dtype, a.device)
    # A TF32 product reads a b whose rows are contiguous (b[k, n] row-major) from a K-major copy: Hopper's
    # TF32 wgmma reads its B tile from shared memory K-major only (Triton transposes only 16-bit operands), so
    # a row-major b is staged through registers on every K step instead of copied straight in. Measured (H100,
    # tools/gpu_blasperf2.py): mm fp32 4096^3 0.43x cuBLAS without a copy, 0.61x with torch's copy; 8192^3
    # 0.36x / 0.80x; b already K-major ("nk") 0.81x / 0.85x, the bound of any copy.
    # An fp32 product without TF32 (FMA units) reads a row-major a (a[m, k]) from an M-major copy: Triton's FMA
    # dot gives each thread 4x4 outputs and reads 4 consecutive rows of its first operand per K step from
    # shared memory, scalar loads when that operand is row-major, one 16-byte load when M-major (compiled for
    # sm_90 at 128x64x32 w4 s4, the H100's tuned tile: 368 shared loads per K step of 32 as given, 176 from
    # the copy). Measured (H100): mm 4096^3 0.87x cuBLAS as given (3052 vs 2660 us), 0.90x with torch's copy
    # (2944 us), a already M-major 0.95x; 8192^3 0.90x / 0.93x (22966 us); addmm 4096^3 0.89x as given. Both
    # copies are now products.column_major's tile transpose (4096^2 fp32: 50 us vs torch's 141). Swapping the
    # operands instead (c^T = b^T a^T, no copy) ran 0.57x.
    if precision == "tf32" and b.stride(2) == 1 and b.stride(1) != 1:  # unreached on the interpreter: CUDA
        b = column_major(b)
    if precision == "ieee" and a.dtype == torch.float32 and a.stride(2) == 1 and a.stride(1) != 1:
        a = column_major(a)
    int64 = max(span(t) for t in (a[0], b[0], out[0], bias[0])) > INT32_SAFE
    for start in range(0, batches, MAX_GRID_Y):
        stop = min(start + MAX_GRID_Y, batches)
        args = [t[start:stop] for t in (a, b, out, bias)]
        strides = [s for t in args for s in t.stride()]
        grid = lambda meta, count=stop - start: (cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"]), count)  # noqa: E731
        _gemm_kernel.launch(grid, *args, m, n, k, *strides, alpha, beta,
                            has_bias, scaled, fp64, precision, TL_ACC[out.dtype], int64)
    return out


# --------------------------------------------------------------------------- ATen's checks


def check_dtype(name: str, *tensors: torch.Tensor) -> None:
    """Refuse what gems does not compute (ATen then runs it), before any work."""
    for t in tensors:
        if t.dtype not in GEMM_DTYPES:
            raise Fallback(f"{name} of {t.dtype} is not handled by gems")


def check_same(name: str, *tensors: torch.Tensor, what=("m1", "m2")) -> None:
    """ATen's "same dtype, same device" checks of matrix-product operands (RuntimeError)."""
    first = tensors[0]
    for t in tensors[1:]:
        if t.device != first.device:  # unreached on the interpreter: one device
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{first.device} and {t.device}!")
        if t.dtype != first.dtype:
            raise RuntimeError(f"{name}: expected {what[0]} and {what[1]} to have the same dtype, but got: "
                               f"{first.dtype} != {t.dtype}")
    check_dtype(name, *tensors)


def prepare_out(out: torch.Tensor | None, shape, like: torch.Tensor) -> torch.Tensor:
    """A result tensor: fresh, or ``out`` checked as ATen checks it (dtype, device) and resized."""
    if out is None:
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    if out.dtype != like.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {like.dtype}, but got {out.dtype} instead")
    if out.device != like.device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected out tensor to have device {like.device}, but got {out.device} instead")
    if tuple(out.shape) != tuple(shape):
        out.resize_(shape)
    return out


def overlaps(out: torch.Tensor, *inputs: torch.Tensor) -> bool:
    """Whether ``out`` may share memory with an input (then the result is computed apart and copied)."""
    if out.numel() == 0:
        return False
    start, end = out.data_ptr(), out.data_ptr() + span(out) * out.element_size()
    for t in inputs:
        if t is not None and t.numel() and t.untyped_storage().data_ptr() == out.untyped_storage().data_ptr():
            t_start = t.data_ptr()
            if t_start < end and start < t_start + span(t) * t.element_size():
                return True
    return False


def expand_bias(bias: torch.Tensor, shape, name: str) -> torch.Tensor:
    """``bias`` broadcast to the result shape, with ATen's message when it cannot be."""
    try:
        return bias.expand(shape)
    except RuntimeError as exc:
        raise RuntimeError(f"{name}: {exc}") from None


def product_perf(kind: str, operand: int = 0, shapes: str | None = None) -> PerfSpec:
    """The perf declaration of a product: inputs of ``kind`` (see gems/testing/samples_blas.perf_inputs),
    shapes under ``shapes`` (default: the same key) in perf/shapes.yaml, flops 2*M*N*K with K from
    ``sample.args[operand]``."""
    return PerfSpec(inputs=lazy("gems.testing.samples_blas", "perf_inputs", kind), shapes=shapes or kind,
                    bytes=lazy("gems.testing.samples_blas", "moved_bytes"),
                    flops=lazy("gems.testing.samples_blas", "product_flops", operand))


def samples(name: str, *args):
    """The conformance samples of ``name`` from gems/testing/samples_blas.py, imported on first use."""
    return lazy("gems.testing.samples_blas", name, *args) if args else _direct(name)


def _direct(name: str):
    def call(dtype, device, quick):
        return getattr(importlib.import_module("gems.testing.samples_blas"), name)(dtype, device, quick)
    call.__qualname__ = f"samples_blas.{name}"
    return call
