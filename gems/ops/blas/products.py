"""What the blas family's product kernels share (gemm.py's GEMM and GEMV, skinny.py's few-row product):
the accumulator types, the alpha/beta epilogue, how scalars reach a kernel, when index math needs 64 bits,
and whether an fp32 product may use TF32."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import float64_bits
from gems.ops.blas.tuning import keep_in_python

# Index math in 64 bits once a tensor spans more elements than int32 offsets reach (with a block of margin).
INT32_SAFE = 2**31 - 1 - 2**20
# The accumulator of each product dtype: fp32 for fp16/bf16/fp32, fp64 for fp64.
TL_ACC = {torch.float16: tl.float32, torch.bfloat16: tl.float32, torch.float32: tl.float32,
          torch.float64: tl.float64}


@triton.jit
def scalar(value, FP64_SCALARS: tl.constexpr, ACC: tl.constexpr):
    """alpha/beta as the accumulator type: fp64 values arrive as their bits (a float argument is fp32)."""
    if FP64_SCALARS:
        return tl.cast(tl.cast(value, tl.int64), tl.float64, bitcast=True)
    else:
        return tl.cast(value, ACC)


@triton.jit
def epilogue(acc, bias_ptrs, mask, alpha, beta, HAS_BIAS: tl.constexpr, SCALED: tl.constexpr,
             FP64_SCALARS: tl.constexpr, ACC: tl.constexpr):
    """alpha * acc + beta * bias, in the accumulator type."""
    if SCALED:
        acc = acc * scalar(alpha, FP64_SCALARS, ACC)
    if HAS_BIAS:
        bias = tl.load(bias_ptrs, mask=mask, other=0).to(ACC)
        acc = acc + bias * scalar(beta, FP64_SCALARS, ACC)
    return acc


def dot_precision(dtype: torch.dtype, device: torch.device) -> str:
    """"tf32" for an fp32 product on CUDA when the user allowed TF32 matmuls (ATen then uses it), else "ieee".
    A call that reads the flag stays off the native layer's plans, whose key does not cover it."""
    if dtype == torch.float32 and device.type == "cuda":
        keep_in_python("an fp32 product reads torch.backends.cuda.matmul.allow_tf32 on each call")
        if torch.backends.cuda.matmul.allow_tf32:
            return "tf32"
    return "ieee"


def span(t: torch.Tensor) -> int:
    """Elements from a tensor's first to its last one, plus one."""
    return sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()) if n) + 1


def kernel_scalars(alpha, beta, dtype, has_bias):
    """(alpha, beta, SCALED, FP64_SCALARS) as the kernels take them."""
    fp64 = dtype == torch.float64
    alpha, beta = float(alpha), float(beta) if has_bias else 0.0
    if fp64:
        return float64_bits(alpha), float64_bits(beta), alpha != 1.0, True
    return alpha, beta, alpha != 1.0, False
