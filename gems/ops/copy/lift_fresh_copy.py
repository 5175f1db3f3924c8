"""lift_fresh_copy (and lift_fresh_copy.out): a contiguous copy of ``self``, what ``torch.tensor(...)`` runs
under functionalization (torch.compile, torch.export)."""

import torch

from gems.dtypes import ALL
from gems.ops.copy.shared import copy_out, copy_perf, copy_samples, copy_view
from gems.spec import OpSpec


def lift_fresh_copy(self):
    return copy_view(self)


def lift_fresh_copy_out(self, *, out):
    return copy_out(out, self)


SPECS = [
    OpSpec(
        name="lift_fresh_copy", family="creation",
        impls={"lift_fresh_copy": lift_fresh_copy, "lift_fresh_copy.out": lift_fresh_copy_out},
        call=torch.ops.aten.lift_fresh_copy,
        samples=copy_samples("view_copy_samples", call=torch.ops.aten.lift_fresh_copy, overload="lift_fresh_copy"),
        dtypes=ALL, tolerance="exact",
        perf=copy_perf("unary_copy_perf", call=torch.ops.aten.lift_fresh_copy),
    ),
]
