"""Sample generators for the pointwise, selection and creation families (beside samples.py).

Every generator keeps the shared signature ``samples(dtype, device, quick) -> list[Sample]`` and
the variant vocabulary of :mod:`gems.testing.samples`, adding the cases these operators need:

- error variants (ATen raises; gems must raise the same exception type): shapes that cannot
  broadcast, ``out=`` of a dtype or device ATen refuses, written tensors that overlap an input or
  themselves, in-place results that need a resize or a dtype the tensor cannot hold;
- ``out=`` variants that ATen accepts: a wider dtype, a strided view, a wrong-sized tensor it resizes;
- scalar overloads reached only through ``torch.ops.aten`` (``div.Scalar``), aliases that ATen
  decomposes before the backend (``divide``, ``true_divide``, ``clip``, ``greater``, ``__or__``),
  each with the overload that really runs as ``expects``.

Variant names never depend on the device (cases are listed on the meta device), only the values
and, for integer division by zero, the call (ATen raises on CPU and not on CUDA).
"""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import binary_samples, make_tensor, shape_for, special_values, subnormal_values, unary_samples

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)

# The widest dtype of each kind: an out= tensor of it accepts any result of that kind.
_WIDER = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64,
          torch.int8: torch.int16, torch.int16: torch.int32, torch.int32: torch.int64, torch.uint8: torch.int16,
          torch.bool: torch.float32}


def other_device(device) -> str:
    """A device that is not ``device``, for out= device-mismatch variants (meta beside the CPU)."""
    return "meta" if str(device) in ("cpu", "meta") else "cpu"


def result_dtype(dtype: torch.dtype, result: str) -> torch.dtype:
    """The dtype an operator returns for ``dtype`` inputs: "same", "bool" or "float" (true division)."""
    if result == "bool":
        return torch.bool
    if result == "float" and not dtype.is_floating_point:
        return torch.get_default_dtype()
    return dtype


def nonzero_divisor(t: torch.Tensor, dividend: torch.Tensor | None = None) -> torch.Tensor:
    """``t`` with integer zeros replaced by one (divisors of integer division, which ATen's CPU
    kernels refuse), and -1 too where the dividend is the dtype's minimum (the quotient overflows:
    x86 traps, so ATen's CPU kernel kills the process); floating tensors are returned as they are."""
    if t.dtype.is_floating_point or t.dtype == torch.bool:
        return t
    bad = t == 0
    if dividend is not None and dividend.shape == t.shape and dividend.dtype == t.dtype and t.dtype.is_signed:
        bad = bad | ((dividend == torch.iinfo(t.dtype).min) & (t == -1))
    return torch.where(bad, torch.ones_like(t), t)


# --------------------------------------------------------------------------- binary operators


