"""Samples for scans, ``call(x, dim)`` (cumsum; cummax and cummin, which return values and indices),
with the signature ``samples(dtype, device, quick)``.

Variants: every dim of 2-d and 3-d tensors (negative ones too), transposed, strided, sliced and
permuted inputs (the last copied, its dims merging in no order), 1xN and Nx1 along each dim, rows
longer than one block (the looped kernels; for cumsum also few long rows, which take the blocked
scan), 0-d, empty, NaN and +-inf, ties, integer extremes (wrapping), ``dtype=``, ``out=``, gradients
and a dim out of range. ``reduction_size`` is the longest prefix combined into one result.
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.samples import make_tensor, shape_for, strided, transposed
from gems.testing.samples_reduction import FULL_3D, FULL_LONG, QUICK_3D, QUICK_LONG, special_rows


def _ties_and_specials(dtype, device):
    """Rows of repeated values (ties take the latest index), NaN in several places (the latest NaN
    wins), -inf / +inf beside finite values; integers get repeats and their extremes."""
    if str(device) == "meta":
        return torch.empty((6, 7), dtype=dtype, device="meta")
    if dtype == torch.bool:
        rows = torch.tensor([[1, 0, 1, 1, 0, 0, 1]] * 6, dtype=torch.bool)
        rows[1::2] = ~rows[1::2]
        return rows.to(device)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        rows = [[2, 2, 1, 2, 3, 3, 1], [info.max, 0, info.max, info.min, info.min, 5, 5],
                [info.min, info.min, info.max, 0, 0, info.max, 1], [0] * 7, [1, 2, 3, 4, 5, 6, 7],
                [7, 6, 5, 4, 3, 2, 1]]
        return torch.tensor(rows, dtype=dtype).to(device)
    nan, inf = math.nan, math.inf
    rows = [[2, 2, 1, 2, 3, 3, 1], [1, nan, 3, nan, 2, 5, 0], [nan, 1, 2, 3, 4, 5, 6],
            [-inf, -inf, -1, inf, inf, 0, nan], [inf, -inf, 0, -0.0, 0.0, -0.0, 1], [-0.0, 0.0, -0.0, 0, 0, 0, 0]]
    return torch.tensor(rows, dtype=torch.float64).to(dtype).to(device)


class _OutCall:
    """``op(x, dim, out=...)`` into fresh tensors of ATen's result dtypes; strided: every other column
    of wider tensors. For the oracle (float64 inputs) the float results are float64."""

    def __init__(self, op, pair, strided_out, dtype=None):
        self.op, self.pair, self.strided, self.dtype = op, pair, strided_out, dtype

    def __repr__(self):
        return f"{self.op.__name__}(out={'strided' if self.strided else 'fresh'}, dtype={self.dtype})"

    def _fresh(self, x, dtype):
        shape = list(x.shape)
        if not self.strided:
            return torch.empty(0, dtype=dtype, device=x.device)
        return torch.empty(shape[:-1] + [shape[-1] * 2], dtype=dtype, device=x.device)[..., ::2]

    def __call__(self, x, dim, **kwargs):
        result = self.op(torch.empty_like(x, device="meta"), dim, **kwargs)
        if self.pair:
            out = (self._fresh(x, result[0].dtype), self._fresh(x, torch.int64))
            return self.op(x, dim, out=out, **kwargs)
        dtype = self.dtype or result.dtype
        return self.op(x, dim, out=self._fresh(x, dtype), **kwargs)


def scan_samples(expects, out=None, dtype_arg=False, pair=False):
    """Samples for ``call(x, dim)`` scans; expects: the ATen overload torch's call reaches; out: the
    ``out=`` overload; dtype_arg: the op takes ``dtype=``; pair: it returns (values, indices)."""

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        shape3 = QUICK_3D if quick else FULL_3D
        long = QUICK_LONG if quick else FULL_LONG // 64
        make = lambda s: make_tensor(s, dtype, device)

        def case(variant, build, size, kwargs=None, **extra):
            extra.setdefault("expects", expects)
            return Sample(variant, build, dict(kwargs or {}), reduction_size=size, **extra)

        cases = [
            case("contiguous", lambda: (make(shape), 1), cols),
            case("dim0", lambda: (make(shape), 0), rows),
            case("dim-1", lambda: (make(shape), -1), cols),
            case("dim-2", lambda: (make(shape), -2), rows),
            case("noncontiguous-transposed", lambda: (transposed(shape, dtype, device), 1), cols),
            case("noncontiguous-transposed-dim0", lambda: (transposed(shape, dtype, device), 0), rows),
            case("noncontiguous-strided", lambda: (strided(shape, dtype, device), 1), cols),
            case("noncontiguous-strided-dim0", lambda: (strided(shape, dtype, device), 0), rows),
            case("noncontiguous-sliced", lambda: (make((3, 10, 7))[:, :5], 1), 5),
            case("noncontiguous-permuted", lambda: (make((2, 3, 4, 5)).permute(3, 1, 0, 2), 1), 3),
            case("3d-dim0", lambda: (make(shape3), 0), shape3[0]),
            case("3d-dim1", lambda: (make(shape3), 1), shape3[1]),
            case("3d-dim2", lambda: (make(shape3), 2), shape3[2]),
            case("3d-dim-3", lambda: (make(shape3), -3), shape3[0]),
            case("1xN", lambda: (make((1, cols)), 1), cols),
            case("1xN-dim0", lambda: (make((1, cols)), 0), 1),
            case("Nx1", lambda: (make((cols, 1)), 0), cols),
            case("Nx1-dim1", lambda: (make((cols, 1)), 1), 1),
            case("long-rows", lambda: (make((2, long)), 1), long),
            case("long-row-1d", lambda: (make((long,)), 0), long),
            case("long-dim-middle", lambda: (make((1 if pair else 2, long, 3)), 1), long),
            case("0d", lambda: (make(()), 0), 1),
            case("0d-dim-negative", lambda: (make(()), -1), 1),
            case("empty", lambda: (make((0, cols)), 1), 1),
            case("empty-scanned-dim", lambda: (make((rows, 0)), 1), 1),
            case("special-values", lambda: (special_rows(dtype, device), 1), 4),
            case("special-values-dim0", lambda: (special_rows(dtype, device), 0), 8),
            case("ties-and-specials", lambda: (_ties_and_specials(dtype, device), 1), 7),
            case("ties-and-specials-dim0", lambda: (_ties_and_specials(dtype, device), 0), 6),
            case("error-dim-out-of-range", lambda: (make(shape), 2), 1),
        ]
        if not quick:
            cases.append(case("long-rows-many", lambda: (make((4096, 3000)), 1), 3000))
        if dtype.is_floating_point:
            cases.append(case("grad", lambda: (make(shape).requires_grad_(), 1), cols, grad=True))
            cases.append(case("grad-dim0", lambda: (make(shape).requires_grad_(), 0), rows, grad=True))
        if out:
            call = getattr(torch, expects.split(".")[0])
            cases += [
                case("out", lambda: (make(shape), 1), cols, expects=out, call=_OutCall(call, pair, False)),
                case("out-noncontiguous", lambda: (make(shape), 1), cols, expects=out,
                     call=_OutCall(call, pair, True)),
                case("out-noncontiguous-long", lambda: (make((2, long)), 1), long, expects=out,
                     call=_OutCall(call, pair, True)),
            ]
            if dtype_arg:
                other = torch.float64 if dtype != torch.float64 else torch.float32
                cases.append(case("out-other-dtype", lambda: (make(shape), 1), cols, expects=out,
                                  call=_OutCall(call, pair, False, dtype=other)))
                cases.append(case("error-out-dtype-mismatch", lambda: (make(shape), 1), cols,
                                  {"dtype": other}, expects=out, call=_OutCall(call, pair, False, dtype=dtype)))
        if dtype_arg:
            wider = torch.float64 if dtype in (torch.float32, torch.float64) else torch.float32
            cases += [
                case("dtype-wider", lambda: (make(shape), 1), cols, {"dtype": wider}),
                case("dtype-int64", lambda: (make(shape), 1), cols, {"dtype": torch.int64}),
                case("dtype-int32", lambda: (make(shape), 1), cols, {"dtype": torch.int32}),
                case("dtype-float16", lambda: (make(shape).abs() if dtype.is_floating_point else make(shape), 1),
                     cols, {"dtype": torch.float16}),
                case("dtype-bool", lambda: (make(shape), 1), cols, {"dtype": torch.bool}),
            ]
        return cases

    return samples
