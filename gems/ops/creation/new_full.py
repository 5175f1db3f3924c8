"""new_full (and new_full.out): ``size`` filled with ``fill_value``, in self's dtype and device unless dtype= or
device= say otherwise (full.py's kernel; self's values and layout are not read). The out= form fills out in its
own dtype. new_ones and new_zeros are this with 1 and 0."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import factory_perf
from gems.ops.creation.full import full, full_out
from gems.spec import OpSpec, lazy


def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype, layout=layout,
                device=self.device if device is None else device, pin_memory=pin_memory)


def new_full_out(self, size, fill_value, *, out):
    return full_out(size, fill_value, out=out)


def new_factory_samples(method, overload, value_args=()):
    """The samples of ``self.<method>(size, *value_args)`` and its out= form (gems.testing.samples_copy)."""
    return lazy("gems.testing.samples_copy", "new_factory_samples", method, overload, value_args)


SPECS = [
    OpSpec(
        name="new_full", family="creation", impls={"new_full": new_full, "new_full.out": new_full_out},
        call=torch.Tensor.new_full, samples=new_factory_samples("new_full", "new_full", (2.5,)), dtypes=ALL,
        tolerance="exact", perf=factory_perf(lambda like, shape: like.new_full(shape, 1.5)),
    ),
]