def binary_op_samples(call, *, out=None, inplace=None, scalar_overload=None, scalar_expects=None, grad=False,
                      domain=None, rhs_domain=None, scalar=2.5, promote_with=torch.int32, result="same",
                      nonzero_rhs=False, zero_division=None, float_scalar=True, extra=None, kwargs=None):
    """:func:`binary_samples` plus the error, out= and scalar-overload variants of a binary operator.

    call: the torch function (``torch.sub``); out: its ``.out`` overload; inplace: (overload, call).
    scalar_overload: (overload, function(x, number)) reached only through ``torch.ops.aten``.
    scalar_expects: the overload that ``call(x, number)`` really runs when it is not the first declared.
    result: "same", "bool" or "float": the result dtype for same-dtype inputs (for out= variants).
    nonzero_rhs: integer divisors are made nonzero; zero_division: (overload, function(x, y)) adds
        the "zero-divisor" variant, which raises on CPU (as ATen does there) and elsewhere checks
        the finite part (CUDA's quotient by zero is undefined, so it is masked out).
    float_scalar: add "scalar-float-on-int" (an integer tensor and a float: type promotion).
    kwargs: keyword arguments passed on every call (rounding_mode, alpha...).
    """
    kwargs = dict(kwargs or {})
    domain = domain or {}
    rhs_domain = rhs_domain or domain
    base = binary_samples(out=out, inplace=inplace, grad=grad, domain=domain, rhs_domain=rhs_domain,
                          extra=kwargs, scalar=scalar, promote_with=promote_with)

    def samples(dtype, device, quick):
        cases = base(dtype, device, quick)
        shape = shape_for(quick)
        rows, cols = shape
        lhs = lambda s, d=dtype: make_tensor(s, d, device, **domain)
        rhs = lambda s, d=dtype: make_tensor(s, d, device, **rhs_domain)
        rdtype = result_dtype(dtype, result)
        square = (cols, cols)

        def fn(*args, **kw):
            return call(*args, **kwargs, **kw)

        cases.append(Sample("broadcast-error", (lhs((3, 4)), rhs((5,))), kwargs))
        if dtype.is_floating_point:
            # Subnormal operands (and results): a device that flushes them to zero shows here.
            tiny = subnormal_values(dtype, device)
            normal = torch.tensor([0.5, -3.0], dtype=dtype, device=device)
            values = torch.cat([tiny, normal])
            cases.append(Sample("subnormal", (values.repeat_interleave(len(values)), values.repeat(len(values))),
                                kwargs))
        if not dtype.is_floating_point and dtype != torch.bool and float_scalar:
            cases.append(Sample("scalar-float-on-int", (lhs(shape), 2.5), kwargs, expects=scalar_expects))
        if scalar_overload is not None:
            overload, scalar_call = scalar_overload
            value = scalar if dtype.is_floating_point else (True if dtype == torch.bool else int(scalar))
            cases.append(Sample("scalar-overload", (lhs(shape), value), kwargs, expects=overload,
                                call=lambda x, s: scalar_call(x, s, **kwargs)))
        if scalar_expects is not None:
            for case in cases:
                if case.variant == "scalar-operand":
                    case.expects = scalar_expects
        if out:
            wider = _WIDER.get(rdtype)
            cases += [
                Sample("out-noncontiguous", (lhs(shape), rhs(shape), _strided_empty(shape, rdtype, device)),
                       expects=out, call=lambda x, y, o: fn(x, y, out=o)),
                Sample("out-resize", (lhs(shape), rhs(shape), torch.empty((3,), dtype=rdtype, device=device)),
                       expects=out, call=lambda x, y, o: fn(x, y, out=o)),
                Sample("out-wrong-device", (lhs(shape), rhs(shape)),
                       call=lambda x, y: fn(x, y, out=torch.empty(0, dtype=rdtype, device=other_device(x.device)))),
                Sample("out-overlap-error", (lhs(square), rhs(square)),
                       call=lambda x, y: fn(x, y, out=x.t())),
                Sample("out-expanded-error", (lhs(shape), rhs(shape)),
                       call=lambda x, y: fn(x, y, out=torch.empty((1, y.shape[1]), dtype=rdtype,
                                                                  device=y.device).expand(y.shape))),
            ]
            if wider is not None:
                cases.append(Sample("out-wider-dtype", (lhs(shape), rhs(shape), torch.empty(0, dtype=wider,
                                                                                           device=device)),
                                    expects=out, call=lambda x, y, o: fn(x, y, out=o)))
            refused = _refused_out_dtype(rdtype)
            if refused is not None:
                cases.append(Sample("out-wrong-dtype", (lhs(shape), rhs(shape)),
                                    call=lambda x, y: fn(x, y, out=torch.empty(0, dtype=refused, device=x.device))))
        if inplace:
            overload, inplace_call = inplace
            cases += [
                Sample("inplace-broadcast-error", (lhs((1, cols)), rhs(shape)), kwargs, call=inplace_call),
                Sample("inplace-self-alias", (nonzero_divisor(lhs(shape)) if nonzero_rhs else lhs(shape),), kwargs,
                       expects=overload, call=lambda x, **kw: inplace_call(x, x, **kw)),
                Sample("inplace-overlap-error", (lhs(square),), kwargs,
                       call=lambda x, **kw: inplace_call(x, x.t(), **kw)),
                Sample("inplace-expanded-error", (lhs((1, cols)), rhs(shape)), kwargs,
                       call=lambda x, y, **kw: inplace_call(x.expand(y.shape), y, **kw)),
            ]
            wider = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64,
                     torch.int8: torch.int32, torch.int16: torch.int32, torch.int32: torch.int64,
                     torch.uint8: torch.int32}.get(dtype)
            if wider is not None:
                # The result is computed in the wider dtype and stored in self's, as ATen does.
                cases.append(Sample("inplace-promoted", (lhs(shape), rhs(shape, wider)), kwargs, expects=overload,
                                    call=inplace_call))
            if not dtype.is_floating_point:
                cases.append(Sample("inplace-promotion-error", (lhs(shape), rhs(shape, torch.float32)), kwargs,
                                    call=inplace_call))
        if nonzero_rhs:
            for case in cases:
                if len(case.args) > 1 and isinstance(case.args[1], torch.Tensor):
                    dividend = case.args[0] if isinstance(case.args[0], torch.Tensor) else None
                    case.args = (case.args[0], nonzero_divisor(case.args[1], dividend), *case.args[2:])
                elif len(case.args) > 1 and case.args[1] == 0:
                    case.args = (case.args[0], 1, *case.args[2:])
        if zero_division is not None and not dtype.is_floating_point and dtype != torch.bool:
            cases.append(_zero_division_sample(zero_division, lhs(shape), rhs(shape), device, kwargs))
        return cases

    return samples


