"""quantile: torch.quantile / Tensor.quantile. Every ATen overload of quantile (``quantile``,
``quantile.scalar`` and their ``.out`` forms) is CompositeImplicitAutograd: ATen checks the arguments,
sorts the input along ``dim`` (all of it flattened when dim is None) with ``sort``, and picks and
interpolates the order statistics with gather, lerp and friends, NaN rows giving NaN. gems registers no
quantile kernel (one under the backend key would never be reached, and one above it would cut autograd
off); it serves the sort, gems/ops/sorting/sort.py, and this declaration proves that every quantile call
runs that sort through gems (``composite_of``), with the results checked against the float64 oracle.
"""

from __future__ import annotations

import torch

from gems.spec import OpSpec, PerfSpec

# The overload quantile's decomposition calls (torch 2.11 on CUDA and 2.13 on CPU: aten::sort.default).
SORT = "sort"
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")

# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, special_values

    mk = lambda *shape: make_tensor(shape, dtype, device)  # noqa: E731
    qs = lambda *q: torch.tensor(q, dtype=dtype, device=device)  # noqa: E731
    def with_nan(*shape):
        x = mk(*shape)
        x[1, 2] = float("nan")
        return x

    long = 2500 if quick else 300007
    cases = [
        Sample("scalar-q", lambda: (mk(13, 17), 0.3)),
        Sample("tensor-q-dim", lambda: (mk(13, 17), qs(0.0, 0.25, 0.5, 0.9, 1.0)), {"dim": 1}),
        Sample("keepdim", lambda: (mk(13, 17), qs(0.1, 0.7)), {"dim": 0, "keepdim": True}),
        Sample("dim-negative-keepdim", lambda: (mk(3, 5, 7), 0.6), {"dim": -1, "keepdim": True}),
        Sample("middle-dim", lambda: (mk(3, 5, 7), qs(0.2, 0.8)), {"dim": 1}),
        *[Sample(f"interpolation-{mode}", lambda: (mk(9, 11), qs(0.0, 0.33, 0.5, 0.77, 1.0)),
                 {"dim": 1, "interpolation": mode}) for mode in INTERPOLATIONS],
        *[Sample(f"flat-{mode}", lambda: (mk(7, 6), qs(0.05, 0.5, 0.95)), {"interpolation": mode})
          for mode in INTERPOLATIONS],
        Sample("q-0d-tensor", lambda: (mk(13, 17), qs(0.4)[0]), {"dim": 0}),
        Sample("long", lambda: (mk(long), qs(0.01, 0.5, 0.99))),
        Sample("noncontiguous-transposed", lambda: (mk(17, 13).t(), qs(0.25, 0.75)), {"dim": 1}),
        Sample("noncontiguous-strided", lambda: (mk(9, 22)[:, ::2], 0.5), {"dim": 1}),
        Sample("0d", lambda: (make_tensor((), dtype, device), 0.3)),
        Sample("single", lambda: (mk(1, 5), qs(0.5, 1.0)), {"dim": 0}),
        Sample("nan-row", lambda: (with_nan(4, 9), qs(0.0, 0.5, 1.0)), {"dim": 1}),
        Sample("nan-flat", lambda: (with_nan(4, 9), 0.5)),
        Sample("special", lambda: (special_values(dtype, device).reshape(4, -1), qs(0.0, 0.3, 1.0)), {"dim": 1}),
        Sample("out", lambda: (mk(6, 7), qs(0.2, 0.6)),
               call=lambda x, q: torch.quantile(x, q, dim=1, out=x.new_empty(0))),
        Sample("error-half", lambda: (mk(4, 5).half(), 0.5)),  # ATen computes float and double only
        Sample("error-q-dtype", lambda: (mk(4, 5), qs(0.5).to(torch.float64 if dtype == torch.float32 else
                                                               torch.float32))),
        Sample("error-q-range", lambda: (mk(4, 5), 1.5)),
        Sample("error-q-2d", lambda: (mk(4, 5), qs(0.5).reshape(1, 1))),
        Sample("error-interpolation", lambda: (mk(4, 5), 0.5), {"interpolation": "cubic"}),
        Sample("error-dim", lambda: (mk(4, 5), 0.5), {"dim": 2}),
        Sample("error-empty", lambda: (mk(0, 5), 0.5)),
    ]
    for case in cases:
        case.expects = SORT
    return cases


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    q = torch.tensor([0.01, 0.25, 0.5, 0.75, 0.99], dtype=dtype, device=device)
    return Sample("perf", (make_tensor(shape, dtype, device), q), {"dim": -1}, expects=SORT)


def _perf_bytes(sample, result):
    x = sample.args[0]
    return 2 * x.numel() * x.element_size() + result.numel() * result.element_size()


SPECS = [
    OpSpec(
        name="quantile", family="sort",
        impls={},
        composite_of=(SORT,),
        call=torch.quantile,
        samples=_samples,
        dtypes=(torch.float32, torch.float64),
        perf=PerfSpec(inputs=_perf_inputs, shapes="quantile", bytes=_perf_bytes),
    ),
]
