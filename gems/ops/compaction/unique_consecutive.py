"""unique_consecutive: ``unique_consecutive`` (torch.unique_consecutive, Tensor.unique_consecutive) over
the flattened input: the first value of each run of equal consecutive elements, and on request each
element's run (``return_inverse``, shaped like the input) and each run's length (``return_counts``);
outputs not asked for are empty int64 tensors, as in ATen. Equality is ``==``: each NaN is a run of its
own, and -0.0 joins a run of 0.0 (the run keeps its first value), as in ATen's CPU and CUDA kernels.

Runs are found and written by the compaction of scan_scatter.py (flag: an element differs from the one
before it). ``dim=`` (runs of equal slices) is left to ATen: a deliberate fallback.
"""

from __future__ import annotations

import math

import torch

from gems.dtypes import ALL
from gems.ops.compaction.scan_scatter import comparable_view, runs
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec

# --------------------------------------------------------------------------- ATen overloads


def unique_runs(x, return_inverse, return_counts, perm=None):
    """(values, inverse, counts) as ATen returns them, from the runs of the flattened ``x`` (perm: see
    scan_scatter.runs); shared with _unique2, which passes the sorted values."""
    if x.dtype not in ALL:
        raise Fallback(f"unique of {x.dtype} is left to ATen")
    flat = comparable_view(x)
    empty = torch.empty(0, dtype=torch.int64, device=x.device)
    if flat.numel() == 0:
        inverse = torch.empty(x.shape, dtype=torch.int64, device=x.device) if return_inverse else empty
        return torch.empty(0, dtype=x.dtype, device=x.device), inverse, empty
    values, inverse, counts = runs(flat, return_inverse, return_counts, perm)
    if x.dtype == torch.bool:
        values = values.view(torch.bool)
    return (values, inverse.view(x.shape) if return_inverse else empty,
            counts if return_counts else torch.empty(0, dtype=torch.int64, device=x.device))


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        raise Fallback("unique_consecutive over a dim (runs of equal slices) is left to ATen")
    return unique_runs(self, return_inverse, return_counts)


# --------------------------------------------------------------------------- samples


def run_values(shape, dtype, device, distinct=4):
    """A tensor of ``shape`` whose flattened elements come in runs of 1 to 4 equal values, drawn from
    ``distinct`` values (so that values also recur after other runs)."""
    n = math.prod(shape)
    if dtype == torch.bool:
        pool = torch.tensor([False, True])
    else:
        pool = torch.arange(-(distinct // 2), distinct - distinct // 2).to(dtype)
    lengths = torch.randint(1, 5, (n,))
    picks = torch.randint(0, len(pool), (n,))
    values = torch.repeat_interleave(pool[picks], lengths)[:n]
    return values.reshape(shape).to(device)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import special_values

    runs_of = lambda *shape: run_values(shape, dtype, device)  # noqa: E731
    long = 2500 if quick else 300007  # more than one block of scan_scatter.BLOCK
    both = {"return_inverse": True, "return_counts": True}
    cases = [
        Sample("contiguous", lambda: (runs_of(97),)),
        Sample("inverse", lambda: (runs_of(97),), {"return_inverse": True}),
        Sample("counts", lambda: (runs_of(97),), {"return_counts": True}),
        Sample("inverse-counts", lambda: (runs_of(97),), both),
        Sample("2d", lambda: (runs_of(13, 17),), both),
        Sample("long", lambda: (runs_of(long),), both),
        Sample("long-one-run", lambda: (torch.ones(long, dtype=dtype, device=device),), both),
        Sample("long-all-distinct", lambda: (torch.arange(long, device=device).to(dtype),), both)
        if dtype in (torch.float32, torch.float64, torch.int32, torch.int64) else None,
        Sample("noncontiguous-transposed", lambda: (runs_of(17, 13).t(),), both),
        Sample("noncontiguous-strided", lambda: (runs_of(9, 22)[:, ::2],), both),
        Sample("0d", lambda: (runs_of(),), both),
        Sample("empty", lambda: (runs_of(0, 5),), both),
        Sample("special", lambda: (torch.repeat_interleave(special_values(dtype, device), 2),), both),
        Sample("dim", lambda: (runs_of(6, 4),), {"dim": 0, **both}),
    ]
    return [c for c in cases if c is not None]


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample

    return Sample("perf", (run_values(shape, dtype, "cpu", distinct=64).to(device),),
                  {"return_inverse": True, "return_counts": True})


def _perf_bytes(sample, result):
    x = sample.args[0]
    return 2 * x.numel() * x.element_size() + sum(t.numel() * t.element_size() for t in result)


SPECS = [
    OpSpec(
        name="unique_consecutive", family="compaction",
        impls={"unique_consecutive": unique_consecutive},
        call=torch.unique_consecutive,
        samples=_samples,
        dtypes=ALL,
        tolerance="exact",
        perf=PerfSpec(inputs=_perf_inputs, shapes="compaction", bytes=_perf_bytes),
        deliberate_fallbacks={"dim": "runs of equal slices along a dim are left to ATen"},
    ),
]
