"""equal: ``equal``: same shape and every element equal (NaN differs from itself), by the shared reduction
kernel (gems/ops/reduction/combine.py): "any element differs" over the flattened tensors, then one host
read for the Python bool."""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.combine import MAX, PRE_NE, Kind, reduce
from gems.ops.reduction.planning import TL_DTYPES
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

_DIFFERS = Kind(MAX, PRE_NE)


def equal(self, other):
    if self.device != other.device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected all tensors to be on the same device, but found {self.device} and "
                           f"{other.device}")
    if self.dtype != other.dtype or self.dtype not in TL_DTYPES:
        raise Fallback("equal of two dtypes (compared after promotion) is left to ATen")
    if self.shape != other.shape:
        return False
    if self.numel() == 0:
        return True
    (differs,) = reduce(self, None, False, _DIFFERS, torch.int32, cast=self.dtype, acc=torch.int32, y=other)
    return not differs.item()


def equal_call(a, b):
    """torch.equal as a 0-d bool tensor, so that conformance compares it."""
    return torch.tensor(torch.equal(a, b))


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_reduction import FULL_LONG, QUICK_LONG

    rows, cols = shape = shape_for(quick)
    long = QUICK_LONG if quick else FULL_LONG
    make = lambda s: make_tensor(s, dtype, device)

    def same(x):
        return x, x.clone()

    def one_changed(x, index):
        y = x.clone()
        y.view(-1)[index] = (~y.view(-1)[index]) if dtype == torch.bool else y.view(-1)[index] + 1
        return x, y

    def nan_pair(s):
        x = make(s)
        x.view(-1)[3] = float("nan")
        return x, x.clone()

    cases = [
        Sample("equal", lambda: same(make(shape))),
        Sample("differs-first", lambda: one_changed(make(shape), 0)),
        Sample("differs-last", lambda: one_changed(make(shape), -1)),
        Sample("long-equal", lambda: same(make((long,)))),
        Sample("long-differs-last", lambda: one_changed(make((long,)), -1)),
        Sample("noncontiguous-transposed", lambda: (make(shape[::-1]).t(), make(shape[::-1]).t())),
        Sample("noncontiguous-mixed", lambda: (lambda x: (x, x.contiguous()))(make(shape[::-1]).t())),
        Sample("shape-differs", lambda: (make(shape), make(shape[::-1]))),
        Sample("0d", lambda: same(make(()))),
        Sample("empty", lambda: same(make((0, cols)))),
    ]
    if dtype.is_floating_point:
        cases.append(Sample("special-values-nan", lambda: nan_pair(shape)))
    return cases


SPECS = [
    OpSpec(
        name="equal", family="reduction",
        impls={"equal": equal},
        call=equal_call,
        samples=_samples,
        dtypes=ALL,
        tolerance="exact",
        no_launch={"shape-differs": "tensors of different shapes are unequal: no element is compared",
                   "empty": "empty tensors of one shape are equal: no element to compare"},
    ),
]
