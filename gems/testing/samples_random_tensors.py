"""Sample generators of the random operators that fill floating tensors: the in-place draws (uniform_, normal_,
exponential_, bernoulli_ ...), the factories (rand, randn and their _like forms), bernoulli and normal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.draws import (
    Draw,
    bernoulli_law,
    normal_law,
)
from gems.testing.samples_random_common import (
    GAP_FILL,
    ODD,
    draw_shape,
    generator_for,
    law_of,
    on_device_of,
    single_value,
    verdict_of,
)

# --------------------------------------------------------------------------- in-place draws


@dataclass(frozen=True)
class InplaceDraws:
    """Samples of ``self.<method>(*params, generator=)`` for an in-place draw of law ``kind``.

    params: the default variant's parameters (() for ATen's defaults); more: ((variant, params), ...);
    errors: ((variant, params, self dtype or None), ...) that ATen refuses; bounds(dtype, params): the
    law's parameters when they are not the call's (random_'s range in a dtype); expects: the overload
    every sample runs, or a function of the call's parameters giving it.
    """

    method: str
    kind: str
    params: tuple = ()
    more: tuple = ()
    errors: tuple = ()
    bounds: Callable | None = None
    expects: str | Callable | None = None

    def _expects(self, params):
        return self.expects(params) if callable(self.expects) else self.expects

    def _law(self, params, dtype):
        law_params = self.bounds(dtype, params) if self.bounds else params
        return law_of(self.kind, law_params), single_value(self.kind, law_params)

    def _one(self, variant, make, params, dtype, kwargs=None, gaps=False):
        call = getattr(torch.Tensor, self.method)
        law, single = self._law(params, dtype)

        if gaps:  # the view is drawn, the base comes back too: its gaps must be untouched
            def judge(v, args, kw, outs):
                law(v, outs[0])
                v.require(bool((outs[1][:, 1::2] == args[0][:, 1::2]).all()), "the draw wrote outside the view")

            return Sample(variant, lambda: (make(),), kwargs or {}, expects=self._expects(params),
                          call=lambda base, **kw: (call(base[:, ::2], *params, **kw), base),
                          random=verdict_of(judge, not single))
        return Sample(variant, lambda: (make(),), kwargs or {}, expects=self._expects(params),
                      call=lambda x, **kw: call(x, *params, **kw),
                      random=verdict_of(lambda v, args, kw, outs: law(v, outs[0]), not single))

    def __call__(self, dtype, device, quick):
        rows, cols = draw_shape(quick)
        empty = lambda shape: (lambda: torch.empty(shape, dtype=dtype, device=device))
        samples = [
            self._one("contiguous", empty((rows, cols)), self.params, dtype),
            self._one("odd-shape", empty(ODD), self.params, dtype),
            self._one("0d", empty(()), self.params, dtype),
            self._one("empty", empty((0, 5)), self.params, dtype),
            self._one("noncontiguous-transposed", lambda: torch.empty((cols, rows), dtype=dtype, device=device).t(),
                      self.params, dtype),
            self._one("noncontiguous-strided", lambda: torch.full((rows, 2 * cols), GAP_FILL, dtype=dtype,
                                                                   device=device), self.params, dtype, gaps=True),
            self._one("generator", empty((rows, cols)), self.params, dtype, {"generator": generator_for(device)}),
        ]
        samples += [self._one(variant, empty((rows, cols)), params, dtype) for variant, params in self.more]
        for variant, params, self_dtype in self.errors:
            if self_dtype is None or dtype == torch.float32:  # a dtype error once, not per dtype
                samples.append(Sample(variant, lambda p=params, d=self_dtype: (
                    torch.empty(ODD, dtype=d or dtype, device=device), *p), call=getattr(torch.Tensor, self.method),
                    expects=self._expects(params)))
        return samples


# --------------------------------------------------------------------------- factories


def _law_draw(kind: str, params: tuple = (), index: int = 0) -> Draw:
    law = law_of(kind, params)
    return verdict_of(lambda v, args, kwargs, outs: law(v, outs[index]), not single_value(kind, params))


def factory_samples(call, name: str, kind: str, params: tuple = (), out_expects: str | None = None,
                    generator_out_expects: str | None = None):
    """Samples of a sized factory ``call(*params, size, dtype=, device=, generator=, out=)`` (rand, randn,
    normal.float_float): shapes, the default dtype, a generator, out= forms, and an integer dtype and a
    negative size, which ATen refuses."""

    def samples(dtype, device, quick):
        rows, cols = draw_shape(quick)
        draw = _law_draw(kind, params)

        like = lambda d=dtype: torch.empty(0, dtype=d, device=device)

        def sized(variant, size, expects=name, **kwargs):
            return Sample(variant, lambda: (like(), *params, size), kwargs, call=on_device_of(call), expects=expects,
                          random=draw)

        def out(variant, size, out_size, expects, **kwargs):
            return Sample(variant, lambda: (*params, size, torch.empty(out_size, dtype=dtype, device=device)),
                          kwargs, call=lambda *a, **kw: call(*a[:-1], out=a[-1], **kw), expects=expects, random=draw)

        cases = [sized("contiguous", (rows, cols)), sized("odd-shape", ODD), sized("0d", ()),
                 sized("empty", (0, 5)), sized("3d", (3, 5, 7)),
                 sized("generator", (rows, cols), f"{name}.generator", generator=generator_for(device)),
                 out("out", (rows, cols), (rows, cols), out_expects or f"{name}.out"),
                 out("out-resize", ODD, (2,), out_expects or f"{name}.out"),
                 out("generator-out", (rows, cols), (rows, cols), generator_out_expects or f"{name}.generator_out",
                     generator=generator_for(device)),
                 Sample("negative-size-error", lambda: (like(), *params, (-1, 3)), call=on_device_of(call),
                        expects=name)]
        if dtype == torch.float32:
            cases += [Sample("default-dtype", lambda: (like(), *params, ODD), call=on_device_of(call, dtype=False),
                             expects=name, random=draw),
                      Sample("integer-dtype-error", lambda: (like(torch.int64), *params, ODD), call=on_device_of(call),
                             expects=name)]
        return cases

    return samples


def like_samples(name: str, kind: str):
    """Samples of a ``*_like`` factory (rand_like, randn_like): the input's layout is kept (transposed) or
    made contiguous (a strided view, memory_format=), dtype= changes the result type, a generator, the
    out= overloads, and an integer dtype, which ATen refuses."""
    plain, with_generator = (getattr(torch.ops.aten, name).default, getattr(torch.ops.aten, name).generator)
    out, generator_out = getattr(torch.ops.aten, name).out, getattr(torch.ops.aten, name).generator_out

    def samples(dtype, device, quick):
        rows, cols = draw_shape(quick)
        draw = _law_draw(kind)
        empty = lambda shape: torch.empty(shape, dtype=dtype, device=device)
        other = torch.float64 if dtype != torch.float64 else torch.float32

        def like(variant, make, expects=name, call=plain, **kwargs):
            return Sample(variant, lambda: (make(),), kwargs, call=call, expects=expects, random=draw)

        cases = [like("contiguous", lambda: empty((rows, cols))), like("odd-shape", lambda: empty(ODD)),
                 like("0d", lambda: empty(())), like("empty", lambda: empty((0, 5))),
                 like("noncontiguous-transposed", lambda: empty((cols, rows)).t()),
                 like("noncontiguous-strided", lambda: empty((rows, 2 * cols))[:, ::2]),
                 like("contiguous-format", lambda: empty((cols, rows)).t(), memory_format=torch.contiguous_format),
                 like("dtype-kwarg", lambda: empty(ODD), dtype=other),
                 like("generator", lambda: empty((rows, cols)), f"{name}.generator", with_generator,
                      generator=generator_for(device)),
                 Sample("out", lambda: (empty(ODD), empty((2,))), call=lambda x, o: out(x, out=o),
                        expects=f"{name}.out", random=draw),
                 Sample("generator-out", lambda: (empty((rows, cols)), empty((rows, cols))),
                        {"generator": generator_for(device)}, call=lambda x, o, **kw: generator_out(x, out=o, **kw),
                        expects=f"{name}.generator_out", random=draw)]
        if dtype == torch.float32:
            cases.append(Sample("integer-dtype-error", lambda: (empty(ODD),), {"dtype": torch.int64}, call=plain,
                                expects=name))
        return cases

    return samples


# --------------------------------------------------------------------------- bernoulli


def _probabilities(shape, dtype, device, extremes=False):
    p = torch.rand(shape, dtype=torch.float64)
    if extremes:  # 0, 1 and 0.5 in turn: the 0s and 1s are certain
        p = torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64).repeat(p.numel() // 3 + 1)[:p.numel()].reshape(shape)
    return p.to(dtype).to(device)


def _bernoulli_of(index: int, p_index: int | None = None, p=None, varies=True) -> Draw:
    """Outputs[index] ~ Bernoulli(p): p a number, or the argument at p_index."""
    return verdict_of(lambda v, args, kw, outs: bernoulli_law(v, outs[index], p if p_index is None else args[p_index]),
                      varies)


def bernoulli_samples(inplace: bool):
    """bernoulli_ (inplace) or bernoulli: a number p, a tensor p (broadcast, float64, 0-d, certain values),
    p outside [0, 1] and p tensors that do not broadcast or are not floating (errors)."""
    scalar = InplaceDraws("bernoulli_", "bernoulli", more=(("p", (0.2,)), ("p-zero", (0.0,)), ("p-one", (1.0,))),
                          errors=(("p-above-one-error", (1.5,), None), ("p-negative-error", (-0.1,), None),
                                  ("p-nan-error", (float("nan"),), None)), expects="bernoulli_.float")

    def samples(dtype, device, quick):
        rows, cols = draw_shape(quick)
        floating = dtype.is_floating_point
        p_dtype = dtype if floating else torch.float32
        empty = lambda shape: torch.empty(shape, dtype=dtype, device=device)
        probs = lambda shape, d=p_dtype, **kw: _probabilities(shape, d, device, **kw)
        if inplace:
            cases = scalar(dtype, device, quick)
            tensor_call, expects = torch.Tensor.bernoulli_, "bernoulli_.Tensor"
        else:
            cases = [Sample("p-float", lambda: (empty((rows, cols)), 0.3), call=torch.bernoulli, expects="bernoulli.p",
                            random=_bernoulli_of(0, p=0.3)),
                     Sample("p-float-out", lambda: (empty((rows, cols)), empty((2,))), expects="bernoulli.float_out",
                            call=lambda x, o: torch.ops.aten.bernoulli.float_out(x, 0.3, out=o),
                            random=_bernoulli_of(0, p=0.3)),
                     Sample("p-float-above-one-error", lambda: (empty(ODD), 1.5), call=torch.bernoulli,
                            expects="bernoulli.p")]
            tensor_call, expects = torch.ops.aten.bernoulli.Tensor, "bernoulli.Tensor"
            if floating:
                own = [("contiguous", lambda: (probs((rows, cols)),)), ("odd-shape", lambda: (probs(ODD),)),
                       ("0d", lambda: (probs(()),)), ("empty", lambda: (probs((0, 5)),)),
                       ("noncontiguous-transposed", lambda: (probs((cols, rows)).t(),)),
                       ("certain-values", lambda: (probs((rows, cols), extremes=True),))]
                cases += [Sample(v, make, call=torch.bernoulli, expects="bernoulli", random=_bernoulli_of(0, 0))
                          for v, make in own]
                cases += [Sample("generator", lambda: (probs((rows, cols)),), {"generator": generator_for(device)},
                                 call=torch.bernoulli, expects="bernoulli", random=_bernoulli_of(0, 0)),
                          Sample("out", lambda: (probs((rows, cols)), empty((2,))), expects="bernoulli.out",
                                 call=lambda p, o: torch.bernoulli(p, out=o), random=_bernoulli_of(0, 0)),
                          Sample("p-above-one-error", lambda: (probs(ODD) + 1,), call=torch.bernoulli,
                                 expects="bernoulli")]
            else:
                cases.append(Sample("integer-self-error", lambda: (empty(ODD),), call=torch.bernoulli,
                                    expects="bernoulli"))
            cases.append(Sample("p-tensor-out", lambda: (empty((rows, cols)), probs((rows, cols)), empty((2,))),
                                call=lambda x, p, o: torch.ops.aten.bernoulli.Tensor_out(x, p, out=o),
                                expects="bernoulli.Tensor_out", random=_bernoulli_of(0, 1)))
        tensor_p = [("p-tensor", lambda: (empty((rows, cols)), probs((rows, cols)))),
                    ("p-tensor-broadcast", lambda: (empty((rows, cols)), probs((cols,)))),
                    ("p-tensor-float64", lambda: (empty((rows, cols)), probs((rows, cols), torch.float64))),
                    ("p-tensor-0d", lambda: (empty((rows, cols)), probs(()))),
                    ("p-tensor-certain-values", lambda: (empty((rows, cols)), probs((rows, cols), extremes=True)))]
        cases += [Sample(v, make, call=tensor_call, expects=expects, random=_bernoulli_of(0, 1))
                  for v, make in tensor_p]
        cases += [Sample("p-tensor-above-one-error", lambda: (empty(ODD), probs(ODD) + 1), call=tensor_call,
                         expects=expects),
                  Sample("p-tensor-nan-error", lambda: (empty(ODD), probs(ODD) * float("nan")), call=tensor_call,
                         expects=expects),
                  Sample("p-tensor-shape-error", lambda: (empty(ODD), probs((3,))), call=tensor_call, expects=expects)]
        if dtype == torch.float32:
            cases.append(Sample("p-tensor-integer-error", lambda: (empty(ODD), torch.ones(ODD, dtype=torch.int64,
                                                                                         device=device)),
                                call=tensor_call, expects=expects))
        return cases

    return samples


# --------------------------------------------------------------------------- normal


def _normal_of(mean, std) -> Draw:
    """outputs[0] ~ N(mean, std^2); mean and std: numbers, or ("arg", i): the i-th argument."""
    pick = lambda value, args: args[value[1]] if isinstance(value, tuple) else value
    return verdict_of(lambda v, args, kw, outs: normal_law(v, outs[0], pick(mean, args), pick(std, args)))


def normal_samples():
    """normal's overloads: tensor means and stds (broadcast, transposed, other dtypes, zeros in std), the
    sized form, the out= forms, and std < 0 or NaN, shapes that do not broadcast and integer inputs."""
    return _normal_samples


def _normal_samples(dtype, device, quick):
    rows, cols = draw_shape(quick)
    other = torch.float64 if dtype != torch.float64 else torch.float32
    means = lambda shape, d=dtype: (torch.rand(shape, dtype=torch.float64) * 4 - 2).to(d).to(device)
    stds = lambda shape, d=dtype: (torch.rand(shape, dtype=torch.float64) * 1.5 + 0.5).to(d).to(device)
    empty = lambda shape: torch.empty(shape, dtype=dtype, device=device)
    arg0, arg1 = ("arg", 0), ("arg", 1)
    aten = torch.ops.aten.normal

    def case(variant, make, draw, expects, call=torch.normal, **kwargs):
        return Sample(variant, make, kwargs, call=call, expects=expects, random=draw)

    def with_zeros(shape):
        std = stds(shape)
        std.view(-1)[::3] = 0
        return std

    cases = [
        case("tensor-float", lambda: (means((rows, cols)), 1.5), _normal_of(arg0, 1.5), "normal.Tensor_float"),
        case("tensor-float-transposed", lambda: (means((cols, rows)).t(), 0.5), _normal_of(arg0, 0.5),
             "normal.Tensor_float"),
        case("float-tensor", lambda: (0.5, stds((rows, cols))), _normal_of(0.5, arg1), "normal.float_Tensor"),
        case("tensor-tensor", lambda: (means((rows, cols)), stds((rows, cols))), _normal_of(arg0, arg1),
             "normal.Tensor_Tensor"),
        case("tensor-tensor-broadcast", lambda: (means((rows, 1)), stds((cols,))), _normal_of(arg0, arg1),
             "normal.Tensor_Tensor"),
        case("tensor-tensor-other-dtype", lambda: (means((rows, cols)), stds((rows, cols), other)),
             _normal_of(arg0, arg1), "normal.Tensor_Tensor"),
        case("std-zeros", lambda: (means((rows, cols)), with_zeros((rows, cols))), _normal_of(arg0, arg1),
             "normal.Tensor_Tensor"),
        case("odd-shape", lambda: (means(ODD), stds(ODD)), _normal_of(arg0, arg1), "normal.Tensor_Tensor"),
        case("0d", lambda: (means(()), stds(())), _normal_of(arg0, arg1), "normal.Tensor_Tensor"),
        case("empty", lambda: (means((0, 5)), stds((0, 5))), _normal_of(arg0, arg1), "normal.Tensor_Tensor"),
        case("generator", lambda: (means((rows, cols)), 2.0), _normal_of(arg0, 2.0), "normal.Tensor_float",
             generator=generator_for(device)),
        case("tensor-float-out", lambda: (means((rows, cols)), empty((1, cols))), _normal_of(arg0, 1.0),
             "normal.Tensor_float_out", call=lambda m, o: torch.normal(m, 1.0, out=o)),
        case("float-tensor-out", lambda: (stds((rows, cols)), empty((rows, cols))), _normal_of(-1.0, arg0),
             "normal.float_Tensor_out", call=lambda s, o: torch.normal(-1.0, s, out=o)),
        case("tensor-tensor-out", lambda: (means((rows, cols)), stds((rows, cols)), empty(ODD)),
             _normal_of(arg0, arg1), "normal.Tensor_Tensor_out", call=lambda m, s, o: torch.normal(m, s, out=o)),
        case("float-float", lambda: (empty(0), 2.0, 3.0, (rows, cols)), _normal_of(2.0, 3.0), "normal.float_float",
             call=on_device_of(torch.normal)),
        case("float-float-out", lambda: (empty((2,)),), _normal_of(-2.0, 0.25), "normal.float_float_out",
             call=lambda o: torch.normal(-2.0, 0.25, (rows, cols), out=o)),
        case("normal-out", lambda: (empty((rows, cols)), empty((2,))), _normal_of(1.0, 2.0), "normal.out",
             call=lambda x, o: aten.out(x, 1.0, 2.0, out=o)),
    ]
    errors = [("negative-std-error", lambda: (means(ODD), -1.0), "normal.Tensor_float", torch.normal),
              ("std-tensor-negative-error", lambda: (means(ODD), -stds(ODD)), "normal.Tensor_Tensor", torch.normal),
              ("std-tensor-nan-error", lambda: (0.0, stds(ODD) * float("nan")), "normal.float_Tensor", torch.normal),
              ("float-float-negative-std-error", lambda: (0.0, -1.0, ODD), "normal.float_float", torch.normal),
              ("shape-error", lambda: (means((4,)), stds((3,))), "normal.Tensor_Tensor", torch.normal),
              ("tensor-float-out-shape-error", lambda: (means(ODD), empty((2,))), "normal.Tensor_float_out",
               lambda m, o: torch.normal(m, 1.0, out=o)),
              ("normal-out-dtype-error", lambda: (empty(ODD), torch.empty(ODD, dtype=other, device=device)),
               "normal.out", lambda x, o: aten.out(x, 0.0, 1.0, out=o))]
    if dtype == torch.float32:
        errors.append(("integer-mean-error", lambda: (torch.zeros(ODD, dtype=torch.int64, device=device), 1.0),
                       "normal.Tensor_float", torch.normal))
    return cases + [Sample(v, make, call=call, expects=expects) for v, make, expects, call in errors]
