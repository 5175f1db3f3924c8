"""unique2: ``_unique2`` (torch.unique and Tensor.unique without ``dim``): the distinct values of the
flattened input in ascending order, and on request each element's index among them (``return_inverse``,
shaped like the input) and how often each occurs (``return_counts``); outputs not asked for are empty
int64 tensors, as in ATen.

gems' stable sort (gems/ops/sorting/sort.py) orders the flattened input and says where each value came
from; the runs of equal sorted values are then compacted as unique_consecutive's are (scan_scatter.py),
each element's run written back at its original position. ``sorted=False`` gives the same sorted result:
ATen's CUDA kernel always sorts, and its CPU kernel does too for these dtypes (torch 2.13).

Equality is ``==``: each NaN is a value of its own (they sort last), as in ATen on CPU and CUDA; -0.0 and
0.0 are one value, shown as whichever the stable sort puts first (the earlier in the input; ATen's CPU
sort keeps the same order).
"""

from __future__ import annotations

import math

import torch

from gems.dtypes import ALL
from gems.ops.compaction.unique_consecutive import run_values, unique_runs
from gems.ops.sorting.sort import sort_values_indices
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec

# --------------------------------------------------------------------------- ATen overloads


def unique2(self, sorted=True, return_inverse=False, return_counts=False):
    if self.dtype not in ALL:
        raise Fallback(f"unique of {self.dtype} is left to ATen")
    flat = self.reshape(-1)
    if flat.numel() == 0:
        return unique_runs(flat, return_inverse, return_counts, shape=self.shape)
    values, perm = sort_values_indices(flat, 0, False, True)
    return unique_runs(values, return_inverse, return_counts, perm if return_inverse else None, self.shape)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, special_values

    def pick(*shape, distinct=24):  # values from a pool of ``distinct``, in random order
        n = math.prod(shape)
        return run_values((n,), dtype, "cpu", distinct)[torch.randperm(n)].reshape(shape).to(device)

    def specials(nans=1):  # the special values three times (of the zeros only -0.0, see SPECS), NaN
        values = special_values(dtype, "cpu")  # ``nans`` times, shuffled
        if dtype.is_floating_point:
            values = values[(values != 0) | torch.signbit(values)]
            values = torch.cat([values[values == values].repeat(3), values.new_full((nans,), float("nan"))])
        else:
            values = values.repeat(3)
        return values[torch.randperm(len(values))].to(device)

    long = 2500 if quick else 300007  # more than one block of scan_scatter.BLOCK
    both = {"return_inverse": True, "return_counts": True}
    cases = [
        Sample("contiguous", lambda: (pick(97),)),
        Sample("inverse", lambda: (pick(97),), {"return_inverse": True}),
        Sample("counts", lambda: (pick(97),), {"return_counts": True}),
        Sample("inverse-counts", lambda: (pick(97),), both),
        Sample("unsorted-flag", lambda: (pick(97),), {"sorted": False, **both}),
        Sample("2d", lambda: (pick(13, 17),), both),
        Sample("3d", lambda: (pick(3, 5, 7),), both),
        Sample("long", lambda: (pick(long, distinct=300),), both),
        Sample("long-distinct", lambda: (make_tensor((long,), dtype, device),), both),
        Sample("noncontiguous-transposed", lambda: (pick(17, 13).t(),), both),
        Sample("noncontiguous-strided", lambda: (pick(9, 22)[:, ::2],), both),
        Sample("0d", lambda: (pick(),), both),
        Sample("empty", lambda: (pick(0, 5),), both),
        Sample("one-value", lambda: (torch.ones((6, 7), dtype=dtype, device=device),), both),
        Sample("special", lambda: (specials(),), both),
        Sample("nans", lambda: (specials(nans=5),), {"return_counts": True}),
    ]
    return cases


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    return Sample("perf", (make_tensor(shape, dtype, device),), {"return_inverse": True, "return_counts": True})


def _perf_bytes(sample, result):
    x = sample.args[0]
    return x.numel() * x.element_size() + sum(t.numel() * t.element_size() for t in result)


# Not sampled: -0.0 and 0.0 both in one input, and the inverse of several NaNs. Which zero shows, and
# which NaN gets which index, is the implementation's: gems' stable sort keeps input order (as CUB's
# radix sort under ATen's CUDA kernel does), ATen's CPU kernel the order its unstable sort happens to give.
SPECS = [
    OpSpec(
        name="unique2", family="compaction",
        impls={"_unique2": unique2},
        call=torch.unique,
        samples=_samples,
        dtypes=ALL,
        tolerance="exact",
        perf=PerfSpec(inputs=_perf_inputs, shapes="compaction", bytes=_perf_bytes),
    ),
]
