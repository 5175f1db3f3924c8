"""Sample generators of the binary and ternary pointwise operators that the generic binary records of
:mod:`gems.testing.samples_extra` do not cover: three-tensor operators (addcmul, addcdiv, lerp with a
tensor weight) and the inputs ATen refuses by dtype. Same signature and habits as the other
generators: ``samples(dtype, device, quick) -> list[Sample]``, lazy, variant names independent of the
device."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, _with_out, make_tensor, shape_for, special_values
from gems.testing.samples_extra_common import INPLACE_WIDER, WIDER, other_device, refused_out_dtype, strided_empty


def integer_input_error_samples(call, operands=2):
    """``call`` on int32 and on bool tensors, which ATen refuses for a floating-only operator
    (NotImplementedError); listed once, under float32."""

    def samples(dtype, device, quick):
        if dtype != REJECT_HOST_DTYPE:
            return []
        return [Sample(f"error-{str(bad).replace('torch.', '')}-input",
                       lambda bad=bad: tuple(make_tensor((3, 4), bad, device) for _ in range(operands)), call=call)
                for bad in (torch.int32, torch.bool)]

    return samples


@dataclass(frozen=True)
class TernarySamples:
    """Samples for ``call(x, a, b, **kwargs)``, three tensors broadcast together (addcmul, addcdiv, lerp
    with a tensor weight): layouts, broadcasting, 0-d operands, special values, another dtype in the last
    operand, out= and in-place forms with the error variants ATen raises for them, grad.

    domains: make_tensor's value ranges of x, a and b; other_dtype(dtype): the dtype of b in the
    "mixed-dtype" variant (type promotion, or ATen's dtype error); out: the ``.out`` overload; inplace:
    (overload, call); grad: check the gradients; expects: the overload of the functional variants.
    """

    call: object
    kwargs: dict = field(default_factory=dict)
    domains: tuple = ({}, {}, {})
    other_dtype: object = None
    out: str | None = None
    inplace: tuple | None = None
    grad: bool = False
    expects: str | None = None

    def __call__(self, dtype, device, quick):
        shape = shape_for(quick)
        rows, cols = shape
        square = (cols, cols)
        kwargs = dict(self.kwargs)
        make = [lambda s, d=dtype, domain=domain: make_tensor(s, d, device, **domain) for domain in self.domains]

        def three(*shapes, views=(None, None, None)):
            def build():
                made = [m(s) for m, s in zip(make, shapes)]
                return tuple(v(t) if v else t for v, t in zip(views, made))
            return build

        def fn(*args, **kw):
            return self.call(*args, **kwargs, **kw)

        cases = []

        def add(variant, build, kw=kwargs, expects=None, call=None, grad=False):
            cases.append(Sample(variant, build, kw, call=call, expects=expects or self.expects, grad=grad))

        def specials():
            values = special_values(dtype, device)
            n = values.numel()
            return values.repeat_interleave(n), values.repeat(n), make[2]((n * n,))

        t = lambda x: x.t()
        add("contiguous", three(shape, shape, shape))
        add("noncontiguous-transposed", three(shape[::-1], shape[::-1], shape[::-1], views=(t, t, t)))
        add("noncontiguous-strided", three((rows, 2 * cols), shape, shape[::-1], views=(lambda x: x[:, ::2], None, t)))
        add("broadcast", three((rows, 1), (1, cols), (cols,)))
        add("broadcast-self", three((cols,), shape, (rows, 1)))
        add("0d", three((), (), ()))
        add("0d-operands", three(shape, (), ()))
        add("empty", three((0, cols), (0, cols), (0, cols)))
        add("special-values", specials)
        add("broadcast-error", three((3, 4), (5,), (4,)))
        if self.other_dtype is not None:
            other = self.other_dtype(dtype)
            add("mixed-dtype", lambda: (make[0](shape), make[1](shape), make[2](shape, other)))
        if self.grad and dtype.is_floating_point:
            add("grad", lambda: tuple(x.requires_grad_() for x in three(shape, shape, shape)()), grad=True)
        if self.out:
            out = self.out
            plain = three(shape, shape, shape)
            with_out = lambda x, a, b, o: fn(x, a, b, out=o)
            add("out", plain, expects=out, call=_with_out)
            add("out-noncontiguous", lambda: (*plain(), strided_empty(shape, dtype, device)), {}, out, with_out)
            add("out-resize", lambda: (*plain(), torch.empty((3,), dtype=dtype, device=device)), {}, out, with_out)
            add("out-wrong-device", plain, {}, call=lambda x, a, b: fn(x, a, b, out=torch.empty(
                0, dtype=dtype, device=other_device(x.device))))
            add("out-overlap-error", three(square, square, square), {}, call=lambda x, a, b: fn(x, a, b, out=x.t()))
            if WIDER.get(dtype) is not None:
                add("out-wider-dtype", lambda: (*plain(), torch.empty(0, dtype=WIDER[dtype], device=device)), {},
                    out, with_out)
            refused = refused_out_dtype(dtype)
            if refused is not None:
                add("out-wrong-dtype", plain, {}, call=lambda x, a, b: fn(x, a, b, out=torch.empty(
                    0, dtype=refused, device=x.device)))
        if self.inplace:
            overload, inplace_call = self.inplace
            add("inplace", three(shape, shape, shape), expects=overload, call=inplace_call)
            add("inplace-broadcast-operands", three(shape, (cols,), (rows, 1)), expects=overload, call=inplace_call)
            add("inplace-self-alias", lambda: (make[0](shape),), expects=overload,
                call=lambda x, **kw: inplace_call(x, x, x, **kw))
            add("inplace-broadcast-error", three((1, cols), shape, shape), call=inplace_call)
            add("inplace-overlap-error", three(square, square, square),
                call=lambda x, a, b, **kw: inplace_call(x, x.t(), b, **kw))
            wider = INPLACE_WIDER.get(dtype)
            if wider is not None:
                add("inplace-promoted", lambda: (make[0](shape), make[1](shape, wider), make[2](shape, wider)),
                    expects=overload, call=inplace_call)
            if not dtype.is_floating_point:
                add("inplace-promotion-error", lambda: (make[0](shape), make[1](shape, torch.float32),
                                                        make[2](shape, torch.float32)), call=inplace_call)
        return cases


ternary_samples = TernarySamples


def scalar_overload_samples(functional, inplace, name, extra=()):
    """Variants of a ``.Scalar`` overload (``functional(x, number, *extra)``, e.g. aten.mul.Scalar) and its
    in-place form (``inplace``, None for an operator without one), which models reach from C++ (autograd
    formulas, optimizers) rather than through Python's wrapped numbers: 0-d, expanded (stride 0) and
    transposed tensors, a float number on an integer tensor, a bool number, the generated
    ``{name}.Scalar_out`` wrapper, an in-place result that self cannot hold, and the gradient. ``name``: the
    operator (the overloads are ``{name}.Scalar`` and ``{name}_.Scalar``)."""
    expects, inplace_expects = f"{name}.Scalar", f"{name}_.Scalar"
    scalar_out = getattr(torch.ops.aten, name).Scalar_out

    def samples(dtype, device, quick):
        shape = shape_for(quick)
        rows, cols = shape
        number = 2.5 if dtype.is_floating_point else (True if dtype == torch.bool else 3)
        make = lambda s: make_tensor(s, dtype, device)

        def one(build, value=number):
            return lambda: (build(), value, *extra)

        call, call_inplace = functional, inplace
        cases = [
            Sample("scalar-form-0d", one(lambda: make(())), expects=expects, call=call),
            # expanded in the call: the harness copies inputs, and no copy can be written into a stride-0 tensor
            Sample("scalar-form-expanded", one(lambda: make((1, cols))), expects=expects,
                   call=lambda x, s, *rest: functional(x.expand(rows, cols), s, *rest)),
            Sample("scalar-form-transposed", one(lambda: make(shape[::-1]).t()), expects=expects, call=call),
            Sample("scalar-form-bool", one(lambda: make(shape), True), expects=expects, call=call),
            # {name}.Scalar_out is ATen's generated wrapper: the functional overload, then a copy into out
            Sample("scalar-form-out", lambda: (make(shape), number, *extra, torch.empty(0, dtype=dtype, device=device)),
                   expects=expects, call=lambda x, s, *rest: scalar_out(x, s, *rest[:-1], out=rest[-1])),
        ]
        if inplace is not None:
            cases += [
                Sample("scalar-form-inplace", one(lambda: make(shape)), expects=inplace_expects, call=call_inplace),
                Sample("scalar-form-inplace-0d", one(lambda: make(())), expects=inplace_expects,
                       call=call_inplace),
                Sample("scalar-form-inplace-expanded-error", one(lambda: make((1, cols))),
                       call=lambda x, s, *rest: inplace(x.expand(rows, cols), s, *rest)),
            ]
        if not dtype.is_floating_point:
            cases.append(Sample("scalar-form-float-on-int", one(lambda: make(shape), -1.5), expects=expects,
                                call=call))
            if inplace is not None:
                cases.append(Sample("scalar-form-inplace-float-on-int-error", one(lambda: make(shape), -1.5),
                                    call=call_inplace))
        else:
            cases.append(Sample("scalar-form-grad", one(lambda: make(shape).requires_grad_()), expects=expects,
                                call=call, grad=True))
        return cases

    return samples
