"""baddbmm: beta * self + alpha * (batch1 @ batch2) per batch (``baddbmm``, ``baddbmm.out``,
``baddbmm_``) on the shared GEMM kernel (gemm.py); self broadcast to the result, beta == 0 ignores it.
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.bmm import check_batches
from gems.ops.blas.gemm import check_same, expand_bias, gemm, overlaps, prepare_out, product_perf, samples
from gems.spec import OpSpec


def _baddbmm(self, batch1, batch2, beta, alpha, out=None, inplace=False):
    check_batches("baddbmm", batch1, batch2)
    check_same("baddbmm", batch1, self, what=("batch1", "self"))
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    if inplace and tuple(self.shape) != shape:
        raise RuntimeError(f"The input tensor of shape {list(self.shape)} must have the shape {list(shape)} of "
                           f"the in-place result")
    bias = expand_bias(self, shape, "baddbmm")
    result = self if inplace else prepare_out(out, shape, batch1)
    apart = overlaps(result, batch1, batch2) or (not inplace and out is not None and overlaps(result, self))
    target = torch.empty(shape, dtype=batch1.dtype, device=batch1.device) if apart else result
    gemm(batch1, batch2, target, bias, alpha, beta)
    return result if target is result else result.copy_(target)


def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(self, batch1, batch2, beta, alpha)


def baddbmm_out(self, batch1, batch2, *, beta=1, alpha=1, out):
    return _baddbmm(self, batch1, batch2, beta, alpha, out)


def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(self, batch1, batch2, beta, alpha, inplace=True)


SPECS = [
    OpSpec(
        name="baddbmm", family="blas",
        impls={"baddbmm": baddbmm, "baddbmm.out": baddbmm_out, "baddbmm_": baddbmm_},
        call=torch.baddbmm, samples=samples("baddbmm_samples"), dtypes=FLOATS, tolerance="reduction",
        perf=product_perf("baddbmm", operand=1),
    ),
]
