"""Samples and perf inputs for advanced indexing and masks (gems/ops/indexing/): index.Tensor, index_put,
masked_select, masked_scatter. The conventions are gems.testing.samples_indexing's: indices drawn with
repeats, a set-valued check (one_of_written) where duplicate targets are written without accumulating,
layouts and errors for the floating dtypes.
"""

from __future__ import annotations

import torch

from gems.runtime.registration import aten_only
from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values
from gems.testing.samples_indexing import ERROR_DTYPE, as_rows, empty_out_call, index, one_of_written

# --------------------------------------------------------------------------- index.Tensor, index_put


def _index_cases(make, idx, device, rows, cols):
    """(variant, self, indices) of the advanced indexing cases index and index_put share."""
    mask = lambda s: make_tensor(s, torch.bool, device)
    return [
        ("one-index", lambda: make(), lambda: [idx(9, rows)]),
        ("second-dim", lambda: make(), lambda: [None, idx(7, cols)]),
        ("two-indices", lambda: make(), lambda: [idx(5, rows), idx(5, cols)]),
        ("broadcast-indices", lambda: make(), lambda: [idx(4, rows).reshape(4, 1), idx(3, cols).reshape(1, 3)]),
        ("separated", lambda: make((3, 5, 7)), lambda: [idx(4, 3), None, idx(4, 7)]),
        ("adjacent-middle", lambda: make((3, 5, 7)), lambda: [None, idx(6, 5), idx(6, 7)]),
        ("mask", lambda: make(), lambda: [mask((rows, cols))]),
        ("mask-rows", lambda: make(), lambda: [mask((rows,))]),
        ("mask-and-index", lambda: make((3, 5, 7)), lambda: [mask((3,)), None, idx(1, 7)]),
        ("negative", lambda: make(), lambda: [index(8, rows, device, low=-rows)]),
        ("index-int32", lambda: make(), lambda: [None, idx(6, cols, torch.int32)]),
        ("index-2d", lambda: make(), lambda: [idx(12, rows).reshape(3, 4)]),
        ("index-0d", lambda: make(), lambda: [idx(1, rows).reshape(())]),
        ("empty-index", lambda: make(), lambda: [idx(0, rows)]),
        ("noncontiguous", lambda: make((cols, rows)).t(), lambda: [None, idx(9, rows)]),
    ]


