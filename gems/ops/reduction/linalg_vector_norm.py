"""linalg_vector_norm: ``linalg_vector_norm`` and its ``out=`` form, (sum |x|**ord)**(1/ord) over some
dims, by the shared reduction kernel (gems/ops/reduction/combine.py) in one pass:

    ord 0: the count of nonzeros;  1: sum |x|;  2: sqrt(sum x*x);  inf / -inf: max / min |x|;
    any other ord: pow(sum pow(|x|, ord), 1 / ord)

With ``dtype=`` the input is converted first (a narrowing dtype is refused, as in ATen). ord < 0 and
inf have no identity: over an empty dim they raise."""

from __future__ import annotations

import math

import torch

from gems.dtypes import FLOATS
from gems.ops.reduction.combine import (
    MAX,
    MIN,
    POST_ROOT,
    POST_SQRT,
    PRE_ABS,
    PRE_NONZERO,
    PRE_POW,
    PRE_SQUARE,
    SUM,
    Kind,
    reduce,
)
from gems.ops.reduction.planning import TL_DTYPES, reduced_dims, reduction_perf
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

_KINDS = {0: Kind(SUM, PRE_NONZERO), 1: Kind(SUM, PRE_ABS), 2: Kind(SUM, PRE_SQUARE, POST_SQRT),
          math.inf: Kind(MAX, PRE_ABS), -math.inf: Kind(MIN, PRE_ABS)}


def _check(x, ord, dim, dtype, out):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {x.dtype}")
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got {dtype}")
        if torch.promote_types(x.dtype, dtype) != dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({x.dtype}) should be convertible without "
                               f"narrowing to the specified dtype ({dtype})")
    result = dtype or x.dtype
    if out is not None and out.dtype != result:
        raise RuntimeError(f"Expected out tensor to have dtype {result}, but got {out.dtype} instead")
    if x.numel() == 0 and (ord < 0 or ord == math.inf):
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                               f"operation does not have an identity")
        for d in reduced_dims(x, dim):
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on the dimension {d} because "
                                   f"this dimension is empty and the operation does not have an identity")
    if x.dtype not in TL_DTYPES or result not in TL_DTYPES:
        raise Fallback(f"linalg_vector_norm of {x.dtype} to {result} is not handled by gems")
    return result


def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    ord = float(ord)
    if math.isnan(ord):
        raise Fallback("a NaN ord is left to ATen")
    result = _check(self, ord, dim, dtype, out)
    kind = _KINDS.get(ord, Kind(SUM, PRE_POW, POST_ROOT))
    (y,) = reduce(self, dim, keepdim, kind, result, p=ord, outs=None if out is None else [out])
    return y


def linalg_vector_norm_out(self, ord=2, dim=None, keepdim=False, *, dtype=None, out):
    return linalg_vector_norm(self, ord, dim, keepdim, dtype=dtype, out=out)


def vector_norm(x, dim=None, keepdim=False, *, ord=2, **kwargs):
    """torch.linalg.vector_norm with the reduction samples' positional dim (its second argument is ord)."""
    return torch.linalg.vector_norm(x, ord, dim, keepdim, **kwargs)


_ORDS = {"0": 0, "1": 1, "2": 2, "inf": math.inf, "neg-inf": -math.inf, "3": 3, "0.5": 0.5, "neg-1": -1,
         "neg-2.5": -2.5}


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_reduction import FULL_LONG, QUICK_LONG, reduction_samples, special_rows

    name = "linalg_vector_norm"
    cases = reduction_samples(vector_norm, full=name, dim=name, out=f"{name}.out", dtype_arg=True)(dtype, device,
                                                                                                   quick)
    rows, cols = shape = shape_for(quick)
    long = QUICK_LONG if quick else FULL_LONG
    make = lambda s: make_tensor(s, dtype, device)
    for label, o in _ORDS.items():
        def case(variant, args, size, o=o, label=label, **kwargs):
            return Sample(f"ord-{label}-{variant}", args, {"ord": o, **kwargs}, expects=name, reduction_size=size)

        cases += [
            case("dim1", lambda: (make(shape), 1), cols),
            case("dim0", lambda: (make(shape), 0), rows),
            case("full", lambda: (make(shape),), rows * cols),
            case("long", lambda: (make((2, long)), 1), long),
            case("special-values", lambda: (special_rows(dtype, device), 1), 4),
            case("empty", lambda: (make((0, cols)),), 1),
            case("empty-dim", lambda: (make((0, cols)), 0), 1),
        ]
    inf = {"ord": math.inf}  # no identity: an empty reduced dim is an error, an empty kept one is not
    cases += [Sample("ord-inf-empty-rows-dim1", lambda: (make((0, cols)), 1), inf, expects=name, reduction_size=cols),
              Sample("error-ord-inf-empty-dims", lambda: (make((cols, 0)), (0, 1)), inf, expects=name),
              Sample("error-integer", lambda: (make_tensor((rows, cols), torch.int64, device),), expects=name)]
    return cases


SPECS = [
    OpSpec(
        name="linalg_vector_norm", family="reduction",
        impls={"linalg_vector_norm": linalg_vector_norm, "linalg_vector_norm.out": linalg_vector_norm_out},
        call=vector_norm,
        samples=_samples,
        dtypes=FLOATS,
        tolerance="reduction",
        perf=reduction_perf(),
    ),
]
