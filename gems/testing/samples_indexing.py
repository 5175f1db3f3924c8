"""Samples and perf inputs for the indexing operators (gems/ops/indexing/).

Index tensors are drawn with repeats (random values in range), so every gather reads some slice twice
and every scatter meets duplicate targets. Where duplicates are written without a reduction (scatter,
index_put without accumulate) ATen keeps one of the written values, unspecified which: those samples
carry a ``tie_check`` (:func:`one_of_written`) that accepts any of them. Error variants that put an
index out of range are skipped on CUDA (shared.cuda_asserts): ATen asserts on the device there.

Integer and bool dtypes get a short list (the kernels move their bits as they move floats'); the
layouts, special values, gradients and errors run for the floating dtypes (errors once, under float32).

The generators live by family: samples_indexing_rows.py (index_select, index_add, embedding and its
backward), samples_indexing_elementwise.py (gather and the scatters), their shared pieces in
samples_indexing_common.py; this module names them for the declarations.
"""

from __future__ import annotations

from gems.testing.samples_indexing_common import (
    ERROR_DTYPE,
    as_rows,
    empty_out_call,
    index,
    one_of_written,
    scatter_targets,
)
from gems.testing.samples_indexing_elementwise import (
    elementwise_perf,
    gather_backward_samples,
    gather_samples,
    scatter_add_samples,
    scatter_reduce_samples,
    scatter_samples,
)
from gems.testing.samples_indexing_rows import (
    embedding_backward_samples,
    embedding_samples,
    index_add_samples,
    index_select_samples,
    rows_perf,
    slices_perf,
)

__all__ = [
    "ERROR_DTYPE",
    "as_rows",
    "elementwise_perf",
    "embedding_backward_samples",
    "embedding_samples",
    "empty_out_call",
    "gather_backward_samples",
    "gather_samples",
    "index",
    "index_add_samples",
    "index_select_samples",
    "one_of_written",
    "rows_perf",
    "scatter_add_samples",
    "scatter_reduce_samples",
    "scatter_samples",
    "scatter_targets",
    "slices_perf",
]