def index_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device)
    idx = lambda n, size, d=torch.int64: index(n, size, device, d)
    call = torch.ops.aten.index.Tensor
    cases = [Sample(v, lambda x=x, i=i: (x(), i())) for v, x, i in _index_cases(make, idx, device, rows, cols)]
    cases.append(Sample("out", lambda: (make(), [idx(9, rows)]),
                        call=lambda x, i: torch.ops.aten.index.Tensor_out(x, i, out=torch.empty(0, dtype=x.dtype,
                                                                                               device=x.device)),
                        expects="index.Tensor_out"))
    # x[mask] over leading dims (masked_rows.py): rows past one column chunk (512) and past one block of the mask
    # (1024), a mask over two dims, rows a step apart, a uint8 mask; rows that are not one run of memory take the
    # general path.
    mask = lambda s, d=torch.bool: make_tensor(s, d, device)
    cases += [
        Sample("mask-rows-wide", lambda: (make((3, 700)), [mask((3,))])),
        Sample("mask-rows-long", lambda: (make((2500, 2)), [mask((2500,))])),
        Sample("mask-leading-2d", lambda: (make((4, 5, 6)), [mask((4, 5))])),
        Sample("mask-rows-strided", lambda: (make((2 * rows, cols))[::2], [mask((rows,))])),
        Sample("mask-rows-transposed", lambda: (make((cols, rows)).t(), [mask((rows,))])),
        Sample("mask-uint8", lambda: (make(), [mask((rows,), torch.uint8)])),
    ]
    if not dtype.is_floating_point:
        return [c for c in cases if c.variant in ("one-index", "two-indices", "mask", "separated", "out", "mask-rows",
                                                  "mask-leading-2d")]
    cases += [
        Sample("special-values", lambda: (as_rows(special_values(dtype, device)), [None, idx(6, 4)])),
        Sample("grad", lambda: (make().requires_grad_(), [idx(9, rows)]), grad=True,
               expects=("index.Tensor", "index_put")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-index-out-of-range", lambda: (make(), [None, torch.tensor([0, cols], device=device)])),
            Sample("error-index-negative", lambda: (make(), [torch.tensor([-rows - 1], device=device)])),
            Sample("error-too-many", lambda: (make(), [idx(2, rows), idx(2, cols), idx(2, 1)])),
            Sample("error-index-float", lambda: (make(), [idx(2, rows).float()])),
            Sample("error-broadcast", lambda: (make(), [idx(2, rows), idx(3, cols)])),
            Sample("error-mask-shape", lambda: (make(), [make_tensor((rows, cols + 1), torch.bool, device)])),
        ]
    return [replace_call(c, call) for c in cases]


def replace_call(sample, call):
    return sample if sample.call is not None else Sample(sample.variant, sample.args, sample.kwargs, call=call,
                                                         expects=sample.expects, grad=sample.grad,
                                                         tie_check=sample.tie_check)


def _put_targets(args, kwargs):
    """(self, targets, values) of index_put(self, indices, values, ...)."""
    self, indices, values = args[:3]
    places = torch.arange(self.numel()).reshape(self.shape)[tuple(slice(None) if i is None else i for i in indices)]
    values = values if isinstance(values, torch.Tensor) else torch.tensor(values, dtype=self.dtype)
    return self, places.reshape(-1), values.expand(places.shape).reshape(-1)


def index_put_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device)
    idx = lambda n, size, d=torch.int64: index(n, size, device, d)
    ties = one_of_written(_put_targets)

    def put(variant, x, indices, values=None, accumulate=False, call=torch.ops.aten.index_put, expects=None, **kw):
        def build():
            self, where = x(), indices()
            if values is not None:
                return self, where, *values()
            with aten_only():  # the indexed shape (a mask's count), by ATen on the CPU
                shape = self.cpu()[tuple(slice(None) if i is None else i.cpu() for i in where)].shape
            return self, where, make(shape), accumulate
        return Sample(variant, build, call=call, expects=expects, tie_check=None if accumulate else ties, **kw)

    cases = []
    for variant, x, indices in _index_cases(make, idx, device, rows, cols):
        cases += [put(variant, x, indices), put(f"{variant}-accumulate", x, indices, accumulate=True)]
    inplace = lambda x, i, v, acc=False: x.index_put_(i, v, acc)
    scalar = lambda: make(())
    cases += [
        put("broadcast-value", make, lambda: [idx(9, rows)], lambda: (make((cols,)), True), accumulate=True),
        put("scalar-value", make, lambda: [None, idx(9, cols)], lambda: (scalar(),)),
        put("inplace", make, lambda: [idx(9, rows)], lambda: (make((9, cols)),), call=inplace, expects="index_put_"),
        put("inplace-accumulate", make, lambda: [idx(20, rows)], lambda: (make((20, cols)), True), accumulate=True,
            call=inplace, expects="index_put_"),
        put("impl", make, lambda: [None, idx(5, cols)], lambda: (make((rows, 5)), True, False), accumulate=True,
            call=torch.ops.aten._index_put_impl_, expects="_index_put_impl_"),
        put("out", make, lambda: [idx(9, rows)], lambda: (make((9, cols)),),
            call=lambda x, i, v: torch.ops.aten.index_put.out(x, i, v, out=torch.empty(0, dtype=x.dtype,
                                                                                      device=x.device)),
            expects="index_put.out"),
    ]
    if not dtype.is_floating_point:
        keep = ("one-index", "one-index-accumulate", "mask", "two-indices-accumulate", "inplace", "out",
                "inplace-accumulate")
        return [c for c in cases if c.variant in keep]
    cases += [
        Sample("grad", lambda: (make().requires_grad_(), [idx(9, rows)], make((9, cols)).requires_grad_(), True),
               call=torch.ops.aten.index_put, grad=True, expects=("index_put", "index.Tensor")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            put("error-index-out-of-range", make, lambda: [torch.tensor([rows], device=device)],
                lambda: (make((1, cols)),)),
            put("error-index-negative", make, lambda: [None, torch.tensor([-cols - 1], device=device)],
                lambda: (make((rows, 1)), True)),
            put("error-values-dtype", make, lambda: [idx(2, rows)], lambda: (make((2, cols)).double(),)),
            put("error-values-shape", make, lambda: [idx(2, rows)], lambda: (make((3, cols)),)),
        ]
    return cases


def put_perf(shapes):
    """Perf of index_put_ with accumulate over [tokens, rows of self, row length] (index's backward)."""

    def inputs(shape, dtype, device):
        tokens, n_rows, width = shape
        ids = torch.randint(0, n_rows, (tokens,), device=device)
        return Sample("perf", (make_tensor((n_rows, width), dtype, device), [ids],
                               make_tensor((tokens, width), dtype, device), True), call=torch.ops.aten.index_put)

    def moved(sample, result):
        self, (ids,), values, _ = sample.args
        return 2 * tensor_bytes(self) + 2 * tensor_bytes(values) + tensor_bytes(ids)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=moved)


# --------------------------------------------------------------------------- masked_select, masked_scatter