def _strided_empty(shape, dtype, device):
    rows, cols = shape
    return torch.empty((rows, cols * 2), dtype=dtype, device=device)[:, ::2]


def _refused_out_dtype(dtype):
    """An out= dtype that ATen refuses for a result of ``dtype`` (None when every dtype is accepted)."""
    if dtype.is_floating_point:
        return torch.int64
    if dtype != torch.bool:
        return torch.bool
    return None


def _zero_division_sample(zero_division, x, y, device, kwargs):
    overload, divide = zero_division
    y = y.clone()
    y.view(-1)[::3] = 0
    if str(device) in ("cpu", "meta"):
        return Sample("zero-divisor", (x, y), kwargs, expects=overload, call=divide)

    def masked(x, y, **kw):
        if x.is_cpu:  # the oracle: ATen's CPU kernel would raise, so divide by one where y is zero
            result = divide(x, nonzero_divisor(y), **kw)
        else:
            result = divide(x, y, **kw)
        return torch.where(y == 0, torch.zeros_like(result), result)

    return Sample("zero-divisor", (x, y), kwargs, expects=overload, call=masked)


def comparison_samples(name, call, out_overloads):
    """Samples for ``eq``-like comparisons: binary variants, ties, NaN, scalar overloads, out=."""
    tensor_out, scalar_out = out_overloads
    base = binary_op_samples(call, out=tensor_out, scalar_overload=(f"{name}.Scalar", getattr(torch.ops.aten,
                                                                                             name).Scalar),
                             scalar_expects=f"{name}.Scalar", result="bool")

    def samples(dtype, device, quick):
        cases = base(dtype, device, quick)
        shape = shape_for(quick)
        x = make_tensor(shape, dtype, device)
        y = make_tensor(shape, dtype, device)
        pick = make_tensor(shape, torch.bool, device)
        cases += [
            # Half the pairs equal, so that eq/le/ge see ties.
            Sample("ties", (x, torch.where(pick, x, y))),
            Sample("scalar-out", (x, 2 if not dtype.is_floating_point else 0.5,
                                  torch.empty(0, dtype=torch.bool, device=device)),
                   expects=scalar_out, call=lambda a, s, o: call(a, s, out=o)),
        ]
        if dtype.is_floating_point:
            nan = torch.tensor(float("nan"), dtype=dtype, device=device)
            cases.append(Sample("nan-scalar-tensor", (x, nan)))
        if dtype == torch.uint8:
            # A negative scalar wraps to uint8 before comparing, as in ATen.
            cases.append(Sample("scalar-out-of-range", (x, -1), expects=f"{name}.Scalar"))
        return cases

    return samples


def alias_samples(samples_fn, aliases):
    """Add variants that call ATen aliases (decomposed before the backend key), each expecting the
    overload that really runs. aliases: [(variant, call, expects, make_args(dtype, device, quick))]."""

    def samples(dtype, device, quick):
        cases = samples_fn(dtype, device, quick)
        for variant, call, expects, make_args in aliases:
            args, kwargs = make_args(dtype, device, quick)
            cases.append(Sample(variant, args, kwargs, call=call, expects=expects))
        return cases

    return samples


def two_tensors(domain=None, rhs_domain=None, nonzero=False):
    """make_args for :func:`alias_samples`: two random tensors of the case's shape."""
    domain = domain or {}
    rhs_domain = rhs_domain or domain

    def make(dtype, device, quick):
        shape = shape_for(quick)
        x = make_tensor(shape, dtype, device, **domain)
        y = make_tensor(shape, dtype, device, **rhs_domain)
        return (x, nonzero_divisor(y, x) if nonzero else y), {}

    return make


def tensor_and_scalar(value, domain=None):
    domain = domain or {}

    def make(dtype, device, quick):
        v = value if dtype.is_floating_point else (True if dtype == torch.bool else int(value))
        return (make_tensor(shape_for(quick), dtype, device, **domain), v), {}

    return make


# --------------------------------------------------------------------------- unary operators


def unary_op_samples(call, *, out=None, inplace=None, exact_out=False, float_error=None, domain=None):
    """:func:`unary_samples` plus out= and in-place error variants of a one-operand operator.

    exact_out: ATen requires out= of exactly the result dtype ("Found dtype ... but expected ...").
    """
    base = unary_samples(out=out, inplace=inplace, domain=domain)
    domain = domain or {}

    def samples(dtype, device, quick):
        cases = base(dtype, device, quick)
        shape = shape_for(quick)
        make = lambda s: make_tensor(s, dtype, device, **domain)
        if out:
            other = _WIDER.get(dtype) if exact_out else _refused_out_dtype(dtype)
            cases += [
                Sample("out-noncontiguous", (make(shape), _strided_empty(shape, dtype, device)), expects=out,
                       call=lambda x, o: call(x, out=o)),
                Sample("out-wrong-device", (make(shape),),
                       call=lambda x: call(x, out=torch.empty(0, dtype=x.dtype, device=other_device(x.device)))),
                Sample("out-overlap-error", (make((shape[1], shape[1])),), call=lambda x: call(x, out=x.t())),
            ]
            if other is not None:
                cases.append(Sample("out-wrong-dtype", (make(shape),),
                                    call=lambda x: call(x, out=torch.empty(0, dtype=other, device=x.device))))
        if inplace:
            overload, inplace_call = inplace
            cases.append(Sample("inplace-expanded-error", (make((1, shape[1])),),
                                call=lambda x: inplace_call(x.expand(3, shape[1]))))
        return cases

    return samples


