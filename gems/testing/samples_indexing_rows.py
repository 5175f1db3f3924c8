"""Samples and perf inputs of the operators that read or write whole rows or slices through a 1-d index:
index_select, index_add, embedding and embedding_dense_backward."""

from __future__ import annotations

import math

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values
from gems.testing.samples_indexing_common import ERROR_DTYPE, as_rows, empty_out_call, index

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
