"""addr: beta * self + alpha * outer(vec1, vec2) (``addr``, ``addr.out``, ``addr_``) on the shared GEMM
kernel as a product with K = 1; self broadcast to the result, beta == 0 ignores it.

``outer``/``ger`` and ``kron`` are CompositeImplicitAutograd: they decompose into a broadcast ``mul``
(gems' pointwise kernel), which their samples here expect.
"""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import check_same, expand_bias, gemm, overlaps, prepare_out, samples
from gems.spec import OpSpec


def _addr(self, vec1, vec2, beta, alpha, out=None, inplace=False):
    for t, label in ((vec1, "vec1"), (vec2, "vec2")):
        if t.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {label}, but got {t.dim()}-D")
    if not vec1.dtype == vec2.dtype == self.dtype:
        # addr promotes its operands (mixed products and integer self): ATen's meta kernel says to what.
        dtype = torch.addr(*(t.to("meta") for t in (self, vec1, vec2))).dtype
        if inplace and not torch.can_cast(dtype, self.dtype):
            raise RuntimeError(f"result type {dtype} can't be cast to the desired output type {self.dtype}")
        dtype = self.dtype if inplace else dtype
        vec1, vec2, self = vec1.to(dtype), vec2.to(dtype), self if inplace else self.to(dtype)
    check_same("addr", vec1, vec2, self, what=("vec1", "vec2"))
    shape = (vec1.shape[0], vec2.shape[0])
    if inplace and tuple(self.shape) != shape:
        raise RuntimeError(f"The input tensor of shape {list(self.shape)} must have the shape {list(shape)} of "
                           f"the in-place result")
    bias = expand_bias(self, shape, "addr")
    result = self if inplace else prepare_out(out, shape, vec1)
    apart = overlaps(result, vec1, vec2) or (not inplace and out is not None and overlaps(result, self))
    target = torch.empty(shape, dtype=vec1.dtype, device=vec1.device) if apart else result
    gemm(vec1[None, :, None], vec2[None, None, :], target[None], bias[None], alpha, beta)
    return result if target is result else result.copy_(target)


def addr(self, vec1, vec2, *, beta=1, alpha=1):
    return _addr(self, vec1, vec2, beta, alpha)


def addr_out(self, vec1, vec2, *, beta=1, alpha=1, out):
    return _addr(self, vec1, vec2, beta, alpha, out)


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    return _addr(self, vec1, vec2, beta, alpha, inplace=True)


SPECS = [
    OpSpec(
        name="addr", family="blas", impls={"addr": addr, "addr.out": addr_out, "addr_": addr_},
        call=torch.addr, samples=samples("addr_samples"), dtypes=FLOATS,
    ),
]