# --------------------------------------------------------------------------- creation


def creation_samples(make_calls):
    """Samples for factories. A factory takes no input tensor, so each sample carries an empty
    tensor of the case's dtype and device (the "like" argument) that the call reads dtype and device
    from; the oracle's float64 CPU copy of it makes the oracle a float64 CPU factory call.

    make_calls(dtype, device, quick) -> [(variant, call(like, *tensors), expects, tensors)], where
    tensors are more arguments (an out= tensor, say).
    """

    def samples(dtype, device, quick):
        like = torch.empty(0, dtype=dtype, device=device)
        return [Sample(variant, (like, *tensors), call=call, expects=expects)
                for variant, call, expects, tensors in make_calls(dtype, device, quick)]

    return samples


def out_tensors(shape, dtype, device):
    """[(variant suffix, out tensor)]: the right shape, a wrong size to resize, a strided view."""
    return [("out", torch.empty(shape, dtype=dtype, device=device)),
            ("out-resize", torch.empty((2,), dtype=dtype, device=device)),
            ("out-noncontiguous", _strided_empty(shape, dtype, device))]


def like_samples(call, overload, extra_args=(), fill_checks=()):
    """Samples for ``*_like`` factories: the input's layout is kept (transposed, strided) and its
    values ignored; dtype= changes the result type. fill_checks: [(variant, value)] extra fills."""

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        make = lambda s, d=dtype: make_tensor(s, d, device)
        other = torch.float64 if dtype != torch.float64 else torch.int32
        rows, cols = shape
        cases = [
            Sample("contiguous", (make(shape), *extra_args), expects=overload, call=call),
            Sample("noncontiguous-transposed", (make((cols, rows)).t(), *extra_args), expects=overload, call=call),
            Sample("noncontiguous-strided", (make((rows, cols * 2))[:, ::2], *extra_args), expects=overload,
                   call=call),
            Sample("0d", (make(()), *extra_args), expects=overload, call=call),
            Sample("empty", (make((0, cols)), *extra_args), expects=overload, call=call),
            Sample("3d", (make((3, 5, 7)), *extra_args), expects=overload, call=call),
            Sample("dtype-kwarg", (make(shape), *extra_args), {"dtype": other}, expects=overload, call=call),
            Sample("contiguous-format", (make((cols, rows)).t(), *extra_args),
                   {"memory_format": torch.contiguous_format}, expects=overload, call=call),
        ]
        for variant, value in fill_checks:
            cases.append(Sample(variant, (make(shape), value), expects=overload, call=call))
        return cases

    return samples


# --------------------------------------------------------------------------- perf inputs


def masked_perf(value=None, shapes="pointwise"):
    """Perf inputs ``(x, mask[, y])`` for where / masked_fill: a random bool mask of the same shape."""

    def inputs(shape, dtype, device):
        x = make_tensor(shape, dtype, device)
        mask = make_tensor(shape, torch.bool, device)
        if value is None:
            return Sample("perf", (mask, x, make_tensor(shape, dtype, device)))
        return Sample("perf", (x, mask, value))

    def bytes_moved(sample, result):
        return tensor_bytes(*sample.args, result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)


def scalars_perf(*scalars, shapes="pointwise"):
    """Perf inputs ``(x, *scalars)``: one tensor and fixed scalar arguments (clamp's bounds)."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), *scalars))

    def bytes_moved(sample, result):
        return tensor_bytes(sample.args[0], result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)


def creation_perf(call, shapes="pointwise"):
    """Perf inputs for a factory: the call gets an empty "like" tensor and the shape; bytes = output."""

    def inputs(shape, dtype, device):
        return Sample("perf", (torch.empty(0, dtype=dtype, device=device), tuple(shape)),
                      call=call)

    def bytes_moved(sample, result):
        return tensor_bytes(result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)


def specials_pair(dtype, device):
    """Every pair of special values of ``dtype`` (NaN, infinities, signed zeros, extremes...)."""
    specials = special_values(dtype, device)
    return specials.repeat_interleave(len(specials)), specials.repeat(len(specials))
