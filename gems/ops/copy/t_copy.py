"""t_copy (and t_copy.out): a contiguous copy of ``self.t()`` (ATen's view-copy ops clone their view with
memory_format=contiguous), which transposes through the tiled copy kernel. ``self.t()`` raises ATen's error for
more than two dimensions."""

import torch

from gems.dtypes import ALL
from gems.ops.copy.shared import copy_out, copy_perf, copy_samples, copy_view
from gems.spec import OpSpec


def t_copy(self):
    return copy_view(self.t())


def t_copy_out(self, *, out):
    return copy_out(out, self.t())


SPECS = [
    OpSpec(
        name="t_copy", family="creation", impls={"t_copy": t_copy, "t_copy.out": t_copy_out}, call=torch.t_copy,
        samples=copy_samples("view_copy_samples", call=torch.t_copy, overload="t_copy", most_dims=2),
        dtypes=ALL, tolerance="exact",
        perf=copy_perf("unary_copy_perf", call=torch.t_copy),
    ),
]
