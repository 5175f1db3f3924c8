"""Sample generators for reductions (``op(x)``, ``op(x, dim, keepdim, dtype=)``) and softmax-like
operators (``op(x, dim)`` with a backward), with the signature ``samples(dtype, device, quick)``.

Variant names follow gems.testing.samples (contiguous, noncontiguous-transposed, noncontiguous-strided,
0d, empty, special-values, out, grad) plus the reduction's own axes: each dim (negative ones too),
keepdim, multiple dims, full reduction, the dtype= argument, long reductions that need more than one
block (split or looped kernels), and error cases whose ATen exception gems must raise too.
``Sample.reduction_size`` is the number of elements combined into each output value.
"""

from __future__ import annotations

import math

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import _with_out, make_tensor, shape_for, strided, transposed

# Odd sizes so that masks run.
QUICK_3D, FULL_3D = (3, 5, 7), (7, 129, 255)
# Longer than one block of the interpreter vendor's "reduction" heuristics (4096), so quick mode runs
# the split (two-pass) sum; the full length is a 4M-element vector.
QUICK_LONG, FULL_LONG = 10007, (1 << 22) + 3
# Rows of 2^17 elements in full mode (a few of them: the row-per-program path with a loop).
FULL_LONG_ROWS = 1 << 17


def _other_float(dtype: torch.dtype) -> torch.dtype:
    """A floating dtype other than ``dtype``."""
    return torch.float64 if dtype == torch.float32 else torch.float32


def _lower_float(dtype: torch.dtype) -> torch.dtype:
    return torch.bfloat16 if dtype == torch.float16 else torch.float16


def _wider_float(dtype: torch.dtype) -> torch.dtype:
    """A floating dtype at least as precise as ``dtype`` (fp16/bf16 -> fp32 -> fp64)."""
    return {torch.float32: torch.float64, torch.float64: torch.float64}.get(dtype, torch.float32)


def _integer_valued(shape, dtype, device):
    """Small integers (|x| <= 4) in ``dtype``: sums of a few hundred are exact in every float dtype's
    accumulator, so a result of another precision (dtype=) is exact too. Its rounding is then the same
    in gems, ATen and the oracle, whatever tolerance the case dtype brings."""
    values = make_tensor(shape, dtype, device)
    return values.round() if dtype.is_floating_point else values


def _on(values: torch.Tensor, device) -> torch.Tensor:
    """``values`` on ``device``; on the meta device (listing cases) only its shape and dtype."""
    if str(device) == "meta":
        return torch.empty(values.shape, dtype=values.dtype, device="meta")
    return values.to(device)


def special_rows(dtype, device):
    """Rows that each reduce to a special result: NaN, +-inf, inf - inf, signed zeros, huge values that
    cancel, denormal-scale values; for integers the extremes (an int64 row wraps, as in ATen)."""
    if dtype == torch.bool:
        return _on(torch.tensor([[True, False], [False, False]]), device)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        rows = [[info.min, info.max, 0], [info.max - 1, 1, info.min], [info.max, 1, 0]]
        return _on(torch.tensor(rows, dtype=dtype), device)
    info = torch.finfo(dtype)
    inf, nan, big = math.inf, math.nan, info.max / 4
    rows = [[nan, 1, 2, 3], [inf, 1, 2, 3], [-inf, 1, 2, 3], [inf, -inf, 0, 0], [-0.0, -0.0, -0.0, -0.0],
            [big, big, -big, 0], [info.tiny, -info.tiny, info.eps, 1.0], [1e3, -1e3, 0.5, -2.5],
            [1.0, nan, 3.0, nan]]
    return _on(torch.tensor(rows, dtype=torch.float64).to(dtype), device)


def _sliced(shape, dtype, device):
    """A (a, b, c) view of an (a, 2b, c) tensor: its first two dims do not merge into one."""
    a, b, c = shape
    return make_tensor((a, 2 * b, c), dtype, device)[:, :b]


def _with_zeros(x: torch.Tensor, fraction: float) -> torch.Tensor:
    if x.device.type == "meta":
        return x
    keep = torch.rand(x.shape) >= fraction
    return x * keep.to(x.device) if x.dtype != torch.bool else x & keep.to(x.device)


