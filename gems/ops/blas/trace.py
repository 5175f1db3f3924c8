"""trace: the sum of a matrix's main diagonal (``trace``), accumulated in fp32 (fp64 for fp64; integer
inputs give int64, as in ATen; bool is left to ATen). One program walks the diagonal (kernel in diagonal.py)."""

from __future__ import annotations

import torch

from gems.dtypes import NUMERIC
from gems.ops.blas.diagonal import check_dtype, read_diagonal
from gems.runtime.registration import Fallback
from gems.spec import OpSpec


def trace(self):
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    check_dtype("trace", self)
    if self.dtype == torch.bool:
        raise Fallback("trace of bool: ATen refuses it on the CPU; left to ATen on every device")
    dtype = self.dtype if self.dtype.is_floating_point else torch.int64
    return read_diagonal(self, 0, torch.empty((), dtype=dtype, device=self.device), total=True)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    mk = lambda *s: make_tensor(s, dtype, device)  # noqa: E731
    cases = [
        Sample("contiguous", lambda: (mk(13, 17),), reduction_size=13),
        Sample("tall", lambda: (mk(37, 5),), reduction_size=5),
        Sample("long", lambda: (mk(1100, 1100),) if not quick else (mk(300, 301),), reduction_size=1100),
        Sample("noncontiguous-transposed", lambda: (mk(17, 13).t(),), reduction_size=13),
        Sample("noncontiguous-strided", lambda: (mk(13, 34)[:, ::2],), reduction_size=13),
        Sample("empty", lambda: (mk(0, 5),)),
    ]
    if dtype == torch.float32:
        cases.append(Sample("error-rank", lambda: (mk(5),)))
    if dtype.is_floating_point:
        cases.append(Sample("grad", lambda: (mk(13, 17).requires_grad_(),), grad=True))
    return cases


SPECS = [
    OpSpec(name="trace", family="blas", impls={"trace": trace}, call=torch.trace, samples=_samples, dtypes=NUMERIC,
           tolerance="reduction"),
]
