"""Samples and perf inputs for the indexing operators (gems/ops/indexing/).

Index tensors are drawn with repeats (random values in range), so every gather reads some slice twice
and every scatter meets duplicate targets. Where duplicates are written without a reduction (scatter,
index_put without accumulate) ATen keeps one of the written values, unspecified which: those samples
carry a ``tie_check`` (:func:`one_of_written`) that accepts any of them. Error variants that put an
index out of range are skipped on CUDA (shared.cuda_asserts): ATen asserts on the device there.

Integer and bool dtypes get a short list (the kernels move their bits as they move floats'); the
layouts, special values, gradients and errors run for the floating dtypes (errors once, under float32).
"""

from __future__ import annotations

import math

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values

ERROR_DTYPE = torch.float32


def index(n, size, device, dtype=torch.int64, low=0):
    """``n`` random indices in [low, size) (with repeats)."""
    if str(device) == "meta":
        return torch.empty(n, dtype=dtype, device="meta")
    return torch.randint(low, max(size, low + 1), (n,), dtype=dtype).to(device)


def empty_out_call(call):
    """``call(*args, out=<empty tensor of the first argument's dtype>)``: the out= form of a call."""

    def with_out(*args):
        return call(*args, out=torch.empty(0, dtype=args[0].dtype, device=args[0].device))

    return with_out


def as_rows(values):
    """A special-values tensor as a 2-d (4, n/4) one."""
    return values.reshape(4, -1) if values.numel() % 4 == 0 else values.reshape(1, -1)


# --------------------------------------------------------------------------- index_select, embedding