def _long_special_values(dtype, device, length):
    """Two rows longer than one block with their special values in a later block: a NaN after a finite
    maximum (and a second NaN), +inf then -inf; for integers the extremes; for bool a lone True."""
    if dtype == torch.bool:
        rows = torch.zeros((2, length), dtype=torch.bool)
        rows[0, length - 3] = True
        return _on(rows, device)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        rows = torch.randint(-3 if info.min else 0, 4, (2, length), dtype=dtype)
        rows[0, length - 2], rows[1, length // 2], rows[1, length - 1] = info.max, info.min, info.max
        return _on(rows, device)
    rows = torch.rand((2, length), dtype=torch.float64) * 8 - 4
    rows[0, 5], rows[0, length - 7], rows[0, length - 2] = 3.5, math.nan, math.nan
    rows[1, length // 2], rows[1, length - 1] = math.inf, -math.inf
    return _on(rows.to(dtype), device)


def reduction_samples(op, full, dim, out=None, full_out=None, result_dtype=None, dtype_arg=False, grad=False,
                      single_dim=False, none_dim=True, values=None, dims=None, keepdim=True, zeros=0.0):
    """Samples for ``op(x)`` and ``op(x, dim, keepdim=, dtype=)`` (sum, mean, prod, amax, argmax...).

    full, dim: the ATen overloads the whole-tensor and the per-dim calls reach (``"sum"``,
    ``"sum.dim_IntList"``; full None: the operator has no whole-tensor form); out: the per-dim ``out=``
    overload; full_out: (overload name, OpOverload) of a whole-tensor ``out=`` overload that ``torch.<op>``
    cannot reach; result_dtype: the result dtype for an input dtype (default: the same); dtype_arg: the
    operator takes ``dtype=``; grad: check the gradient; single_dim: ``dim`` is one int (prod, argmax,
    max.dim); none_dim: ``op(x, None)`` is a whole-tensor call of the per-dim overload; values(shape,
    dtype, device): the input values (default: make_tensor); dims: the overload a list of dims (or None)
    reaches when it is not ``dim``'s (``all.dims``); keepdim: the operator takes ``keepdim=``; zeros: the
    fraction of elements set to zero (all, any, count_nonzero).
    """
    dims = dims or dim
    result_dtype = result_dtype or (lambda d: d)

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        shape3 = QUICK_3D if quick else FULL_3D
        long = QUICK_LONG if quick else FULL_LONG
        long_row = QUICK_LONG if quick else FULL_LONG_ROWS
        make = values and (lambda s: values(s, dtype, device)) or (lambda s: make_tensor(s, dtype, device))
        if zeros:
            make = lambda s, made=make: _with_zeros(made(s), zeros)
        exact = lambda s: _integer_valued(s, dtype, device)
        if values:  # the operator's own values, made exact in any float dtype by rounding
            exact = lambda s: values(s, dtype, device).round() if dtype.is_floating_point else values(s, dtype, device)
        numel, numel3 = rows * cols, math.prod(shape3)
        a, b, c = shape3

        def case(variant, args, size, kwargs=None, expects=dim, **extra):
            return Sample(variant, args, dict(kwargs or {}), expects=expects, reduction_size=size, **extra)

        cases = [
            case("contiguous", lambda: (make(shape), 1), cols),
            case("dim0", lambda: (make(shape), 0), rows),
            case("dim-1", lambda: (make(shape), -1), cols),
            case("dim-2", lambda: (make(shape), -2), rows),
            case("1xN", lambda: (make((1, cols)), 1), cols),
            case("Nx1", lambda: (make((rows, 1)), 0), rows),
            case("size-one-dim", lambda: (make((rows, 1)), 1), 1),
            case("noncontiguous-transposed", lambda: (transposed(shape, dtype, device), 1), cols),
            case("noncontiguous-transposed-dim0", lambda: (transposed(shape, dtype, device), 0), rows),
            case("noncontiguous-strided", lambda: (strided(shape, dtype, device), 1), cols),
            case("noncontiguous-strided-dim0", lambda: (strided(shape, dtype, device), 0), rows),
            case("noncontiguous-expanded", lambda: (make((rows, 1)), 1), cols, call=_Expanded(op, cols)),
            case("noncontiguous-sliced", lambda: (_sliced(shape3, dtype, device), -1), c),
            case("noncontiguous-sliced-dim1", lambda: (_sliced(shape3, dtype, device), 1), b),
            case("3d-dim0", lambda: (make(shape3), 0), a),
            case("3d-dim1", lambda: (make(shape3), 1), b),
            case("3d-dim2", lambda: (make(shape3), 2), c),
            case("3d-dim-3", lambda: (make(shape3), -3), a),
            case("keepdim", lambda: (make(shape3), 1), b, {"keepdim": True}),
            case("long-dim-last", lambda: (make((2, long)), 1), long),
            case("long-dim-middle", lambda: (make((2, long, 3)), 1), long),
            case("long-rows", lambda: (make((5, long_row)), 1), long_row),
            case("long-rows-dim0", lambda: (make((long_row, 5)), 0), long_row),
            case("0d-dim", lambda: (make(()), 0), 1),
            case("0d-dim-negative-keepdim", lambda: (make(()), -1), 1, {"keepdim": True}),
            case("empty", lambda: (make((0, cols)), 0), 1),
            case("empty-kept", lambda: (make((0, cols)), 1), cols),
            case("special-values", lambda: (special_rows(dtype, device), 1), 4),
            case("special-values-dim0", lambda: (special_rows(dtype, device), 0), 9),
            case("special-values-long", lambda: (_long_special_values(dtype, device, long), 1), long),
            case("special-values-long-dim0", lambda: (_long_special_values(dtype, device, long).t().contiguous(), 0),
                 long),
            case("error-dim-out-of-range", lambda: (make(shape), 2), 1),
            case("error-dim-out-of-range-negative", lambda: (make(shape), -3), 1),
        ]
        if single_dim:
            cases.append(case("noncontiguous-permuted", lambda: (make(shape3).permute(2, 0, 1), 2), a))
        else:
            cases += [
                case("noncontiguous-permuted", lambda: (make(shape3).permute(2, 0, 1), (0, 2)), a * c, expects=dims),
                case("multiple-dims", lambda: (make(shape3), (0, 2)), a * c, expects=dims),
                case("multiple-dims-adjacent", lambda: (make(shape3), (1, 2)), b * c, expects=dims),
                case("multiple-dims-negative-keepdim", lambda: (make(shape3), (-1, 0)), a * c, {"keepdim": True},
                     expects=dims),
                case("full-dim-empty-list", lambda: (make(shape), []), numel, expects=dims),
                case("error-dim-repeated", lambda: (make(shape), (1, -1)), 1, expects=dims),
            ]
        if none_dim:
            cases += [
                case("full-dim-none", lambda: (make(shape), None), numel, expects=dims),
                case("full-keepdim", lambda: (make(shape3), None), numel3, {"keepdim": True}, expects=dims),
            ]
        if full:
            cases += [
                case("full", lambda: (make(shape),), numel, expects=full),
                case("full-3d-transposed", lambda: (make(shape3).transpose(0, 2),), numel3, expects=full),
                case("long-full", lambda: (make((long,)),), long, expects=full),
                case("0d", lambda: (make(()),), 1, expects=full),
                case("empty-full", lambda: (make((0, cols)),), 1, expects=full),
                case("special-values-full", lambda: (special_rows(dtype, device),), 36, expects=full),
            ]
        if dtype_arg:
            other, lower, wider = _other_float(dtype), _lower_float(dtype), _wider_float(dtype)
            cases += [
                case("dtype-float", lambda: (exact(shape), 1), cols, {"dtype": other}),
                case("dtype-lower", lambda: (exact(shape), 1), cols, {"dtype": lower}),
                case("dtype-int32", lambda: (make(shape), 1), cols, {"dtype": torch.int32}),
                case("dtype-bool", lambda: (make(shape), 1), cols, {"dtype": torch.bool}),
                case("dtype-wider", lambda: (make(shape), 1), cols, {"dtype": wider}),
            ]
            if full:
                cases.append(case("dtype-full", lambda: (exact(shape),), numel, {"dtype": other}, expects=full))
        if out:
            cases += [
                case("out", lambda: (make(shape), 1), cols, expects=out, call=_with_out),
                case("out-noncontiguous", lambda: (make(shape3), 1), b, expects=out,
                     call=_OutCall(op, result_dtype, strided=True)),
                # A split reduction whose second pass writes through out's stride.
                case("out-noncontiguous-long", lambda: (make((2, long)), 1), long, expects=out,
                     call=_OutCall(op, result_dtype, strided=True)),
            ]
            if dtype_arg:
                # dtype= and out's dtype must agree (RuntimeError in ATen).
                cases.append(case("error-out-dtype-mismatch", lambda: (make(shape), 1), cols,
                                  {"dtype": _other_float(dtype)}, expects=out, call=_OutCall(op, result_dtype)))
        if full_out:
            overload, overload_op = full_out
            cases.append(case("full-out", lambda: (make(shape),), numel, expects=overload,
                              call=_OutCall(overload_op, result_dtype)))
        if grad and dtype.is_floating_point:
            cases.append(case("grad", lambda: (make(shape).requires_grad_(), 1), cols, grad=True))
        if not keepdim:
            cases = [c for c in cases if "keepdim" not in c.kwargs]
        return cases

    return samples


class _Expanded:
    """``op(x.expand(rows, cols), ...)``: a stride-0 input. The expansion happens inside the call because
    the conformance runner copies sample tensors stride for stride, which an overlapping view cannot take."""

    def __init__(self, op, cols):
        self.op, self.cols = op, cols

    def __repr__(self):
        return f"{self.op}(x.expand(-1, {self.cols}), ...)"

    def __call__(self, x, *args, **kwargs):
        return self.op(x.expand(x.shape[0], self.cols), *args, **kwargs)


class _OutCall:
    """``op(x, *args, out=t, **kwargs)`` with a fresh ``t`` of the result dtype for ``x`` (so the float64
    oracle copies get a float64 ``t``); strided: ``t`` is every other column of a wider tensor."""

    def __init__(self, op, result_dtype, strided=False):
        self.op, self.result_dtype, self.strided = op, result_dtype, strided

    def __repr__(self):
        return f"out=({'strided ' if self.strided else ''}{self.op})"

    def __call__(self, x, *args, **kwargs):
        dtype = self.result_dtype(x.dtype)
        if not self.strided:
            return self.op(x, *args, **kwargs, out=torch.empty(0, dtype=dtype, device=x.device))
        shape = list(self.op(torch.empty_like(x, device="meta"), *args, **kwargs).shape)
        out = torch.empty(shape[:-1] + [shape[-1] * 2], dtype=dtype, device=x.device)[..., ::2]
        result = self.op(x, *args, **kwargs, out=out)
        if result.data_ptr() != out.data_ptr():
            raise AssertionError("an out= call must return its out tensor")
        return result


def reduction_perf(shapes: str) -> PerfSpec:
    """A (rows, cols) input reduced over its last dim; bytes = the input read + the output written."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), -1), reduction_size=shape[-1])

    def bytes_moved(sample, result):
        outputs = result if isinstance(result, tuple) else (result,)
        return tensor_bytes(sample.args[0], *outputs)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)


def _dim_perf_inputs(shape, dtype, device):
    """A (rows, cols) input reduced over its last dim, or an (outer, red, inner) input over its middle
    dim; ``dim=`` as a keyword (torch.linalg.vector_norm's second positional argument is ord)."""
    x = make_tensor(shape, dtype, device)
    dim = -1 if len(shape) == 2 else 1
    return Sample("perf", (x,), {"dim": dim}, reduction_size=shape[dim])


def _bytes_moved(sample, result):
    outputs = result if isinstance(result, tuple) else (result,)
    return tensor_bytes(sample.args[0], *outputs)


def dim_perf_inputs():
    """``inputs`` for the reductions' PerfSpec (a factory, for gems.spec.lazy)."""
    return _dim_perf_inputs


def dim_perf_bytes():
    """``bytes``: the input read once plus the results written (a factory, for gems.spec.lazy)."""
    return _bytes_moved


def values_indices_samples(name: str):
    """Samples for torch.max / torch.min (``name``): the whole-tensor form and its ``out=``, the (values,
    indices) per-dim form and its ``out=(values, indices)``."""
    op = getattr(torch, name)

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        shape3, long = (QUICK_3D, QUICK_LONG) if quick else (FULL_3D, FULL_LONG)
        make = lambda s: make_tensor(s, dtype, device)
        cases = reduction_samples(op, full=name, dim=f"{name}.dim", single_dim=True, none_dim=False,
                                  full_out=(f"{name}.unary_out", op))(dtype, device, quick)
        out = f"{name}.dim_{name}"
        return cases + [
            Sample("out", lambda: (make(shape), 1), expects=out, call=_with_out, reduction_size=cols),
            Sample("out-3d-dim1", lambda: (make(shape3), 1), expects=out, call=_with_out, reduction_size=shape3[1]),
            Sample("out-long", lambda: (make((2, long)), 1), expects=out, call=_with_out, reduction_size=long),
        ]

    return samples


def moment_samples(op, overload, out=None):
    """Samples for torch.var / std / var_mean (all reach ``overload``): the reduction samples, and
    corrections (0, fractional, larger than the count), ``unbiased=``, single elements, shifted data."""

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        long = QUICK_LONG if quick else FULL_LONG
        make = lambda s: make_tensor(s, dtype, device)
        cases = reduction_samples(op, full=overload, dim=overload, out=out)(dtype, device, quick)

        def case(variant, args, size, **kwargs):
            return Sample(variant, args, kwargs, expects=overload, reduction_size=size)

        return cases + [
            case("correction-0", lambda: (make(shape), 1), cols, correction=0),
            case("correction-fraction", lambda: (make(shape), 1), cols, correction=0.5),
            case("correction-2-dim0", lambda: (make(shape), 0), rows, correction=2),
            case("correction-above-count", lambda: (make((rows, 3)), 1), 3, correction=5),
            case("correction-full", lambda: (make(shape),), rows * cols, correction=0),
            case("unbiased-false", lambda: (make(shape), 1), cols, unbiased=False),
            case("single-element", lambda: (make((rows, 1)), 1), 1),
            case("correction-long", lambda: (make((2, long)), 1), long, correction=0),
            # Values far from zero with a small spread: the one-pass form must not cancel.
            case("offset-values", lambda: (make(shape) / 64 + 100, 1), cols),
            case("offset-values-long", lambda: (make((2, long)) / 64 + 100, 1), long),
        ]

    return samples
