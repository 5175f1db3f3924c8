"""addmm: beta * self + alpha * (mat1 @ mat2) (``addmm``, ``addmm.out``, ``addmm_``) on the shared
GEMM kernel (gemm.py), self broadcast to the result and added in the kernel's epilogue.

``linear`` with a bias is CompositeImplicitAutograd and decomposes into ``addmm``. beta == 0 ignores
self (NaN in it does not propagate), as ATen does.
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import check_same, expand_bias, gemm, overlaps, prepare_out, product_perf, samples
from gems.spec import OpSpec


def _check(self, mat1, mat2):
    for t, label in ((mat1, "mat1"), (mat2, "mat2")):
        if t.dim() != 2:
            raise RuntimeError(f"{label} must be a matrix, got {t.dim()}-D tensor")
    check_same("addmm", mat1, mat2, self, what=("mat1", "mat2"))
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")


def _addmm(self, mat1, mat2, beta, alpha, out=None, inplace=False):
    _check(self, mat1, mat2)
    shape = (mat1.shape[0], mat2.shape[1])
    if inplace and tuple(self.shape) != shape:
        raise RuntimeError(f"The input tensor of shape {list(self.shape)} must have the shape {list(shape)} of "
                           f"the in-place result")
    bias = expand_bias(self, shape, "addmm")
    result = self if inplace else prepare_out(out, shape, mat1)
    # The kernel reads each bias element just before writing the same output element, so the result
    # may be self itself; any other overlap is computed apart and copied.
    apart = overlaps(result, mat1, mat2) or (not inplace and out is not None and overlaps(result, self))
    target = torch.empty(shape, dtype=mat1.dtype, device=mat1.device) if apart else result
    gemm(mat1[None], mat2[None], target[None], bias[None], alpha, beta)
    return result if target is result else result.copy_(target)


def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return _addmm(self, mat1, mat2, beta, alpha)


def addmm_out(self, mat1, mat2, *, beta=1, alpha=1, out):
    return _addmm(self, mat1, mat2, beta, alpha, out)


def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return _addmm(self, mat1, mat2, beta, alpha, inplace=True)


SPECS = [
    OpSpec(
        name="addmm", family="blas", impls={"addmm": addmm, "addmm.out": addmm_out, "addmm_": addmm_},
        call=torch.addmm, samples=samples("addmm_samples"), dtypes=FLOATS, tolerance="reduction",
        perf=product_perf("addmm", operand=1),
    ),
]
