"""alias_copy (and alias_copy.out): a contiguous copy of ``self`` (ATen's view-copy ops clone their view with
memory_format=contiguous)."""

import torch

from gems.dtypes import ALL
from gems.ops.copy.shared import copy_out, copy_perf, copy_samples, copy_view
from gems.spec import OpSpec


def alias_copy(self):
    return copy_view(self)


def alias_copy_out(self, *, out):
    return copy_out(out, self)


SPECS = [
    OpSpec(
        name="alias_copy", family="creation", impls={"alias_copy": alias_copy, "alias_copy.out": alias_copy_out},
        call=torch.alias_copy, samples=copy_samples("view_copy_samples", call=torch.alias_copy, overload="alias_copy"),
        dtypes=ALL, tolerance="exact",
        perf=copy_perf("unary_copy_perf", call=torch.alias_copy),
    ),
]
