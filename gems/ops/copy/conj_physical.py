"""conj_physical (conj_physical.out, conj_physical_) of real tensors: the conjugate of a real value is itself, so
the out= form is a copy and the in-place form changes nothing (ATen returns self at once). The functional form
is CompositeImplicitAutograd and returns self for a real input: nothing to serve. Complex tensors are left to
ATen (gems kernels hold no complex dtype)."""

import torch

from gems.dtypes import ALL
from gems.ops.copy.shared import check_dtypes, copy_out, copy_perf, copy_samples
from gems.spec import OpSpec


def conj_physical_out(self, *, out):
    return copy_out(out, self)


def conj_physical_(self):
    check_dtypes(self)
    return self


SPECS = [
    OpSpec(
        name="conj_physical", family="creation",
        impls={"conj_physical.out": conj_physical_out, "conj_physical_": conj_physical_},
        call=torch.conj_physical, samples=copy_samples("conj_physical_samples"), dtypes=ALL, tolerance="exact",
        perf=copy_perf("out_copy_perf", call=lambda x, o: torch.conj_physical(x, out=o)),
        no_launch={"inplace": "the conjugate of a real tensor is itself: ATen's conj_physical_ returns self at once"},
    ),
]
