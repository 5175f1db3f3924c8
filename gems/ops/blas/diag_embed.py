"""diag_embed: a tensor whose (dim1, dim2) planes hold self's last dimension on the diagonal at
``offset``, zeros elsewhere (``diag_embed``, ``diag_embed.out``). ``diag`` of a vector is
CompositeImplicitAutograd and decomposes into ``diag_embed``. Kernel in diagonal.py."""

from __future__ import annotations

import torch

from gems.checks import check_out
from gems.dtypes import ALL
from gems.ops.blas.diagonal import check_dtype, embed, wrap_dim
from gems.ops.blas.gemm import overlaps
from gems.spec import OpSpec


def _sizes(self, offset, dim1, dim2):
    rank = self.dim() + 1
    dim1, dim2 = wrap_dim(dim1, rank), wrap_dim(dim2, rank)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = self.shape[-1] + abs(offset) if self.dim() else 1 + abs(offset)
    rest = iter(self.shape[:-1])
    return [size if d in (dim1, dim2) else next(rest) for d in range(rank)], dim1, dim2


def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    check_dtype("diag_embed", self)
    sizes, dim1, dim2 = _sizes(self, offset, dim1, dim2)
    return embed(self.reshape(-1) if self.dim() == 0 else self, sizes, offset, dim1, dim2)


def diag_embed_out(self, offset=0, dim1=-2, dim2=-1, *, out):
    check_dtype("diag_embed", self)
    sizes, dim1, dim2 = _sizes(self, offset, dim1, dim2)
    check_out(out, self)
    if list(out.shape) != sizes:
        out.resize_(sizes)
    if overlaps(out, self):
        return out.copy_(diag_embed(self, offset, dim1, dim2))
    return embed(self.reshape(-1) if self.dim() == 0 else self, sizes, offset, dim1, dim2, out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    mk = lambda *s: make_tensor(s, dtype, device)  # noqa: E731
    cases = [
        Sample("contiguous", lambda: (mk(2, 5),)),
        Sample("offset-positive", lambda: (mk(3, 4), 2)),
        Sample("offset-negative", lambda: (mk(4,), -3)),
        Sample("dims-leading", lambda: (mk(3, 4), 1, 0, 1)),
        Sample("dims-apart", lambda: (mk(2, 3, 4), -1, 0, 3)),
        Sample("dims-swapped", lambda: (mk(3, 4), 1, -1, -2)),
        Sample("noncontiguous-transposed", lambda: (mk(4, 3).t(),)),
        Sample("empty", lambda: (mk(0, 3),)),
        Sample("diag-vector", lambda: (mk(7), 1), call=torch.diag, expects="diag_embed"),
        Sample("out", lambda: (mk(3, 4),),
               call=lambda x: torch.diag_embed(x, out=x.new_empty(0)), expects="diag_embed.out"),
    ]
    if dtype == torch.float32:
        cases += [Sample("error-same-dims", lambda: (mk(3, 4), 0, 1, 1)),
                  Sample("error-dim-range", lambda: (mk(3, 4), 0, 0, 3))]
    if dtype.is_floating_point:
        cases.append(Sample("grad", lambda: (mk(3, 4).requires_grad_(),), grad=True))
    return cases


SPECS = [
    OpSpec(name="diag_embed", family="blas", impls={"diag_embed": diag_embed, "diag_embed.out": diag_embed_out},
           call=torch.diag_embed, samples=_samples, dtypes=ALL, tolerance="exact"),
]
