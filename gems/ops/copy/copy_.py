"""copy_: ``self[...] = src`` converted to self's dtype, src broadcast to self's shape, any layouts (shared.py).

As ATen: a copy of a tensor onto itself, or onto a view of exactly its elements in its dtype, changes nothing
and launches nothing; a source that does not broadcast, a destination holding an element twice (expanded) and
a source overlapping the destination in part are refused before any launch. A copy between devices is a
transfer, not compute: gems raises Fallback and the device's own copy (ATen's, or an out-of-tree device's
``_copy_from``) runs it. ``non_blocking`` changes nothing on one device.
Complex tensors are left to ATen (Fallback), as are layouts that merge into more than six dimensions.
"""

import torch

from gems.dtypes import ALL
from gems.ops.copy.shared import check_copy, check_layouts, copy_perf, copy_samples, launch_copy, same_data
from gems.spec import OpSpec


def copy_(self, src, non_blocking=False):
    if self is src:
        return self
    check_copy(self, src)
    if same_data(self, src):
        return self
    check_layouts(self, src)
    return launch_copy(self, src)


SPECS = [
    OpSpec(
        name="copy_", family="creation", impls={"copy_": copy_}, call=torch.Tensor.copy_,
        samples=copy_samples("copy_samples"), dtypes=ALL, tolerance="exact",
        perf=copy_perf("copy_perf"),
        no_launch={"self-copy": "a copy onto itself changes nothing (ATen returns at once)",
                   "same-view": "a view of exactly the destination's elements changes nothing (ATen returns at once)"},
        deliberate_fallbacks={"9d-unmergeable": "dimensions that merge into more than six are left to ATen's "
                                                "TensorIterator (gems tiles two and indexes four per program)",
                              "from-complex64": "gems kernels hold no complex dtype: ATen copies the real part"},
    ),
]
