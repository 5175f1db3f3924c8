"""Samples and perf inputs of the creation operators added with the copies (gems/ops/creation): the
new_* factories, linspace's and logspace's calls, one_hot, polar."""

from __future__ import annotations

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, special_values
from gems.testing.samples_copy_common import maker, other_dtype

# --------------------------------------------------------------------------- creation


def new_factory_samples(method, overload, value_args=()):
    """Samples of ``self.<method>(size, *value_args)``: self's dtype and device, its layout and values ignored."""

    def samples(dtype, device, quick):
        mk = maker(dtype, device)
        shape = shape_for(quick)

        def made(size, **kwargs):
            return lambda x: getattr(x, method)(size, *value_args, **kwargs)

        out_call = lambda x, o: getattr(torch.ops.aten, overload).out(x, shape, *value_args, out=o)  # noqa: E731
        one = lambda: (mk(shape),)  # noqa: E731
        return [
            Sample("contiguous", one, call=made(shape), expects=overload),
            Sample("noncontiguous-transposed", lambda: (mk(shape[::-1]).t(),), call=made(shape), expects=overload),
            Sample("1d", one, call=made((37,)), expects=overload),
            Sample("0d", one, call=made(()), expects=overload),
            Sample("empty", one, call=made((0, 5)), expects=overload),
            Sample("dtype-kwarg", one, call=made(shape, dtype=other_dtype(dtype)), expects=overload),
            Sample("out", lambda: (mk(shape), torch.empty(0, dtype=other_dtype(dtype), device=device)),
                   call=out_call, expects=f"{overload}.out"),
            Sample("negative-size-error", one, call=made((-1, 3))),
        ]

    return samples


def space_calls(fn, overload, dtype, device, quick):
    """make_calls (gems.testing.samples_extra.creation_samples) of linspace or logspace. Integer results take
    bounds whose steps are whole numbers (ATen's CPU kernel steps in double, its CUDA kernel in float)."""
    log = overload == "logspace"
    if dtype.is_floating_point:
        bounds = (-1.0, 2.0) if log else (-2.5, 7.0)
        steps = 37
    else:
        bounds, steps = ((0, 6), 7) if log else (((2, 38), 37) if dtype == torch.uint8 else ((-10, 26), 37))
    base = {"base": 2.0} if log else {}
    start, end = bounds

    def made(*args, **kwargs):
        return lambda like: fn(*args, **base, **kwargs, dtype=like.dtype, device=like.device)

    calls = [("contiguous", made(start, end, steps), overload), ("descending", made(end, start, steps), overload),
             ("one-step", made(start, end, 1), overload), ("two-steps", made(start, end, 2), overload),
             ("no-steps", made(start, end, 0), overload), ("negative-steps-error", made(start, end, -1), None)]
    calls = [(variant, call, expects, ()) for variant, call, expects in calls]
    if not log and dtype == torch.int8:
        calls.append(("overflow-error", made(0, 300, 4), None, ()))
    if dtype.is_floating_point:
        calls.append(("base-e" if log else "fractional", made(0.5, 1.75, 6), overload, ()))
    bound_dtype = torch.float64 if dtype.is_floating_point else torch.int64

    def tensor_bounds(which):  # the 0-d tensors standing for the bounds ``which`` marks
        return tuple(torch.tensor(v, dtype=bound_dtype, device=device) for v, given in zip(bounds, which) if given)

    tensors = (("tensor-bounds", "Tensor_Tensor", (True, True)), ("tensor-start", "Tensor_Scalar", (True, False)),
               ("tensor-end", "Scalar_Tensor", (False, True)))
    for variant, suffix, which in tensors:
        calls.append((variant, lambda like, *b, w=which: fn(*_bounds(b, w, start, end), steps, **base,
                                                             dtype=like.dtype, device=like.device),
                      f"{overload}.{suffix}", lambda w=which: tensor_bounds(w)))
        calls.append((f"{variant}-out", lambda like, *b, w=which: fn(*_bounds(b[:-1], w, start, end), steps, **base,
                                                                    out=b[-1]),
                      f"{overload}.{suffix}_out",
                      lambda w=which: (*tensor_bounds(w), torch.empty(0, dtype=dtype, device=device))))
    calls.append(("tensor-bounds-error", lambda like, b: fn(b, end, steps, **base, dtype=like.dtype), None,
                  lambda: (torch.zeros(2, device=device),)))
    outs = (("out", lambda: torch.empty(0, dtype=dtype, device=device)),
            ("out-noncontiguous", lambda: torch.empty(2 * steps, dtype=dtype, device=device)[::2]))
    for variant, out in outs:
        calls.append((variant, lambda like, o: fn(start, end, steps, **base, out=o), f"{overload}.out",
                      lambda out=out: (out(),)))
    if dtype == torch.float32:  # dtype=None: the default dtype
        calls.append(("default-dtype", lambda like: fn(0, 5, 11, **base, device=like.device), overload, ()))
    return calls


