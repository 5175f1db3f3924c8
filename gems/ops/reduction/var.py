"""var: ``var.correction`` and ``var.correction_out``: the variance over some dims with ATen's
divisor max(n - correction, 0), in one pass (gems/ops/reduction/moments.py). ``torch.var(x)``,
``torch.var(x, dim, unbiased)`` reach var.correction through ATen's composite overloads."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.reduction.moments import moments
from gems.ops.reduction.planning import reduction_perf
from gems.spec import OpSpec, lazy


def var_correction(self, dim=None, *, correction=None, keepdim=False):
    return moments(self, dim, correction, keepdim, std=False)[0]


def var_correction_out(self, dim=None, *, correction=None, keepdim=False, out):
    return moments(self, dim, correction, keepdim, std=False, out=out)[0]


SPECS = [
    OpSpec(
        name="var", family="reduction",
        impls={"var.correction": var_correction, "var.correction_out": var_correction_out},
        call=torch.var,
        samples=lazy("gems.testing.samples_reduction", "moment_samples", torch.var, "var.correction",
                     out="var.correction_out"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=reduction_perf(),
    ),
]
