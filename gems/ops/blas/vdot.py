"""vdot: the inner product conj(a) . b (``vdot``, ``vdot.out``). For the real dtypes gems computes it is
``dot`` (conjugation is the identity), on dot's kernel; complex inputs fall back to ATen."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.dot import inner_product
from gems.ops.blas.gemm import product_perf, samples
from gems.spec import OpSpec


def vdot(self, other):
    return inner_product("vdot", self, other)


def vdot_out(self, other, *, out):
    return inner_product("vdot", self, other, out)


SPECS = [
    OpSpec(
        name="vdot", family="blas", impls={"vdot": vdot, "vdot.out": vdot_out}, call=torch.vdot,
        samples=samples("dot_samples", torch.vdot, "vdot"), dtypes=FLOATS, tolerance="reduction",
        perf=product_perf("dot"),
        no_launch={"empty": "a sum over no element: zero (an allocation fill)"},
    ),
]
