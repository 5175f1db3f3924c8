"""zero (zero_, zero, zero.out): fill (fill.py) with 0. The functional form zeroes a new tensor in self's layout;
zero.out wants out of self's dtype and resizes it to self's shape."""

import torch

from gems.dtypes import ALL
from gems.ops.copy.fill import fill_scalar, fill_scalar_out, fill_value
from gems.ops.copy.shared import copy_perf, copy_samples
from gems.spec import OpSpec


def zero_(self):
    return fill_value(self, 0)


def zero(self):
    return fill_scalar(self, 0)


def zero_out(self, *, out):
    return fill_scalar_out(self, 0, out=out)


SPECS = [
    OpSpec(
        name="zero", family="creation", impls={"zero_": zero_, "zero": zero, "zero.out": zero_out},
        call=torch.Tensor.zero_, samples=copy_samples("zero_samples"), dtypes=ALL, tolerance="exact",
        perf=copy_perf("zero_perf", shapes="pointwise"),
    ),
]
