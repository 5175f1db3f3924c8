"""mv: matrix @ vector (``mv``, ``mv.out``) on the shared GEMV kernel (gemm.py). ``matmul`` of a
matrix and a vector decomposes into ``mv``."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import check_same, overlaps, prepare_out, product_perf, samples
from gems.ops.blas.gemv import gemv
from gems.spec import OpSpec


def check_mv(name: str, mat: torch.Tensor, vec: torch.Tensor, self=None) -> None:
    """ATen's checks of addmv/mv operands (RuntimeError)."""
    if mat.dim() != 2 or vec.dim() != 1 or (self is not None and self.dim() > 1):
        ranks = ", ".join(str(t.dim()) for t in (self, mat, vec) if t is not None)
        raise RuntimeError(f"vector + matrix @ vector expected, got {ranks}")
    check_same(name, mat, vec, *(() if self is None else (self,)), what=("mat", "vec"))
    if mat.shape[1] != vec.shape[0] or (self is not None and self.numel() not in (1, mat.shape[0])):
        size = f"input ({', '.join(map(str, self.shape))}), " if self is not None else ""
        raise RuntimeError(f"size mismatch, got {size}mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")


def _mv(mat, vec, out=None):
    check_mv("mv", mat, vec)
    result = prepare_out(out, (mat.shape[0],), mat)
    target = torch.empty_like(result) if out is not None and overlaps(result, mat, vec) else result
    gemv(mat, vec, target)
    return result if target is result else result.copy_(target)


def mv(self, vec):
    return _mv(self, vec)


def mv_out(self, vec, *, out):
    return _mv(self, vec, out)


SPECS = [
    OpSpec(
        name="mv", family="blas", impls={"mv": mv, "mv.out": mv_out}, call=torch.mv,
        samples=samples("mv_samples"), dtypes=FLOATS, tolerance="reduction", perf=product_perf("mv"),
    ),
]