def index_select_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device)
    idx = lambda n, size, d=torch.int64: index(n, size, device, d)
    out_call = empty_out_call(torch.index_select)
    cases = [
        Sample("contiguous", lambda: (make(), 0, idx(9, rows))),
        Sample("dim1", lambda: (make(), 1, idx(11, cols))),
        Sample("0d", lambda: (make(()), 0, idx(1, 1))),
        Sample("empty", lambda: (make((0, cols)), 0, idx(0, 1))),
        Sample("empty-index", lambda: (make(), 1, idx(0, cols))),
        Sample("out", lambda: (make(), 0, idx(9, rows)), call=out_call, expects="index_select.out"),
    ]
    if not dtype.is_floating_point:
        return cases
    cases += [
        Sample("dim-negative", lambda: (make((3, 5, 7)), -1, idx(6, 7))),
        Sample("3d-middle", lambda: (make((3, 5, 7)), 1, idx(8, 5))),
        Sample("3d-permuted", lambda: (make((5, 7, 3)).permute(2, 0, 1), 2, idx(9, 7))),
        Sample("noncontiguous-transposed", lambda: (make((cols, rows)).t(), 0, idx(9, rows))),
        Sample("noncontiguous-strided", lambda: (make((rows, 2 * cols))[:, ::2], 1, idx(7, cols))),
        Sample("index-strided", lambda: (make(), 0, idx(18, rows)[::2])),
        Sample("index-int32", lambda: (make(), 1, idx(10, cols, torch.int32))),
        Sample("index-0d", lambda: (make(), 1, idx(1, cols).reshape(()))),
        Sample("wide-rows", lambda: (make((6, 1500)), 0, idx(5, 6))),
        Sample("special-values", lambda: (as_rows(special_values(dtype, device)), 1, idx(6, 4))),
        Sample("out-noncontiguous", lambda: (make(), 0, idx(9, rows)),
               call=lambda x, d, i: torch.index_select(x, d, i, out=torch.empty((cols, 9), dtype=x.dtype,
                                                                                device=x.device).t()),
               expects="index_select.out"),
        Sample("grad", lambda: (make().requires_grad_(), 0, idx(9, rows)), grad=True,
               expects=("index_select", "index_add_")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-index-out-of-range", lambda: (make(), 0, torch.tensor([0, rows], device=device))),
            Sample("error-index-negative", lambda: (make(), 1, torch.tensor([-1, 2], device=device))),
            Sample("error-index-out-of-range-3d", lambda: (make((3, 5, 7)), 2, torch.tensor([7], device=device))),
            Sample("error-index-2d", lambda: (make(), 0, idx(4, rows).reshape(2, 2))),
            Sample("error-index-float", lambda: (make(), 0, idx(4, rows).float())),
            Sample("error-dim", lambda: (make(), 2, idx(4, rows))),
            Sample("error-scalar-two-indices", lambda: (make(()), 0, idx(2, 1))),
            Sample("error-out-dtype", lambda: (make(), 0, idx(4, rows)),
                   call=lambda x, d, i: torch.index_select(x, d, i, out=torch.empty(0, device=x.device,
                                                                                    dtype=torch.float64)),
                   expects="index_select.out"),
            Sample("error-out-overlap", lambda: (make(), 0, idx(4, rows)),
                   call=lambda x, d, i: torch.index_select(x, d, i, out=x), expects="index_select.out"),
        ]
    return cases


def _rows_inputs(op):
    """Perf inputs of ``op`` over [tokens, rows of the table, row length]: tokens random rows of the table."""

    def inputs(shape, dtype, device):
        tokens, n_rows, width = shape
        table = make_tensor((n_rows, width), dtype, device)
        ids = torch.randint(0, n_rows, (tokens,), device=device)
        if op == "index_select":
            return Sample("perf", (table, 0, ids))
        if op == "embedding":
            return Sample("perf", (table, ids), call=torch.embedding)
        if op == "index":
            return Sample("perf", (table, [ids]), call=torch.ops.aten.index.Tensor)
        grad = make_tensor((tokens, width), dtype, device)  # embedding_dense_backward
        return Sample("perf", (grad, ids, n_rows, -1, False))

    return inputs


def rows_perf(op, shapes):
    """Perf of a row gather (index_select, embedding, index.Tensor) or embedding_dense_backward over [tokens,
    rows of the table, row length]; bytes: the rows read (or added), the result written, the indices."""

    def moved(sample, result):
        flat = [t for a in sample.args for t in (a if isinstance(a, list) else [a])]
        ids = next(a for a in flat if isinstance(a, torch.Tensor) and not a.is_floating_point())
        rows = (ids.numel() * result.shape[-1]) * result.element_size()  # the rows gathered or added
        return rows + tensor_bytes(result) + tensor_bytes(ids)

    return PerfSpec(inputs=_rows_inputs(op), shapes=shapes, bytes=moved)


# --------------------------------------------------------------------------- index_add


def index_add_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device)
    idx = lambda n, size, d=torch.int64: index(n, size, device, d)
    alpha = 3 if not dtype.is_floating_point else -1.5
    if dtype == torch.bool:
        alpha = True
    add_ = lambda x, d, i, s, **kw: x.index_add_(d, i, s, **kw)
    cases = [
        Sample("contiguous", lambda: (make(), 0, idx(9, rows), make((9, cols)))),
        Sample("dim1-alpha", lambda: (make(), 1, idx(20, cols), make((rows, 20))), {"alpha": alpha}),
        Sample("0d", lambda: (make(()), 0, idx(1, 1).reshape(()), make(()))),
        Sample("empty", lambda: (make((0, cols)), 0, idx(0, 1), make((0, cols)))),
        Sample("inplace", lambda: (make(), 0, idx(9, rows), make((9, cols))), call=add_, expects="index_add_"),
        Sample("out", lambda: (make(), 1, idx(5, cols), make((rows, 5))), call=empty_out_call(torch.index_add),
               expects="index_add.out"),
    ]
    if not dtype.is_floating_point:
        return cases
    cases += [
        Sample("3d-middle", lambda: (make((3, 5, 7)), 1, idx(9, 5), make((3, 9, 7)))),
        Sample("index-int32", lambda: (make(), 0, idx(9, rows, torch.int32), make((9, cols)))),
        Sample("index-0d", lambda: (make((rows,)), 0, idx(1, rows).reshape(()), make((1,)))),
        Sample("noncontiguous", lambda: (make((cols, rows)).t(), 1, idx(9, cols)[::1], make((9, rows)).t())),
        Sample("all-same-index", lambda: (make(), 0, torch.full((12,), 3, device=device), make((12, cols)))),
        Sample("inplace-noncontiguous", lambda: (make((cols, rows)).t(), 0, idx(9, rows), make((9, cols))),
               {"alpha": alpha}, call=add_, expects="index_add_"),
        Sample("grad", lambda: (make().requires_grad_(), 0, idx(9, rows), make((9, cols)).requires_grad_()),
               grad=True),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-index-out-of-range", lambda: (make(), 0, torch.tensor([0, rows], device=device),
                                                        make((2, cols)))),
            Sample("error-index-negative", lambda: (make(), 0, torch.tensor([-1, 0], device=device),
                                                    make((2, cols)))),
            Sample("error-index-2d", lambda: (make(), 0, idx(4, rows).reshape(2, 2), make((4, cols)))),
            Sample("error-index-float", lambda: (make(), 0, idx(4, rows).float(), make((4, cols)))),
            Sample("error-source-dtype", lambda: (make(), 0, idx(4, rows), make((4, cols)).double())),
            Sample("error-source-length", lambda: (make(), 0, idx(4, rows), make((3, cols)))),
            Sample("error-source-shape", lambda: (make(), 0, idx(4, rows), make((4, cols + 1)))),
        ]
    return cases