def _bounds(tensors, which, start, end):
    """(start, end) with the sample's 0-d tensors where ``which`` says a bound is a tensor."""
    given = iter(tensors)
    return [next(given) if is_tensor else value for value, is_tensor in zip((start, end), which)]


def one_hot_samples():
    def samples(dtype, device, quick):
        shape = shape_for(quick)
        labels = lambda s, high=4: make_tensor(s, torch.int64, device, int_low=0, int_high=high)  # noqa: E731
        one_hot = torch.nn.functional.one_hot
        return [
            Sample("contiguous", lambda: (labels(shape), 5)),
            Sample("infer-classes", lambda: (labels(shape),)),
            Sample("1d", lambda: (labels((37,), high=9), 10)),
            Sample("0d", lambda: (labels(()), 6)),
            Sample("noncontiguous-transposed", lambda: (labels(shape[::-1]).t(), 5)),
            Sample("strided-1d", lambda: (labels((74,), high=9)[::2], 10)),
            Sample("expanded-1d", lambda: (labels((1,)).expand(37), 5)),
            Sample("empty", lambda: (labels((0, 3)), 4)),
            Sample("empty-infer-error", lambda: (labels((0, 3)),)),
            Sample("int32-error", lambda: (labels(shape).int(), 5)),
            Sample("negative-class-error", lambda: (labels(shape) - 2, 5), call=one_hot),
            Sample("class-too-large-error", lambda: (labels(shape), 3), call=one_hot),
        ]

    return samples


def one_hot_perf(shapes="pointwise"):
    """one_hot of numel/16 labels into 16 classes: a result of the shape's element count."""

    def inputs(shape, dtype, device):
        rows = max(1, shape[0] // 16)
        return Sample("perf", (make_tensor((rows,), torch.int64, device, int_low=0, int_high=15), 16))

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(sample.args[0], result))


def polar_samples():
    def samples(dtype, device, quick):
        mk = maker(dtype, device)
        shape = shape_for(quick)
        from gems.ops.creation.polar import real_view  # conformance compares real tensors

        call = lambda a, t: real_view(torch.polar(a, t))  # noqa: E731
        out_call = lambda a, t, o: real_view(torch.polar(a, t, out=o))  # noqa: E731
        complex_of = torch.complex64 if dtype == torch.float32 else torch.complex128
        magnitude = lambda s: mk(s, low=0.0, high=3.0)  # noqa: E731

        def specials():
            values = special_values(dtype, device)
            return values.repeat_interleave(len(values)).abs(), values.repeat(len(values))

        cases = [
            Sample("contiguous", lambda: (magnitude(shape), mk(shape)), call=call),
            Sample("noncontiguous-transposed", lambda: (magnitude(shape[::-1]).t(), mk(shape)), call=call),
            Sample("broadcast", lambda: (magnitude((shape[0], 1)), mk((shape[1],))), call=call),
            Sample("0d", lambda: (magnitude(()), mk(())), call=call),
            Sample("empty", lambda: (magnitude((0, 5)), mk((0, 5))), call=call),
            Sample("special-values", specials, call=call),
            Sample("out", lambda: (magnitude(shape), mk(shape), torch.empty(0, dtype=complex_of, device=device)),
                   call=out_call, expects="polar.out"),
            Sample("broadcast-error", lambda: (magnitude((3,)), mk((4,))), call=call),
            Sample("out-wrong-dtype", lambda: (magnitude(shape), mk(shape), torch.empty(0, dtype=dtype, device=device)),
                   call=out_call),
        ]
        if dtype == torch.float32:
            cases += [Sample("int-input-error", lambda: (mk(shape, torch.int32), mk(shape, torch.int32)), call=call),
                      Sample("mixed-dtype-error", lambda: (magnitude(shape), mk(shape, torch.float64)), call=call)]
        return cases

    return samples


def polar_perf(shapes="pointwise"):
    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device, low=0.0), make_tensor(shape, dtype, device)))

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=lambda sample, result: tensor_bytes(*sample.args, result))
