"""Sample and perf generators of the copies (gems/ops/copy) and of the creation operators added with them
(scalar_tensor, new_*, eye, linspace, logspace, one_hot, polar in gems/ops/creation).

Each ``*_samples()`` returns a generator with the shared signature ``samples(dtype, device, quick)``; every
sample is lazy. Conversions between dtypes draw values every pair converts the same way in ATen on every device:
floats within [-4, 4) (into integers: truncated; into uint8: negative values wrap through int64), integers within
[-100, 100], and, into a narrower integer, int64 values past its range (they wrap). Floats an integer dtype cannot
hold (NaN, infinities, 1e10) have no defined conversion in ATen and are not drawn for those pairs.

The generators live by family: samples_copy_convert.py (copy_, _to_copy), samples_copy_clone.py
(clone, resolve_neg, the view copies, conj_physical), samples_copy_fill.py (fill_, zero_),
samples_copy_creation.py (new_*, linspace, logspace, one_hot, polar), their shared pieces in
samples_copy_common.py; this module names them for the declarations.
"""

from __future__ import annotations

from gems.testing.samples_copy_clone import (
    clone_perf,
    clone_samples,
    conj_physical_samples,
    out_copy_perf,
    resolve_neg_samples,
    unary_copy_perf,
    view_copy_samples,
)
from gems.testing.samples_copy_common import CHANNELS_LAST
from gems.testing.samples_copy_convert import copy_perf, copy_samples, to_copy_perf, to_copy_samples
from gems.testing.samples_copy_creation import (
    new_factory_samples,
    one_hot_perf,
    one_hot_samples,
    polar_perf,
    polar_samples,
    space_calls,
)
from gems.testing.samples_copy_fill import fill_perf, fill_samples, zero_perf, zero_samples

__all__ = [
    "CHANNELS_LAST",
    "clone_perf",
    "clone_samples",
    "conj_physical_samples",
    "copy_perf",
    "copy_samples",
    "fill_perf",
    "fill_samples",
    "new_factory_samples",
    "one_hot_perf",
    "one_hot_samples",
    "out_copy_perf",
    "polar_perf",
    "polar_samples",
    "resolve_neg_samples",
    "space_calls",
    "to_copy_perf",
    "to_copy_samples",
    "unary_copy_perf",
    "view_copy_samples",
    "zero_perf",
    "zero_samples",
]
