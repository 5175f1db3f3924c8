"""Samples and perf inputs of the operators indexed element by element: gather, its backward, scatter,
scatter_add, scatter_reduce."""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values
from gems.testing.samples_indexing_common import ERROR_DTYPE, as_rows, empty_out_call, one_of_written, scatter_targets

# --------------------------------------------------------------------------- gather and the scatters


def _elementwise_index(shape, dim, size, device, dtype=torch.int64):
    """An index of ``shape`` whose values address a dim of ``size`` (repeats included)."""
    if str(device) == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    return torch.randint(0, max(size, 1), shape, dtype=dtype).to(device)


def gather_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device)
    at = lambda shape, size, d=torch.int64: _elementwise_index(shape, None, size, device, d)
    cases = [
        Sample("contiguous", lambda: (make(), 1, at((rows, 9), cols))),
        Sample("dim0", lambda: (make(), 0, at((8, cols), rows))),
        Sample("0d", lambda: (make(()), 0, at((), 1))),
        Sample("empty", lambda: (make(), 1, at((rows, 0), cols))),
        Sample("out", lambda: (make(), 1, at((rows, 5), cols)), call=empty_out_call(torch.gather),
               expects="gather.out"),
    ]
    if not dtype.is_floating_point:
        return cases
    cases += [
        Sample("index-smaller", lambda: (make(), 1, at((5, 4), cols))),
        Sample("3d", lambda: (make((3, 5, 7)), 1, at((3, 6, 7), 5))),
        Sample("index-int32", lambda: (make(), 0, at((rows, cols), rows, torch.int32))),
        Sample("noncontiguous", lambda: (make((cols, rows)).t(), 0, at((cols, rows), rows).t())),
        Sample("special-values", lambda: (as_rows(special_values(dtype, device)), 1, at((4, 7), 4))),
        Sample("grad", lambda: (make().requires_grad_(), 1, at((rows, 9), cols)), grad=True,
               expects=("gather", "scatter_add")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-index-out-of-range", lambda: (make(), 1, torch.full((rows, 2), cols, device=device))),
            Sample("error-index-negative", lambda: (make(), 0, torch.full((1, 3), -1, device=device))),
            Sample("error-index-float", lambda: (make(), 1, at((rows, 2), cols).float())),
            Sample("error-index-rank", lambda: (make(), 1, at((rows,), cols))),
            Sample("error-index-larger", lambda: (make(), 1, at((rows + 1, 2), cols))),
            Sample("error-out-dtype", lambda: (make(), 1, at((rows, 2), cols)),
                   call=lambda x, d, i: torch.gather(x, d, i, out=torch.empty(0, dtype=torch.float64, device=x.device)),
                   expects="gather.out"),
        ]
    return cases


def gather_backward_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s: make_tensor(s, dtype, device)
    at = lambda shape, size: _elementwise_index(shape, None, size, device)
    return [
        Sample("contiguous", lambda: (make((rows, 9)), make((rows, cols)), 1, at((rows, 9), cols), False),
               expects="scatter_add"),
        Sample("dim0", lambda: (make((20, cols)), make((rows, cols)), 0, at((20, cols), rows), False),
               expects="scatter_add"),
        Sample("3d", lambda: (make((3, 6, 7)), make((3, 5, 7)), 1, at((3, 6, 7), 5), False), expects="scatter_add"),
    ]


def scatter_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device, low=-2, high=2, int_low=-3, int_high=3)
    at = lambda shape, size, d=torch.int64: _elementwise_index(shape, None, size, device, d)
    value = True if dtype == torch.bool else (2.5 if dtype.is_floating_point else 3)
    ties = one_of_written(scatter_targets)

    def write(variant, args, call=None, expects=None, reduce=None, **kw):
        kwargs = {} if reduce is None else {"reduce": reduce}
        return Sample(variant, args, kwargs, call=call, expects=expects, tie_check=None if reduce else ties, **kw)

    src = lambda: (make(), 1, at((rows, 9), cols), make((rows, 11)))
    val = lambda: (make(), 0, at((6, cols), rows), value)
    out_of = lambda name: lambda x, d, i, s, **kw: torch.scatter(x, d, i, s, **kw, out=torch.empty(0, dtype=x.dtype,
                                                                                                   device=x.device))
    inplace = lambda x, d, i, s, **kw: x.scatter_(d, i, s, **kw)
    cases = [
        write("src", src),
        write("value", val, expects="scatter.value"),
        write("reduce-add", src, expects="scatter.reduce", reduce="add"),
        write("reduce-multiply", src, expects="scatter.reduce", reduce="multiply"),
        write("value-reduce-add", val, expects="scatter.value_reduce", reduce="add"),
        write("value-reduce-multiply", val, expects="scatter.value_reduce", reduce="multiply"),
        write("inplace-src", src, call=inplace, expects="scatter_.src"),
        write("inplace-value", val, call=inplace, expects="scatter_.value"),
        write("inplace-reduce", src, call=inplace, expects="scatter_.reduce", reduce="multiply"),
        write("inplace-value-reduce", val, call=inplace, expects="scatter_.value_reduce", reduce="add"),
        write("out-src", src, call=out_of("src"), expects="scatter.src_out"),
        write("out-value", val, call=out_of("value"), expects="scatter.value_out"),
        write("out-reduce", src, call=out_of("reduce"), expects="scatter.reduce_out", reduce="add"),
        write("out-value-reduce", val, call=out_of("value"), expects="scatter.value_reduce_out", reduce="multiply"),
        write("0d", lambda: (make(()), 0, at((), 1), make(()))),
        write("empty", lambda: (make(), 1, at((rows, 0), cols), make((rows, 3)))),
    ]
    if not dtype.is_floating_point:
        return cases
    cases += [
        write("3d", lambda: (make((3, 5, 7)), 1, at((3, 4, 6), 5), make((3, 4, 7)))),
        write("noncontiguous", lambda: (make((cols, rows)).t(), 0, at((cols, rows), rows).t(), make((rows, cols)))),
        write("index-int32", lambda: (make(), 1, at((rows, 9), cols, torch.int32), make((rows, 9)))),
        write("special-values", lambda: (make((4, 4)), 1, torch.arange(4, device=device).repeat(4, 1),
                                         as_rows(special_values(dtype, device)))),
        Sample("grad", lambda: (make().requires_grad_(), 1, torch.stack([torch.randperm(cols)[:9] for _ in range(rows)])
                                .to(device), make((rows, 9)).requires_grad_()), grad=True,
               expects=("scatter.src", "gather")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            write("error-index-out-of-range", lambda: (make(), 1, torch.full((rows, 2), cols, device=device),
                                                       make((rows, 2)))),
            write("error-index-negative", lambda: (make(), 0, torch.full((1, 3), -1, device=device), 1.0)),
            write("error-reduce", src, reduce="max"),
            write("error-src-dtype", lambda: (make(), 1, at((rows, 2), cols), make((rows, 2)).double())),
            write("error-src-smaller", lambda: (make(), 1, at((rows, 4), cols), make((rows, 2)))),
            write("error-index-float", lambda: (make(), 1, at((rows, 2), cols).float(), make((rows, 2)))),
            write("error-index-rank", lambda: (make(), 1, at((rows,), cols), make((rows,)))),
        ]
    return cases


def scatter_add_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device)
    at = lambda shape, size, d=torch.int64: _elementwise_index(shape, None, size, device, d)
    inplace = lambda x, d, i, s: x.scatter_add_(d, i, s)
    cases = [
        Sample("contiguous", lambda: (make(), 1, at((rows, 30), cols), make((rows, 30)))),
        Sample("dim0", lambda: (make(), 0, at((20, cols), rows), make((20, cols)))),
        Sample("0d", lambda: (make(()), 0, at((), 1), make(()))),
        Sample("empty", lambda: (make(), 1, at((rows, 0), cols), make((rows, 3)))),
        Sample("inplace", lambda: (make(), 1, at((rows, 30), cols), make((rows, 30))), call=inplace,
               expects="scatter_add_"),
        Sample("out", lambda: (make(), 0, at((20, cols), rows), make((20, cols))),
               call=empty_out_call(torch.scatter_add), expects="scatter_add.out"),
    ]
    if not dtype.is_floating_point:
        return cases
    cases += [
        Sample("3d", lambda: (make((3, 5, 7)), 1, at((3, 9, 6), 5), make((3, 9, 7)))),
        Sample("src-larger", lambda: (make(), 1, at((5, 8), cols), make((rows, 20)))),
        Sample("noncontiguous", lambda: (make((cols, rows)).t(), 0, at((cols, rows), rows).t(),
                                         make((cols, rows)).t())),
        Sample("index-int32", lambda: (make(), 1, at((rows, 30), cols, torch.int32), make((rows, 30)))),
        Sample("all-same-index", lambda: (make(), 1, torch.full((rows, 25), 4, device=device), make((rows, 25)))),
        Sample("special-values", lambda: (make((4, 4)), 1, torch.arange(4, device=device).repeat(4, 1),
                                          as_rows(special_values(dtype, device)))),
        Sample("grad", lambda: (make().requires_grad_(), 1, at((rows, 9), cols), make((rows, 9)).requires_grad_()),
               grad=True, expects=("scatter_add", "gather")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-index-out-of-range", lambda: (make(), 1, torch.full((rows, 2), cols, device=device),
                                                        make((rows, 2)))),
            Sample("error-index-negative", lambda: (make(), 0, torch.full((1, 3), -1, device=device), make((1, 3)))),
            Sample("error-src-dtype", lambda: (make(), 1, at((rows, 2), cols), make((rows, 2)).double())),
        ]
    return cases


