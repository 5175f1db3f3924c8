"""Sample generators for softmax-like operators (``op(x, dim)`` with a backward), with the signature
``samples(dtype, device, quick)``; the reduction samples' shapes and helpers are shared
(gems/testing/samples_reduction.py, which still exports these names).
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
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
