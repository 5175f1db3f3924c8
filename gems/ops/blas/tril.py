"""tril: the lower triangle of the last two dimensions, from ``diagonal`` down (``tril``, ``tril_``,
``tril.out``); one program per tile of a matrix (kernel in diagonal.py)."""

from __future__ import annotations

import torch

from gems.checks import check_out
from gems.dtypes import ALL
from gems.ops.blas.diagonal import as_batched, check_dtype, lower_triangle
from gems.ops.blas.gemm import overlaps
from gems.spec import OpSpec


def _check(self):
    if self.dim() < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    check_dtype("tril", self)


def tril(self, diagonal=0):
    _check(self)
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    x = as_batched(self)
    lower_triangle(x if x is not None else as_batched(self.contiguous()), as_batched(out), diagonal, False)
    return out


def tril_(self, diagonal=0):
    _check(self)
    view = as_batched(self)
    if view is None:
        return self.copy_(tril(self, diagonal))
    lower_triangle(view, view, diagonal, True)
    return self


def tril_out(self, diagonal=0, *, out):
    _check(self)
    check_out(out, self)
    if out.shape != self.shape:
        out.resize_(self.shape)
    view, x = as_batched(out), as_batched(self)
    if view is None or x is None or overlaps(out, self):
        return out.copy_(tril(self, diagonal))
    lower_triangle(x, view, diagonal, False)
    return out


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    mk = lambda *s: make_tensor(s, dtype, device)  # noqa: E731
    cases = [
        Sample("contiguous", lambda: (mk(13, 17),)),
        Sample("diagonal-positive", lambda: (mk(13, 17), 3)),
        Sample("diagonal-negative", lambda: (mk(17, 13), -4)),
        Sample("diagonal-beyond", lambda: (mk(5, 6), 9)),
        Sample("noncontiguous-transposed", lambda: (mk(17, 13).t(), 1)),
        Sample("batched", lambda: (mk(2, 3, 7, 9), -1)),
        Sample("batch-permuted", lambda: (mk(7, 3, 9).permute(1, 0, 2),)),
        Sample("empty", lambda: (mk(0, 5),)),
        Sample("out", lambda: (mk(13, 17), 2), call=lambda x, d: torch.tril(x, d, out=x.new_empty(0)),
               expects="tril.out"),
        Sample("inplace", lambda: (mk(13, 17), -2), call=lambda x, d: x.tril_(d), expects="tril_"),
    ]
    if dtype == torch.float32:
        cases.append(Sample("error-rank", lambda: (mk(5),)))
    if dtype.is_floating_point:
        cases.append(Sample("grad", lambda: (mk(13, 17).requires_grad_(),), grad=True))
    return cases


SPECS = [
    OpSpec(name="tril", family="blas", impls={"tril": tril, "tril_": tril_, "tril.out": tril_out},
           call=torch.tril, samples=_samples, dtypes=ALL, tolerance="exact"),
]