def scatter_reduce_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device, low=-2, high=2, int_low=-5, int_high=5)
    at = lambda shape, size, d=torch.int64: _elementwise_index(shape, None, size, device, d)
    args = lambda: (make(), 1, at((rows, 20), cols), make((rows, 20)))
    cases = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        if reduce == "mean" and dtype == torch.bool:
            continue
        cases += [
            Sample(reduce, args, {"reduce": reduce}),
            Sample(f"{reduce}-exclude-self", args, {"reduce": reduce, "include_self": False}),
        ]
    inplace = lambda x, d, i, s, reduce, **kw: x.scatter_reduce_(d, i, s, reduce, **kw)
    out = lambda x, d, i, s, reduce, **kw: torch.scatter_reduce(x, d, i, s, reduce, **kw,
                                                                out=torch.empty(0, dtype=x.dtype, device=x.device))
    cases += [
        Sample("inplace", lambda: (*args(), "amax"), call=inplace, expects="scatter_reduce_.two"),
        Sample("out", lambda: (*args(), "prod"), {"include_self": False}, call=out, expects="scatter_reduce.two_out"),
        Sample("0d", lambda: (make(()), 0, at((), 1), make(()), "sum")),
        Sample("empty", lambda: (make(), 1, at((rows, 0), cols), make((rows, 3)), "amin")),
    ]
    if dtype.is_floating_point:
        cases += [
            Sample("3d-mean", lambda: (make((3, 5, 7)), 1, at((3, 9, 6), 5), make((3, 9, 7)), "mean")),
            Sample("noncontiguous-amin", lambda: (make((cols, rows)).t(), 0, at((cols, rows), rows).t(),
                                                  make((rows, cols)), "amin"), {"include_self": False}),
            Sample("grad-sum", lambda: (make().requires_grad_(), 1, at((rows, 9), cols),
                                        make((rows, 9)).requires_grad_()), {"reduce": "sum"}, grad=True,
                   expects=("scatter_reduce.two", "gather")),
        ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-reduce", lambda: (*args(), "median")),
            Sample("error-index-out-of-range", lambda: (make(), 1, torch.full((rows, 2), cols, device=device),
                                                        make((rows, 2)), "sum")),
        ]
    return cases


def elementwise_perf(op, shapes):
    """Perf of gather / scatter / scatter_add / scatter_reduce over [rows, cols]: an index of self's shape
    along the last dim (scatter: a permutation of each row, so that every place is written once)."""

    def inputs(shape, dtype, device):
        rows, cols = shape
        x = make_tensor((rows, cols), dtype, device)
        if op == "gather":
            return Sample("perf", (x, 1, torch.randint(0, cols, (rows, cols), device=device)))
        index = torch.rand(rows, cols, device=device).argsort(dim=1)
        extra = ("sum",) if op == "scatter_reduce" else ()
        return Sample("perf", (x, 1, index, make_tensor((rows, cols), dtype, device), *extra))

    def moved(sample, result):
        return sum(tensor_bytes(a) for a in sample.args) + tensor_bytes(result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=moved)
