"""_is_all_true: whether every element of a bool tensor is True, as a 0-d bool tensor, by the shared
reduction kernel (gems/ops/reduction/combine.py). An empty tensor gives True."""

from __future__ import annotations

import torch

from gems.ops.reduction.combine import MIN, PRE_NONZERO, Kind, reduce
from gems.spec import OpSpec

_ALL = Kind(MIN, PRE_NONZERO)


def is_all_true(self):
    if self.dtype != torch.bool:
        raise RuntimeError("_is_all_true: expected a bool tensor (self.scalar_type() == at::kBool)")
    (y,) = reduce(self, None, False, _ALL, torch.bool, cast=torch.bool, acc=torch.int32)
    return y


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_reduction import FULL_LONG, QUICK_LONG

    shape = shape_for(quick)
    long = QUICK_LONG if quick else FULL_LONG
    ones = lambda s: torch.ones(s, dtype=dtype, device=device)

    def one_false(s, index):
        x = ones(s)
        x.view(-1)[index] = False
        return (x,)

    return [
        Sample("random", lambda: (make_tensor(shape, dtype, device),)),
        Sample("all-true", lambda: (ones(shape),)),
        Sample("last-false-long", lambda: one_false((long,), -1)),
        Sample("all-true-long", lambda: (ones((long,)),)),
        Sample("noncontiguous-transposed", lambda: (ones(shape[::-1]).t(),)),
        Sample("0d", lambda: (ones(()),)),
        Sample("empty", lambda: (ones((0, 3)),)),
    ]


SPECS = [
    OpSpec(
        name="is_all_true", family="reduction",
        impls={"_is_all_true": is_all_true},
        call=torch._is_all_true,
        samples=_samples,
        dtypes=(torch.bool,),
        tolerance="exact",
    ),
]
