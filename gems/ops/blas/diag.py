"""diag: ``diag`` is CompositeImplicitAutograd: of a vector it is ``diag_embed`` (diag_embed.py), of a
matrix ``diagonal_copy``, served here (``diagonal_copy``, ``diagonal_copy.out``): the diagonal at
``offset`` of the (dim1, dim2) planes, copied out. Kernel in diagonal.py."""

from __future__ import annotations

import math

import torch

from gems.checks import check_out
from gems.dtypes import ALL
from gems.ops.blas.diagonal import as_batched, check_dtype, diagonal_layout, read_diagonal
from gems.ops.blas.gemm import overlaps
from gems.spec import OpSpec


def _diagonal_copy(self, offset, dim1, dim2, out=None):
    check_dtype("diagonal_copy", self)
    if self.dim() < 2:
        raise RuntimeError(f"diagonal dimensions requires ndim larger than 1, but got ndim {self.dim()}")
    order, n, _, _ = diagonal_layout(list(self.shape), offset, dim1, dim2)
    shape = [self.shape[d] for d in order[:-2]] + [n]
    if out is not None:
        check_out(out, self)
        if list(out.shape) != shape:
            out.resize_(shape)
    result = out if out is not None and out.is_contiguous() and not overlaps(out, self) else \
        torch.empty(shape, dtype=self.dtype, device=self.device)
    planes = self.permute(order)
    x = as_batched(planes)
    if x is None:  # other dims that do not merge: read a contiguous copy
        x = as_batched(planes.contiguous())
    read_diagonal(x, offset, result.view(math.prod(shape[:-1]), n))
    return result if out is None or result is out else out.copy_(result)


def diagonal_copy(self, offset=0, dim1=0, dim2=1):
    return _diagonal_copy(self, offset, dim1, dim2)


def diagonal_copy_out(self, offset=0, dim1=0, dim2=1, *, out):
    return _diagonal_copy(self, offset, dim1, dim2, out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    mk = lambda *s: make_tensor(s, dtype, device)  # noqa: E731
    cases = [
        Sample("contiguous", lambda: (mk(13, 17),)),
        Sample("offset-positive", lambda: (mk(13, 17), 5)),
        Sample("offset-negative", lambda: (mk(13, 17), -6)),
        Sample("offset-beyond", lambda: (mk(4, 5), 7)),
        Sample("noncontiguous-transposed", lambda: (mk(17, 13).t(), 2)),
        Sample("noncontiguous-strided", lambda: (mk(13, 34)[:, ::2],)),
        Sample("empty", lambda: (mk(0, 5),)),
        Sample("out", lambda: (mk(13, 17), 1), call=lambda x, o: torch.diag(x, o, out=x.new_empty(0)),
               expects="diagonal_copy.out"),
        Sample("diagonal-copy-3d", lambda: (mk(3, 5, 4), 1, 2, 0), call=torch.diagonal_copy),
        Sample("diagonal-copy-4d", lambda: (mk(2, 5, 3, 4), -1, 1, 3), call=torch.diagonal_copy),
    ]
    if dtype == torch.float32:
        cases.append(Sample("error-rank", lambda: (mk(2, 3, 4),)))
    if dtype.is_floating_point:
        cases.append(Sample("grad", lambda: (mk(5, 7).requires_grad_(),), grad=True))
    return cases


SPECS = [
    OpSpec(name="diag", family="blas", impls={"diagonal_copy": diagonal_copy, "diagonal_copy.out": diagonal_copy_out},
           call=torch.diag, samples=_samples, dtypes=ALL, tolerance="exact"),
]
