"""std: ``std.correction`` and ``std.correction_out``: the standard deviation over some dims with ATen's
divisor max(n - correction, 0), in one pass (gems/ops/reduction/moments.py). ``torch.std(x)``,
``torch.std(x, dim, unbiased)`` reach std.correction through ATen's composite overloads."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.reduction.moments import moments
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def std_correction(self, dim=None, *, correction=None, keepdim=False):
    return moments(self, dim, correction, keepdim, std=True)[0]


def std_correction_out(self, dim=None, *, correction=None, keepdim=False, out):
    return moments(self, dim, correction, keepdim, std=True, out=out)[0]


# Columns holding +-finfo.max / 4 (reduced over dim 0, the "cols" layout): their squares overflow the fp32
# accumulator, so std is inf as in ATen's CUDA kernel (fp32 Welford); ATen on the CPU accumulates in double
# and the oracle's std is finite. Reduced over the last dim, gems rescues such rows (moments.py).
_OVERFLOW = ("squares of +-finfo.max/4 overflow the fp32 accumulator in the cols layout (inf, as ATen's CUDA kernel); "
             "CPU ATen: double")
_KNOWN = {("interpreter", d, "special-values-dim0"): _OVERFLOW for d in ("float32", "bfloat16")}

SPECS = [
    OpSpec(
        name="std", family="reduction",
        impls={"std.correction": std_correction, "std.correction_out": std_correction_out},
        call=torch.std,
        samples=lazy("gems.testing.samples_reduction", "moment_samples", torch.std, "std.correction",
                     out="std.correction_out"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=reduction_perf(),
        known_failures=_KNOWN,
    ),
]
