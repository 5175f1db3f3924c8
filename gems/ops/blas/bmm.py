"""bmm: batched matrix products (``bmm``, ``bmm.out``) on the shared GEMM kernel (gemm.py).

Any strides, including a batch stride of 0 (an expanded operand, as ``matmul`` makes when it
broadcasts batch dimensions: ``matmul`` of N-D operands decomposes into ``bmm``).
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import check_same, gemm, overlaps, prepare_out, product_perf, samples
from gems.spec import OpSpec


def check_batches(name: str, a: torch.Tensor, b: torch.Tensor, what=("batch1", "batch2")) -> None:
    """ATen's checks of two (batch, M, K) x (batch, K, N) operands (RuntimeError)."""
    for t, label in zip((a, b), what):
        if t.dim() != 3:
            raise RuntimeError(f"{label} must be a 3D tensor")
    check_same(name, a, b)
    batches, _, k = a.shape
    if tuple(b.shape[:2]) != (batches, k):
        raise RuntimeError(f"Expected size for first two dimensions of {what[1]} tensor to be: [{batches}, {k}] "
                           f"but got: [{b.shape[0]}, {b.shape[1]}].")


def _bmm(a: torch.Tensor, b: torch.Tensor, out=None) -> torch.Tensor:
    check_batches("bmm", a, b)
    result = prepare_out(out, (a.shape[0], a.shape[1], b.shape[2]), a)
    target = torch.empty_like(result) if out is not None and overlaps(result, a, b) else result
    gemm(a, b, target)
    return result if target is result else result.copy_(target)


def bmm(self, mat2):
    return _bmm(self, mat2)


def bmm_out(self, mat2, *, out):
    return _bmm(self, mat2, out)


SPECS = [
    OpSpec(
        name="bmm", family="blas", impls={"bmm": bmm, "bmm.out": bmm_out}, call=torch.bmm,
        samples=samples("bmm_samples"), dtypes=FLOATS, tolerance="reduction", perf=product_perf("bmm"),
    ),
]