def masked_select_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda s=(rows, cols): make_tensor(s, dtype, device)
    mask = lambda s=(rows, cols): make_tensor(s, torch.bool, device)
    cases = [
        Sample("contiguous", lambda: (make(), mask())),
        Sample("broadcast-mask", lambda: (make(), mask((cols,)))),
        Sample("0d", lambda: (make(()), mask(()))),
        Sample("empty", lambda: (make((0, cols)), mask((0, cols)))),
        Sample("out", lambda: (make(), mask()), call=empty_out_call(torch.masked_select),
               expects="masked_select.out"),
    ]
    if not dtype.is_floating_point:
        return cases
    cases += [
        Sample("broadcast-self", lambda: (make((rows, 1)), mask())),
        Sample("noncontiguous", lambda: (make((cols, rows)).t(), mask((cols, rows)).t())),
        Sample("long", lambda: (make((3000,)), mask((3000,)))),
        Sample("all-false", lambda: (make(), torch.zeros((rows, cols), dtype=torch.bool, device=device))),
        Sample("special-values", lambda: (special_values(dtype, device), mask((16,)))),
        Sample("grad", lambda: (make().requires_grad_(), mask()), grad=True,
               expects=("masked_select", "masked_scatter")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-mask-uint8", lambda: (make(), mask().to(torch.uint8))),
            Sample("error-broadcast", lambda: (make(), mask((rows, 3)))),
            Sample("error-out-dtype", lambda: (make(), mask()),
                   call=lambda x, m: torch.masked_select(x, m, out=torch.empty(0, dtype=torch.float64,
                                                                                device=x.device)),
                   expects="masked_select.out"),
        ]
    return cases


def masked_scatter_samples(dtype, device, quick):
    rows, cols = shape_for(quick)
    make = lambda *s: make_tensor(s, dtype, device)
    mask = lambda *s: make_tensor(s, torch.bool, device)
    inplace = lambda x, m, s: x.masked_scatter_(m, s)
    cases = [
        Sample("contiguous", lambda: (make(rows, cols), mask(rows, cols), make(rows * cols))),
        Sample("broadcast-mask", lambda: (make(rows, cols), mask(cols), make(rows, cols))),
        Sample("0d", lambda: (make(), mask(), make(1))),
        Sample("empty", lambda: (make(0, cols), mask(0, cols), make(0))),
        # masked_select's backward scatters sum's gradient: one value expanded (stride 0); and a strided run.
        Sample("source-expanded", lambda: (make(rows, cols), mask(rows, cols), make(1).expand(rows * cols))),
        Sample("source-strided", lambda: (make(rows, cols), mask(rows, cols), make(2 * rows * cols)[::2])),
        Sample("inplace", lambda: (make(rows, cols), mask(rows, cols), make(rows * cols + 5)), call=inplace,
               expects="masked_scatter_"),
        Sample("out", lambda: (make(rows, cols), mask(rows, cols), make(rows * cols)),
               # torch.masked_scatter takes no out=: the overload itself.
               call=empty_out_call(torch.ops.aten.masked_scatter.out), expects="masked_scatter.out"),
    ]
    if not dtype.is_floating_point:
        return cases
    cases += [
        Sample("broadcast-self", lambda: (make(rows, 1), mask(rows, cols), make(rows * cols))),
        Sample("source-2d", lambda: (make(rows, cols), mask(rows, cols), make(rows, cols))),
        Sample("long", lambda: (make(3000), mask(3000), make(3000))),
        Sample("inplace-noncontiguous", lambda: (make(cols, rows).t(), mask(rows, cols), make(rows * cols)),
               call=inplace, expects="masked_scatter_"),
        Sample("inplace-broadcast-mask", lambda: (make(rows, cols), mask(1, cols), make(rows * cols)), call=inplace,
               expects="masked_scatter_"),
        Sample("special-values", lambda: (make(16), mask(16), special_values(dtype, device))),
        Sample("grad", lambda: (make(rows, cols).requires_grad_(), mask(rows, cols),
                                make(rows * cols).requires_grad_()), grad=True,
               expects=("masked_scatter", "masked_select")),
    ]
    if dtype == ERROR_DTYPE:
        cases += [
            Sample("error-source-short", lambda: (make(rows, cols), torch.ones(rows, cols, dtype=torch.bool,
                                                                               device=device), make(3))),
            Sample("error-mask-uint8", lambda: (make(rows, cols), mask(rows, cols).to(torch.uint8), make(rows * cols))),
            Sample("error-source-dtype", lambda: (make(rows, cols), mask(rows, cols), make(rows * cols).double())),
        ]
    return cases


def masked_perf(op, shapes):
    """Perf of masked_select / masked_scatter over [numel]: a mask of about half true elements."""

    def inputs(shape, dtype, device):
        x = make_tensor(shape, dtype, device)
        mask = torch.rand(shape, device=device) < 0.5
        return Sample("perf", (x, mask) if op == "masked_select" else (x, mask, make_tensor(shape, dtype, device)))

    def moved(sample, result):
        return sum(tensor_bytes(a) for a in sample.args) + tensor_bytes(result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=moved)
