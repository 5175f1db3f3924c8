"""mm: the product of two matrices (``mm``, ``mm.out``) on the shared GEMM kernel (gemm.py).

``matmul`` and ``linear`` without a bias are CompositeImplicitAutograd: for 2-D and folded N-D
operands they decompose into ``mm``, which is what their samples expect.
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import check_same, gemm, overlaps, prepare_out, product_perf, samples
from gems.spec import OpSpec


def _mm(a: torch.Tensor, b: torch.Tensor, out=None) -> torch.Tensor:
    if a.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if b.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    check_same("mm", a, b)
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    result = prepare_out(out, (a.shape[0], b.shape[1]), a)
    target = torch.empty_like(result) if out is not None and overlaps(result, a, b) else result
    gemm(a[None], b[None], target[None])
    return result if target is result else result.copy_(target)


def mm(self, mat2):
    return _mm(self, mat2)


def mm_out(self, mat2, *, out):
    return _mm(self, mat2, out)


SPECS = [
    OpSpec(
        name="mm", family="blas", impls={"mm": mm, "mm.out": mm_out}, call=torch.mm,
        samples=samples("mm_samples"), dtypes=FLOATS, tolerance="reduction", perf=product_perf("mm"),
    ),
]
