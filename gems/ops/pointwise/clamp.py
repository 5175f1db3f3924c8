"""clamp (Scalar and Tensor bounds; in-place, out=) and clamp_min: NaN from any operand propagates.
clip and clip_ are CompositeImplicitAutograd aliases of clamp: ATen runs clamp's overloads for them."""

import torch
import triton
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.checks import check_exact_out, checked_scalar
from gems.codegen.pointwise import PointwiseOp, compute_dtype
from gems.dtypes import NUMERIC
from gems.ops.pointwise.shared import max_nan, min_nan
from gems.spec import OpSpec, lazy_perf


@triton.jit
def _clamp(x, lo, hi):
    return min_nan(max_nan(x, lo), hi)


clamp_op = PointwiseOp("clamp", _clamp, operands=3, dtypes=NUMERIC)
clamp_min_op = PointwiseOp("clamp_min", max_nan, operands=2, dtypes=NUMERIC)
clamp_max_op = PointwiseOp("clamp_max", min_nan, operands=2, dtypes=NUMERIC)


def _clamp_op(self, min, max, scalars):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if max is None:
        op, bounds = clamp_min_op, (min,)
    elif min is None:
        op, bounds = clamp_max_op, (max,)
    else:
        op, bounds = clamp_op, (min, max)
    if scalars:
        # Scalar bounds are converted to the result dtype with ATen's overflow check (Scalar::to);
        # a floating tensor keeps its dtype whatever the bounds (ATen's clamp meta function).
        common = self.dtype if self.dtype.is_floating_point else op.result_dtypes([self, *bounds])[0]
        # ATen's CPU kernel converts the bounds to the tensor's dtype, its CUDA kernel to the compute dtype
        # (fp32 for fp16/bf16), each with Scalar::to's overflow check.
        target = common if self.device.type == "cpu" else compute_dtype(common)
        bounds = tuple(checked_scalar(b, target) for b in bounds)
    return op, bounds


def clamp(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, True)
    return op(self, *bounds)


def clamp_(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, True)
    return op(self, *bounds, out=self, inplace=True)


def clamp_out(self, min=None, max=None, *, out):
    op, bounds = _clamp_op(self, min, max, True)
    check_exact_out(out, op, (self, *bounds), "Found dtype {got} but expected {want}")
    return op(self, *bounds, out=out)


def clamp_tensor(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, False)
    return op(self, *bounds)


def clamp_tensor_(self, min=None, max=None):
    op, bounds = _clamp_op(self, min, max, False)
    return op(self, *bounds, out=self, inplace=True)


def clamp_tensor_out(self, min=None, max=None, *, out):
    op, bounds = _clamp_op(self, min, max, False)
    return op(self, *bounds, out=out)


def clamp_min(self, min):
    return clamp(self, min)


def clamp_min_(self, min):
    return clamp_(self, min)