def slices_perf(op, shapes):
    """Perf of index_add over [rows of self, row length, slices added]: a (rows, width) self, random rows."""

    def inputs(shape, dtype, device):
        n_rows, width, n = shape
        return Sample("perf", (make_tensor((n_rows, width), dtype, device), 0, torch.randint(0, n_rows, (n,),
                               device=device), make_tensor((n, width), dtype, device)))

    def moved(sample, result):
        self, _, ids, source = sample.args
        return 2 * tensor_bytes(self) + 2 * tensor_bytes(source) + tensor_bytes(ids)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=moved)


# --------------------------------------------------------------------------- set-valued checks


def one_of_written(targets):
    """Sample.tie_check for a write where equal targets each store a value and one of them stays:
    ``targets(args, kwargs) -> (self, flat target positions, values written there)``. The result must hold,
    bit for bit, one of the values written at each target, and self's value everywhere else."""
    from gems.testing.samples_sort import _bits

    def check(args, kwargs, outputs):
        self, where, values = targets(args, kwargs)
        result = outputs[-1]
        if result.shape != self.shape or result.dtype != self.dtype:
            return f"result {tuple(result.shape)} {result.dtype}, expected {tuple(self.shape)} {self.dtype}"
        got, before = _bits(result).reshape(-1), _bits(self).reshape(-1)
        untouched = torch.ones(got.numel(), dtype=torch.bool)
        untouched[where] = False
        if not torch.equal(got[untouched], before[untouched]):
            return f"{int((got[untouched] != before[untouched]).sum())} elements not written to differ from self"
        written = {}
        for place, value in zip(where.tolist(), _bits(values).reshape(-1).tolist()):
            written.setdefault(place, set()).add(value)
        wrong = [p for p, allowed in written.items() if got[p].item() not in allowed]
        return f"{len(wrong)} written elements hold none of the values written there" if wrong else ""

    return check


def _scatter_targets(args, kwargs):
    """(self, targets, values) of scatter(self, dim, index, src or value)."""
    self, dim, index, src = args[:4]
    places = torch.arange(self.numel()).reshape(self.shape).gather(dim, index.long()).reshape(-1)
    if isinstance(src, torch.Tensor):
        values = src[tuple(slice(0, n) for n in index.shape)] if src.dim() else src
    else:
        values = torch.full(index.shape, src, dtype=self.dtype)
    return self, places, values.reshape(-1).expand(places.numel()) if values.numel() == 1 else values


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
    ties = one_of_written(_scatter_targets)

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


# --------------------------------------------------------------------------- embedding and its backward


