"""bincount: ``bincount``: how often each value 0 ... max(x) occurs in a 1-d non-negative integer tensor
(at least ``minlength`` bins), or the sum of ``weights`` per value. The minimum and maximum come from the
one-pass aminmax kernel (one host read for the output length, as in ATen); a second kernel adds each
element into its bin with atomics. Weighted sums are float32 for float32 weights, float64 otherwise (as
ATen); their order of addition varies between runs, as in ATen's CUDA kernel."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import INTS
from gems.ops.reduction.combine import MINMAX, reduce_extreme
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

# Elements per program: 4 atomics per thread at 4 warps.
BLOCK = 512


@triton.jit
def _bincount_kernel(x_ptr, w_ptr, out_ptr, n, HAS_W: tl.constexpr, BLOCK: tl.constexpr):
    """out[x[i]] += w[i] (or 1) for the BLOCK elements of this program."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.int64)
    if HAS_W:
        w = tl.load(w_ptr + offs, mask=mask, other=0).to(out_ptr.dtype.element_ty)
    else:
        w = tl.full([BLOCK], 1, out_ptr.dtype.element_ty)
    tl.atomic_add(out_ptr + bins, w, mask=mask)


_launcher = Launcher(_bincount_kernel)


def bincount(self, weights=None, minlength=0):
    if self.dtype not in INTS:
        raise Fallback(f"bincount of {self.dtype}: ATen raises or computes")
    if self.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != self.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is not None and weights.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64,
                                                      *INTS):
        raise Fallback(f"bincount weights of {weights.dtype} are left to ATen")
    n = self.numel()
    low, high = reduce_extreme(self, None, False, MINMAX, "bincount") if n else (None, None)
    if n and low.item() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    bins = max(int(high.item()) + 1 if n else 0, minlength)
    dtype = torch.int64 if weights is None else torch.float32 if weights.dtype == torch.float32 else torch.float64
    out = torch.zeros(bins, dtype=dtype, device=self.device)
    if n:
        w = weights.contiguous() if weights is not None else self
        _launcher((cdiv(n, BLOCK),), self.contiguous(), w, out, n, weights is not None, BLOCK, num_warps=4)
    return out


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    n = 301 if quick else 100003
    values = lambda k, high=20: make_tensor((k,), dtype, device, int_low=0, int_high=high)
    floats = lambda k, d=torch.float32: make_tensor((k,), d, device)
    return [
        Sample("contiguous", lambda: (values(n),), reduction_size=n),
        Sample("many-bins", lambda: (values(n, 120),), reduction_size=n),
        Sample("minlength", lambda: (values(n),), {"minlength": 40}, reduction_size=n),
        Sample("minlength-below-max", lambda: (values(n),), {"minlength": 3}, reduction_size=n),
        Sample("noncontiguous-strided", lambda: (values(2 * n)[::2],), reduction_size=n),
        Sample("weights-float32", lambda: (values(n), floats(n)), reduction_size=n),
        Sample("weights-float64", lambda: (values(n), floats(n, torch.float64)), reduction_size=n),
        Sample("weights-float16", lambda: (values(n), floats(n, torch.float16)), reduction_size=n),
        Sample("weights-noncontiguous", lambda: (values(n), floats(2 * n)[::2]), reduction_size=n),
        Sample("single", lambda: (values(1),)),
        Sample("empty", lambda: (values(0),), {"minlength": 4}),
        Sample("empty-no-minlength", lambda: (values(0),)),
        Sample("error-negative", lambda: (values(n) - 30,)),
        Sample("error-2d", lambda: (make_tensor((3, 4), dtype, device, int_low=0, int_high=5),)),
        Sample("error-weights-length", lambda: (values(n), floats(n - 1))),
        Sample("error-minlength", lambda: (values(n),), {"minlength": -1}),
    ]


SPECS = [
    OpSpec(
        name="bincount", family="reduction",
        impls={"bincount": bincount},
        call=torch.bincount,
        samples=_samples,
        dtypes=INTS,
        tolerance="reduction",
        no_launch={"empty": "no input element: every count is zero (an allocation fill)"},
        varies_between_runs={v: "float atomics add weights in the order threads arrive (as ATen's CUDA kernel)"
                             for v in ("weights-float32", "weights-float64", "weights-float16",
                                       "weights-noncontiguous")},
    ),
]
