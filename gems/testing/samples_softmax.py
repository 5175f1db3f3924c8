"""Sample generators for softmax-like operators (``op(x, dim)`` with a backward), with the signature
``samples(dtype, device, quick)``, and the perf inputs that row-wise operators (the softmax family,
scans) share. The reduction samples' shapes and helpers come from gems/testing/samples_reduction.py.

Beyond the shared softmax-like variants, the family's samples add a 1xN and an Nx1 tensor along each of
their dims, a 3-d middle dim longer than one block (the looped "cols" kernel), a row of one element, and
+-inf beside finite values in long rows.
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, strided, transposed
from gems.testing.samples_reduction import FULL_3D, QUICK_3D, _on, _sliced, _wider_float

# Softmax rows longer than the one-pass limit of the interpreter (4096) and nvidia (16384) heuristics.
QUICK_LONG_ROW, FULL_LONG_ROW = 5003, 40003


def softmax_special_rows(dtype, device, length=6):
    """Rows with an all -inf row (NaN, as ATen), -inf entries, +inf (NaN), NaN, large spreads, ties."""
    info = torch.finfo(dtype)
    inf, nan = math.inf, math.nan
    pad = lambda row: (row + [0.0] * length)[:length]
    rows = [[-inf] * length, pad([-inf, 0.0, 1.0, -inf, 2.0]), pad([inf, 1.0, 2.0]), pad([nan, 1.0, 2.0]),
            pad([1e3, -1e3, 0.0, 5.0, 1.0]), pad([info.max / 4, -info.max / 4, 0.0]), [1.0] * length]
    return _on(torch.tensor(rows, dtype=torch.float64).to(dtype), device)


def _long_special_rows(dtype, device, length):
    """Long rows for the looped (online) kernels: the first half -inf, all -inf, a maximum that grows
    from one block to the next, and a +inf in the last block."""
    rows = torch.rand((4, length), dtype=torch.float64) * 8 - 4
    rows[0, : length // 2] = -math.inf
    rows[1] = -math.inf
    rows[2] = torch.linspace(-60, 60, length, dtype=torch.float64)
    rows[3, -1] = math.inf
    return _on(rows.to(dtype), device)


class _HalfToFloat:
    """``_softmax(x, dim, half_to_float=True)``. The float64 oracle copy (CPU, where ATen refuses
    half_to_float) gets the plain softmax instead; its result is compared in the fp32 the op returns."""

    def __init__(self, op, dtype):
        self.op, self.dtype = op, dtype

    def __repr__(self):
        return f"{self.op}(half_to_float=True)"

    def __call__(self, x, dim):
        if x.dtype != self.dtype:
            return torch.softmax(x, dim)
        return self.op(x, dim, True)


def softmax_samples(forward, backward, forward_op, backward_op):
    """Samples for ``call(x, dim)`` softmax-like operators (softmax, log_softmax).

    forward, backward: the ATen overload names (``"_softmax"``, ``"_softmax_backward_data"``);
    forward_op, backward_op: their OpOverloads, for the variants that call them directly
    (``half_to_float``, a backward with inputs of other strides).
    """
    both = (forward, backward)

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        shape3 = QUICK_3D if quick else FULL_3D
        long_row = QUICK_LONG_ROW if quick else FULL_LONG_ROW
        make = lambda s: make_tensor(s, dtype, device)
        grad = lambda t: t.requires_grad_()

        def case(variant, args, size, kwargs=None, expects=forward, **extra):
            return Sample(variant, args, dict(kwargs or {}), expects=expects, reduction_size=size, **extra)

        permuted = lambda: make((2, 3, 4, 5)).permute(3, 1, 0, 2)  # its kept dims merge in no order: copied
        specials = lambda: softmax_special_rows(dtype, device)
        n_special = 6  # softmax_special_rows' row length
        cases = [
            case("contiguous", lambda: (make(shape), -1), cols),
            case("dim0", lambda: (make(shape), 0), rows),
            case("dim1", lambda: (make(shape), 1), cols),
            case("dim-2", lambda: (make(shape), -2), rows),
            case("noncontiguous-transposed", lambda: (transposed(shape, dtype, device), -1), cols),
            case("noncontiguous-transposed-dim0", lambda: (transposed(shape, dtype, device), 0), rows),
            case("noncontiguous-strided", lambda: (strided(shape, dtype, device), -1), cols),
            case("noncontiguous-strided-dim0", lambda: (strided(shape, dtype, device), 0), rows),
            case("noncontiguous-permuted", lambda: (permuted(), 1), 3),
            case("noncontiguous-sliced", lambda: (_sliced(shape3, dtype, device), -1), shape3[2]),
            case("noncontiguous-sliced-dim1", lambda: (_sliced(shape3, dtype, device), 1), shape3[1]),
            case("3d-dim0", lambda: (make(shape3), 0), shape3[0]),
            case("3d-dim1", lambda: (make(shape3), 1), shape3[1]),
            case("3d-dim2", lambda: (make(shape3), 2), shape3[2]),
            case("3d-dim-3", lambda: (make(shape3), -3), shape3[0]),
            case("long-rows", lambda: (make((3, long_row)), -1), long_row),
            case("long-rows-dim0", lambda: (make((long_row, 3)), 0), long_row),
            case("size-one-dim", lambda: (make((rows, 1)), 1), 1),
            case("0d", lambda: (make(()), 0), 1),
            case("0d-dim-negative", lambda: (make(()), -1), 1),
            case("empty", lambda: (make((0, cols)), -1), cols),
            case("empty-reduced-dim", lambda: (make((rows, 0)), 1), 1),
            case("special-values", lambda: (specials(), -1), n_special),
            # Contiguous (length, rows) copies: the softmax dim is strided, so the "cols" kernels see them.
            case("special-values-dim0", lambda: (specials().t().contiguous(), 0), n_special),
            case("special-values-long", lambda: (_long_special_rows(dtype, device, long_row), -1), long_row),
            case("special-values-long-dim0", lambda: (_long_special_rows(dtype, device, long_row).t().contiguous(), 0),
                 long_row),
            case("dtype-arg", lambda: (make(shape), -1), cols, {"dtype": _wider_float(dtype)}),
            # ATen: on CPU half_to_float raises; on CUDA it needs fp16 input and returns fp32.
            case("half-to-float", lambda: (make(shape), -1), cols, call=_HalfToFloat(forward_op, dtype)),
            case("error-dim-out-of-range", lambda: (make(shape), 2), 1),
        ]
        g_shape = lambda: make(shape[::-1]).t()
        y = lambda: torch.softmax(make(shape), -1)
        cases += [
            case("grad", lambda: (grad(make(shape)), -1), cols, expects=both, grad=True),
            case("grad-dim0", lambda: (grad(make(shape)), 0), rows, expects=both, grad=True),
            case("grad-3d-dim1", lambda: (grad(make(shape3)), 1), shape3[1], expects=both, grad=True),
            case("grad-long-rows", lambda: (grad(make((3, long_row))), -1), long_row, expects=both, grad=True),
            case("grad-long-rows-dim0", lambda: (grad(make((long_row, 3))), 0), long_row, expects=both, grad=True),
            case("grad-0d", lambda: (grad(make(())), 0), 1, expects=both, grad=True),
            case("backward-noncontiguous", lambda: (g_shape(), y(), -1, dtype), cols, expects=backward,
                 call=backward_op),
            case("backward-empty", lambda: (make((0, cols)), make((0, cols)), -1, dtype), cols, expects=backward,
                 call=backward_op),
            case("error-backward-shape-mismatch", lambda: (make(shape), make((rows, cols - 1)), -1, dtype), 1,
                 expects=backward, call=backward_op),
        ]
        if dtype == torch.float16:
            # fp32 gradients of an fp16 input (autocast training): CUDA computes, CPU raises.
            f32 = lambda s: make_tensor(s, torch.float32, device)
            cases.append(case("backward-half-to-float", lambda: (f32(shape), torch.softmax(f32(shape), -1), -1, dtype),
                              cols, expects=backward, call=backward_op))
        return cases

    return samples


def row_extras(forward, backward, quick):
    """(variant, args builder, reduction size, expects, grad) of the 1xN / Nx1 / middle-dim cases for
    ``call(x, dim)`` operators; builders take (dtype, device)."""
    _, cols = shape_for(quick)
    long_row = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    both = (forward, backward)
    return [
        ("1xN", lambda d, dev: (make_tensor((1, cols), d, dev), -1), cols, forward, False),
        ("1xN-dim0", lambda d, dev: (make_tensor((1, cols), d, dev), 0), 1, forward, False),
        ("Nx1", lambda d, dev: (make_tensor((cols, 1), d, dev), 0), cols, forward, False),
        ("Nx1-dim1", lambda d, dev: (make_tensor((cols, 1), d, dev), 1), 1, forward, False),
        ("long-middle-dim", lambda d, dev: (make_tensor((2, long_row, 3), d, dev), 1), long_row, forward, False),
        ("long-middle-dim-transposed",
         lambda d, dev: (make_tensor((2, 3, long_row), d, dev).transpose(1, 2), 1), long_row, forward, False),
        ("grad-long-middle-dim",
         lambda d, dev: (make_tensor((2, long_row, 3), d, dev).requires_grad_(), 1), long_row, both, True),
        ("grad-1xN", lambda d, dev: (make_tensor((1, cols), d, dev).requires_grad_(), -1), cols, both, True),
    ]


def softmax_family_samples(forward, backward, forward_op, backward_op):
    """The shared softmax-like samples and the extras above, for ``call(x, dim)``."""
    shared = softmax_samples(forward, backward, forward_op, backward_op)

    def samples(dtype, device, quick):
        cases = shared(dtype, device, quick)
        if forward == "_log_softmax":
            # ATen's log_softmax backward does not compare the shapes of grad and output (it reads past the
            # smaller one), so there is no ATen behaviour to match; gems raises softmax's RuntimeError.
            cases = [s for s in cases if s.variant != "error-backward-shape-mismatch"]
        for variant, build, size, expects, grad in row_extras(forward, backward, quick):
            cases.append(Sample(variant, lambda build=build: build(dtype, device), expects=expects,
                                reduction_size=size, grad=grad))
        cases.append(Sample("special-values-infinities", lambda: (_infinities(dtype, device), -1),
                            expects=forward, reduction_size=5))
        return cases

    return samples


def _infinities(dtype, device):
    """+inf among finite values (NaN rows), -inf among finite values (zeros), mixed signs of inf."""
    inf = math.inf
    rows = [[inf, 1.0, 2.0, -inf, 0.0], [-inf, -inf, 3.0, 1.0, -inf], [inf, inf, -inf, 0.0, 1.0],
            [-inf, -inf, -inf, -inf, 0.0]]
    if str(device) == "meta":
        return torch.empty((4, 5), dtype=dtype, device="meta")
    return torch.tensor(rows, dtype=torch.float64).to(dtype).to(device)


def safe_softmax_samples():
    """Samples for ``_safe_softmax(x, dim, dtype=None)``: the softmax variants that apply (its backward is
    softmax's) plus all -inf rows (zeros, where softmax gives NaN) and the dtype argument."""

    def samples(dtype, device, quick):
        op = torch.ops.aten._safe_softmax.default
        cases = [s for s in softmax_samples("_safe_softmax", "_softmax_backward_data", op,
                                            torch.ops.aten._softmax_backward_data.default)(dtype, device, quick)
                 if not s.variant.startswith(("backward", "error-backward", "half-to-float", "dtype-arg"))]
        for sample in cases:
            if isinstance(sample.expects, tuple):
                sample.expects = ("_safe_softmax", "_softmax_backward_data")
        rows, cols = shape_for(quick)
        narrower = {torch.float64: torch.float32, torch.float32: torch.float16}.get(dtype, dtype)
        wider = torch.float64 if dtype == torch.float32 else torch.float32
        for variant, build, size, expects, grad in row_extras("_safe_softmax", "_softmax_backward_data", quick):
            cases.append(Sample(variant, lambda build=build: build(dtype, device), expects=expects, reduction_size=size,
                                grad=grad))
        cases += [
            Sample("special-values-infinities", lambda: (_infinities(dtype, device), -1), expects="_safe_softmax",
                   reduction_size=5),
            Sample("dtype-wider", lambda: (make_tensor((rows, cols), dtype, device), -1, wider), reduction_size=cols),
            Sample("dtype-narrower", lambda: (make_tensor((rows, cols), dtype, device), -1, narrower),
                   reduction_size=cols),
        ]
        return cases

    return samples


def rows_perf_inputs():
    """inputs(shape, dtype, device) for gems-perf: ``call(x, -1)`` of a (rows, cols) tensor."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), -1), reduction_size=shape[-1])

    return inputs


def io_bytes():
    """bytes(sample, result): the input read once and every result written once."""

    def bytes_moved(sample, result):
        outputs = result if isinstance(result, tuple) else (result,)
        return tensor_bytes(sample.args[0], *outputs)

    return bytes_moved
