"""cummax: ``cummax`` (torch.cummax, Tensor.cummax): the running largest value along a dim and its index.

The kernel is shared with the other cumulative extreme (gems/ops/reduction/scanning.py): one read
and two writes (values, int64 indices) per element, as one running max of integer keys carried along
the row. NaN propagates with the index of the latest NaN, and ties take the latest index, as in ATen.
``cummax.out`` stays ATen's composite.
"""

from __future__ import annotations

import torch

from gems.dtypes import ALL
from gems.ops.reduction.scanning import cumulative_extreme
from gems.spec import OpSpec, PerfSpec, lazy


def cummax(self, dim):
    return cumulative_extreme(self, dim, is_max=True)


SPECS = [
    OpSpec(
        name="cummax", family="reduction",
        impls={"cummax": cummax},
        call=torch.cummax,
        samples=lazy("gems.testing.samples_scan", "scan_samples", "cummax", pair=True),
        dtypes=ALL,
        tolerance="reduction",
        varies_between_runs={"grad": "its backward (ATen's cummaxmin_backward) sums the gradients with scatter_add, "
                                     "whose float atomics add in an order that varies from run to run on a GPU"},
        perf=PerfSpec(inputs=lazy("gems.testing.samples_softmax", "rows_perf_inputs"), shapes="scan",
                      bytes=lazy("gems.testing.samples_softmax", "io_bytes")),
    ),
]
