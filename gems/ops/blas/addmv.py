"""addmv: beta * self + alpha * (mat @ vec) (``addmv``, ``addmv.out``, ``addmv_``) on the shared GEMV
kernel (gemm.py); self broadcast to the result, beta == 0 ignores it."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import expand_bias, gemv, overlaps, prepare_out, product_perf, samples
from gems.ops.blas.mv import check_mv
from gems.spec import OpSpec


def _addmv(self, mat, vec, beta, alpha, out=None, inplace=False):
    check_mv("addmv", mat, vec, self)
    shape = (mat.shape[0],)
    if inplace and tuple(self.shape) != shape:
        raise RuntimeError(f"The input tensor of shape {list(self.shape)} must have the shape {list(shape)} of "
                           f"the in-place result")
    bias = expand_bias(self.reshape(-1) if self.dim() else self, shape, "addmv")
    result = self if inplace else prepare_out(out, shape, mat)
    apart = overlaps(result, mat, vec) or (not inplace and out is not None and overlaps(result, self))
    target = torch.empty(shape, dtype=mat.dtype, device=mat.device) if apart else result
    gemv(mat, vec, target, bias, alpha, beta)
    return result if target is result else result.copy_(target)


def addmv(self, mat, vec, *, beta=1, alpha=1):
    return _addmv(self, mat, vec, beta, alpha)


def addmv_out(self, mat, vec, *, beta=1, alpha=1, out):
    return _addmv(self, mat, vec, beta, alpha, out)


def addmv_(self, mat, vec, *, beta=1, alpha=1):
    return _addmv(self, mat, vec, beta, alpha, inplace=True)


SPECS = [
    OpSpec(
        name="addmv", family="blas", impls={"addmv": addmv, "addmv.out": addmv_out, "addmv_": addmv_},
        call=torch.addmv, samples=samples("addmv_samples"), dtypes=FLOATS, tolerance="reduction",
        perf=product_perf("addmv", operand=1, shapes="mv"),
    ),
]
