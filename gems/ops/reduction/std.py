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


# Rows holding +-finfo.max / 4: their squares overflow the fp32 accumulator, as in ATen's CUDA kernel (fp32
# Welford), so std is inf; ATen on the CPU accumulates in double and the oracle's std is finite.
_OVERFLOW = "squares of +-finfo.max/4 overflow the fp32 accumulator (inf, as ATen's CUDA kernel); CPU ATen: double"
_KNOWN = {("interpreter", d, v): _OVERFLOW
          for d in ("float32", "bfloat16") for v in ("special-values", "special-values-dim0")}

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