def clamp_min_out(self, min, *, out):
    return clamp_out(self, min, out=out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_extra import specials_pair

    shape = shape_for(quick)
    rows, cols = shape
    make = lambda s=shape, d=dtype: make_tensor(s, d, device)
    empty = lambda d=dtype: torch.empty(0, dtype=d, device=device)
    specials = lambda: specials_pair(dtype, device)[0]
    lo, hi = (-1.5, 2.5) if dtype.is_floating_point else ((20, 80) if dtype == torch.uint8 else (-20, 30))
    other = torch.float64 if dtype != torch.float64 else torch.float32
    # Past the dtype's range for fp16, bf16, fp32, int8, int16, uint8: ATen's Scalar::to refuses it.
    overflow = {torch.float16: 1e6, torch.float64: 1e300}.get(dtype, 1e39 if dtype.is_floating_point else 100000)
    out = lambda a, mn, mx, o: torch.clamp(a, mn, mx, out=o)
    cases = [
        Sample("contiguous", lambda: (make(), lo, hi)),
        Sample("noncontiguous-transposed", lambda: (make((cols, rows)).t(), lo, hi)),
        Sample("noncontiguous-strided", lambda: (make((rows, cols * 2))[:, ::2], lo, hi)),
        Sample("0d", lambda: (make(()), lo, hi)),
        Sample("empty", lambda: (make((0, cols)), lo, hi)),
        Sample("special-values", lambda: (specials(), lo, hi)),
        Sample("min-only", lambda: (make(), lo)),
        Sample("max-only", lambda: (make(), None, hi)),
        Sample("min-above-max", lambda: (make(), hi, lo)),
        Sample("float-bounds-on-int", lambda: (make(), 0.5, 10.5)),
        Sample("none-error", lambda: (make(), None, None)),
        Sample("bound-overflow", lambda: (make(), overflow, None)),
        Sample("inplace", lambda: (make(), lo, hi), expects="clamp_", call=torch.clamp_),
        Sample("out", lambda: (make(), lo, hi, empty()), expects="clamp.out", call=out),
        Sample("out-wrong-dtype", lambda: (make(), lo, hi), call=lambda a, mn, mx: out(a, mn, mx, empty(other))),
        Sample("tensor-bounds", lambda: (make(), make(), make()), expects="clamp.Tensor"),
        Sample("tensor-bounds-broadcast", lambda: (make(), make((rows, 1)), make((cols,)) + 5), expects="clamp.Tensor"),
        Sample("tensor-min-only", lambda: (make(), make()), expects="clamp.Tensor"),
        Sample("tensor-max-only", lambda: (make(), None, make((cols,))), expects="clamp.Tensor"),
        Sample("tensor-none-error", lambda: (make(), None, None),
               call=lambda a, mn, mx: torch.ops.aten.clamp.Tensor(a, mn, mx)),
        Sample("tensor-bounds-promote", lambda: (make(), make(d=torch.float64), make(d=torch.float64)),
               expects="clamp.Tensor"),
        Sample("tensor-inplace", lambda: (make(), make(), make()), expects="clamp_.Tensor", call=torch.clamp_),
        Sample("tensor-out", lambda: (make(), make(), make(), empty()), expects="clamp.Tensor_out", call=out),
        Sample("tensor-broadcast-error", lambda: (make(), make((3,)), None)),
        Sample("clamp_min", lambda: (make(), lo), expects="clamp_min", call=torch.clamp_min),
        Sample("clamp_min-inplace", lambda: (make(), lo), expects="clamp_min_", call=torch.clamp_min_),
        Sample("clamp_min-out", lambda: (make(), lo, empty()), expects="clamp_min.out",
               call=lambda a, mn, o: torch.clamp_min(a, mn, out=o)),
        # clip and clip_ are CompositeImplicitAutograd aliases of clamp: ATen runs clamp's overloads.
        Sample("clip", lambda: (make(), lo, hi), expects="clamp", call=torch.clip),
        Sample("clip-inplace", lambda: (make(), lo, hi), expects="clamp_", call=torch.clip_),
        Sample("clip-tensor", lambda: (make(), make(), make()), expects="clamp.Tensor", call=torch.clip),
    ]
    if dtype.is_floating_point:
        nan = float("nan")
        cases += [
            Sample("nan-min", lambda: (make(), nan, hi)),
            Sample("nan-max", lambda: (make(), lo, nan)),
            Sample("nan-tensor-bounds", lambda: (lambda s: (s, torch.full_like(s, nan), None))(specials()),
                   expects="clamp.Tensor"),
            Sample("grad", lambda: (make().requires_grad_(), lo, hi), grad=True),
        ]
    else:
        cases.append(Sample("inplace-float-bound-error", lambda: (make(), 0.5, 10.5), call=torch.clamp_))
    return cases


SPECS = [
    OpSpec(
        name="clamp", family="pointwise",
        impls={"clamp": clamp, "clamp.Tensor": clamp_tensor, "clamp_": clamp_, "clamp_.Tensor": clamp_tensor_,
               "clamp.out": clamp_out, "clamp.Tensor_out": clamp_tensor_out,
               "clamp_min": clamp_min, "clamp_min_": clamp_min_, "clamp_min.out": clamp_min_out},
        call=torch.clamp, samples=_samples, dtypes=NUMERIC,
        perf=lazy_perf("gems.testing.samples_extra", "scalars_perf", -0.5, 0.5, shapes="pointwise"),
    ),
]