def embedding_samples(dtype, device, quick):
    n_rows, width = shape_for(quick)
    table = lambda s=(n_rows, width): make_tensor(s, dtype, device)
    idx = lambda *shape, d=torch.int64: index(math.prod(shape), n_rows, device, d).reshape(shape)
    cases = [
        Sample("contiguous", lambda: (table(), idx(9))),
        Sample("indices-2d", lambda: (table(), idx(3, 4))),
        Sample("empty", lambda: (table(), idx(0))),
        Sample("out", lambda: (table(), idx(5)),
               call=lambda w, i: torch.ops.aten.embedding.out(w, i, out=torch.empty(0, dtype=w.dtype, device=w.device)),
               expects="embedding.out"),
    ]
    if not dtype.is_floating_point:
        return cases
    functional = lambda w, i, **kw: torch.nn.functional.embedding(i, w, **kw)
    cases += [
        Sample("indices-0d", lambda: (table(), idx(1).reshape(()))),
        Sample("indices-int32", lambda: (table(), idx(2, 5, d=torch.int32))),
        Sample("noncontiguous", lambda: (table((width, n_rows)).t(), idx(7))),
        Sample("indices-noncontiguous", lambda: (table(), idx(6, 4).t())),
        Sample("special-values", lambda: (special_values(dtype, device).reshape(-1, 4), index(5, 4, device))),
        Sample("grad", lambda: (table().requires_grad_(), idx(4, 5)), call=functional, grad=True,
               expects=("embedding", "embedding_dense_backward")),
        Sample("grad-padding-idx", lambda: (table().requires_grad_(), idx(20)), {"padding_idx": 2}, call=functional,
               grad=True, expects=("embedding", "embedding_dense_backward")),
        Sample("grad-scale-by-freq", lambda: (table().requires_grad_(), idx(20)), {"scale_grad_by_freq": True},
               call=functional, grad=True, expects=("embedding", "embedding_dense_backward")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-index-out-of-range", lambda: (table(), torch.tensor([0, n_rows], device=device))),
            Sample("error-index-negative", lambda: (table(), torch.tensor([[-1]], device=device))),
            Sample("error-weight-1d", lambda: (table((n_rows,)), idx(3))),
            Sample("error-index-float", lambda: (table(), idx(3).float())),
        ]
    return cases


def embedding_backward_samples(dtype, device, quick):
    n_rows, width = shape_for(quick)
    grad = lambda *s: make_tensor(s, dtype, device)
    idx = lambda *shape, size=n_rows, d=torch.int64: index(math.prod(shape), size, device, d).reshape(shape)
    cases = [
        Sample("contiguous", lambda: (grad(30, width), idx(30), n_rows, -1, False), reduction_size=4),
        Sample("indices-2d", lambda: (grad(4, 6, width), idx(4, 6), n_rows, -1, False), reduction_size=4),
        Sample("padding-idx", lambda: (grad(30, width), idx(30), n_rows, 3, False), reduction_size=4),
        Sample("scale-by-freq", lambda: (grad(30, width), idx(30), n_rows, -1, True), reduction_size=4),
        Sample("indices-int32", lambda: (grad(12, width), idx(12, d=torch.int32), n_rows, -1, False)),
        Sample("all-same-index", lambda: (grad(40, width), torch.full((40,), 5, device=device), n_rows, -1, False),
               reduction_size=40),
        Sample("out-of-range-ignored", lambda: (grad(8, width), index(8, n_rows + 3, device, low=-3), n_rows, -1,
                                                False)),
        Sample("wide", lambda: (grad(10, 700), idx(10, size=3), 3, -1, False), reduction_size=10),
        Sample("noncontiguous-grad", lambda: (grad(width, 9).t(), idx(9), n_rows, -1, False)),
        Sample("empty-indices", lambda: (grad(0, width), idx(0), n_rows, -1, False)),
        Sample("no-weights", lambda: (grad(0, width), idx(0), 0, -1, False)),
        Sample("out", lambda: (grad(30, width), idx(30), n_rows, -1, False), reduction_size=4,
               call=lambda g, i, n, p, s: torch.ops.aten.embedding_dense_backward.out(
                   g, i, n, p, s, out=torch.empty(0, dtype=g.dtype, device=g.device)),
               expects="embedding_dense_backward.out"),
    ]
    if dtype == ERROR_DTYPE:
        cases.append(Sample("error-index-float", lambda: (grad(3, width), idx(3).float(), n_rows, -1, False)))
    return cases
