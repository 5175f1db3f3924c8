"""Sample generators of the random operators (gems/ops/random/): statistical verdicts, no oracle.

Every sample carries a :class:`gems.testing.draws.Draw` (``Sample.random``) built from a law of
gems.testing.draws and the call's parameters; the conformance runner adds the checks every random case
gets (ATen's shapes, dtypes and strides; the same numbers under the same seed; other numbers next call).
Samples are large enough for the tests to see something (8192 values in quick mode, 2^20 in full mode)
and keep the variants every operator has: an odd shape, 0-d, empty, transposed and strided views (a
strided in-place draw must leave the gaps alone), a ``generator=``, ``out=`` forms, and bad input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.draws import (
    Draw,
    Verdict,
    bernoulli_law,
    bounded_mean,
    exponential_law,
    frequencies,
    integer_law,
    normal_law,
    uniform_law,
)

QUICK_DRAWS, FULL_DRAWS = (64, 128), (1024, 1024)
ODD = (13, 17)
# Quick mode (CI's CPU time): every variant runs in float32; the other dtypes, whose kernels differ from
# float32's only by the casts at load and store (and float64 by its 53-bit uniforms), run their operator's
# main forms (CORE_VARIANTS), the ranges of their own (random_, randint) and every error. Full mode runs all.
PRIMARY = torch.float32
CORE_VARIANTS = ("contiguous", "low-high", "high", "p-tensor", "p-float", "float-float", "tensor-tensor", "to",
                 "from-to", "wide-span", "span-past-2^32", "full-range", "default-dtype", "replacement",
                 "no-replacement", "training", "eval", "range", "mean-std", "lambda")
_GAP_FILL = 7.0  # what a strided view's gaps hold before the draw, and must hold after it


def draw_shape(quick: bool) -> tuple[int, int]:
    return QUICK_DRAWS if quick else FULL_DRAWS


def verdict_of(judge: Callable, varies: bool = True) -> Draw:
    """A Draw whose check runs ``judge(verdict, args, kwargs, outputs)`` on a fresh :class:`Verdict`."""

    def check(args, kwargs, outputs):
        verdict = Verdict()
        judge(verdict, args, kwargs, outputs)
        return verdict.message()

    return Draw(check, varies)


def on_device_of(call, dtype=True):
    """``call(*args, dtype=like.dtype, device=like.device)`` for a factory's sample whose first argument is
    an empty ``like`` tensor: a device= argument would stay on the CPU where samples are made on the CPU
    and moved (a device without ATen kernels), a tensor moves. dtype=False passes the device only."""
    def factory(like, *args, **kwargs):
        options = {"dtype": like.dtype, "device": like.device} if dtype else {"device": like.device}
        return call(*args, **options, **kwargs)

    return factory


def quick_trimmed(name: str, *args, **kwargs) -> Callable:
    """The sample generator ``name(*args, **kwargs)`` of this module, less the variants that a dtype other
    than PRIMARY skips in quick mode (see CORE_VARIANTS)."""
    generator = globals()[name](*args, **kwargs)

    def samples(dtype, device, quick):
        cases = generator(dtype, device, quick)
        if not quick or dtype == PRIMARY:
            return cases
        return [s for s in cases if s.variant in CORE_VARIANTS or s.variant.endswith("-error")]

    return samples


def generator_for(device) -> torch.Generator | None:
    """A generator= argument for ``device`` (None while listing cases on the meta device)."""
    return None if str(device) == "meta" else torch.Generator(device=device)


# --------------------------------------------------------------------------- laws by name


def law_of(kind: str, params: tuple) -> Callable:
    """``judge(verdict, values)`` for a law and its parameters as the operator takes them."""
    laws = {
        "uniform": lambda v, x: uniform_law(v, x, *(params or (0.0, 1.0))),
        "normal": lambda v, x: normal_law(v, x, *(params or (0.0, 1.0))),
        "exponential": lambda v, x: exponential_law(v, x, *(params or (1.0,))),
        "bernoulli": lambda v, x: bernoulli_law(v, x, *(params or (0.5,))),
        "integers": lambda v, x: integer_law(v, x, *params),
    }
    return laws[kind]


def _single_value(kind: str, params: tuple) -> bool:
    """Whether the law allows one value only (the next call cannot differ)."""
    if kind == "uniform" and len(params) == 2:
        return params[0] == params[1]
    if kind == "normal" and len(params) == 2:
        return params[1] == 0
    if kind == "bernoulli" and params:
        return params[0] in (0.0, 1.0)
    if kind == "exponential" and params:
        return params[0] == float("inf")
    if kind == "integers":
        return params[1] - params[0] == 1
    return False


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
        return law_of(self.kind, law_params), _single_value(self.kind, law_params)

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
            self._one("noncontiguous-strided", lambda: torch.full((rows, 2 * cols), _GAP_FILL, dtype=dtype,
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
    return verdict_of(lambda v, args, kwargs, outs: law(v, outs[index]), not _single_value(kind, params))


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


# --------------------------------------------------------------------------- integers


def _top(dtype: torch.dtype) -> int:
    """The largest value ATen's random_() draws in ``dtype`` (2^mantissa digits for floats)."""
    if dtype.is_floating_point:
        return 2 ** {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24, torch.float64: 53}[dtype]
    return 1 if dtype is torch.bool else torch.iinfo(dtype).max


def _random_bounds(dtype, params):
    """[low, high) of random_(*params) in ``dtype``."""
    if not params:
        return 0, _top(dtype) + 1
    if len(params) == 1:
        return 0, params[0]
    low, high = params
    return low, (_top(dtype) + 1 if high is None else high)


def random_samples():
    """random_, random_.to and random_.from: ranges per dtype (unsigned and bool ones shifted), the full
    64-bit range of int64, spans past 2^32, and bounds ATen refuses."""
    return _random_samples


def _random_samples(dtype, device, quick):
    unsigned = dtype in (torch.uint8, torch.bool)
    small = dtype in (torch.int8, torch.uint8, torch.bool, torch.float16, torch.bfloat16)
    more = [("to", (2 if dtype is torch.bool else 5,)),
            ("from-to", (0, 2) if dtype is torch.bool else (3, 10) if unsigned else (-3, 4)),
            ("from-none", (0 if dtype is torch.bool else 5 if unsigned else -5, None))]
    if not small:
        more.append(("wide-span", (-(2**20), 2**21) if dtype != torch.int32 and dtype != torch.int16 else (-7, 9)))
    if dtype in (torch.int64, torch.float64):
        more.append(("span-past-2^32", (0, 2**40)))
    if dtype is torch.int64:
        more.append(("full-range", (-(2**63), None)))
    too_big = {torch.bool: 3, torch.uint8: 300, torch.int8: 300, torch.int16: 2**16, torch.int32: 2**32,
               torch.float16: 100000}.get(dtype)
    errors = [("from-not-less-error", (1, 1), None)]
    if too_big is not None:
        errors.append(("to-out-of-range-error", (0, too_big), None))
    if unsigned:
        errors.append(("from-out-of-range-error", (-1, 1), None))
    overload = lambda params: "random_" if not params else "random_.to" if len(params) == 1 else "random_.from"
    return InplaceDraws("random_", "integers", more=tuple(more), errors=tuple(errors), bounds=_random_bounds,
                        expects=overload)(dtype, device, quick)


def randint_samples():
    """randint's eight overloads: [0, high) and [low, high) in every dtype, int64 by default, a generator,
    the out= forms, and ranges ATen refuses."""
    return _randint_samples


def _randint_samples(dtype, device, quick):
    rows, cols = draw_shape(quick)
    low, high = (0, 2) if dtype is torch.bool else (3, 10) if dtype is torch.uint8 else (-3, 4)
    integers = lambda lo, hi: verdict_of(lambda v, args, kw, outs: integer_law(v, outs[0], lo, hi))
    empty = lambda shape: torch.empty(shape, dtype=dtype, device=device)
    factory = on_device_of(torch.randint)

    def case(variant, args, expects, draw, **kwargs):
        return Sample(variant, lambda: (empty(0), *args), kwargs, call=factory, expects=expects, random=draw)

    def out_call(*args, **kwargs):
        return torch.randint(*args[:-1], out=args[-1], **kwargs)

    cases = [
        case("low-high", (low, high, (rows, cols)), "randint.low", integers(low, high)),
        case("high", (high, (rows, cols)), "randint", integers(0, high)),
        case("odd-shape", (low, high, ODD), "randint.low", integers(low, high)),
        case("0d", (low, high, ()), "randint.low", integers(low, high)),
        case("empty", (low, high, (0, 5)), "randint.low", integers(low, high)),
        case("generator", (high, (rows, cols)), "randint.generator", integers(0, high),
             generator=generator_for(device)),
        case("low-generator", (low, high, (rows, cols)), "randint.low_generator", integers(low, high),
             generator=generator_for(device)),
        Sample("out", lambda: (high, (rows, cols), empty((2,))), call=out_call, expects="randint.out",
               random=integers(0, high)),
        Sample("low-out", lambda: (low, high, (rows, cols), empty((rows, cols))), call=out_call,
               expects="randint.low_out", random=integers(low, high)),
        Sample("generator-out", lambda: (high, ODD, empty(ODD)), {"generator": generator_for(device)}, call=out_call,
               expects="randint.generator_out", random=integers(0, high)),
        Sample("low-generator-out", lambda: (low, high, ODD, empty(ODD)), {"generator": generator_for(device)},
               call=out_call, expects="randint.low_generator_out", random=integers(low, high)),
        Sample("low-not-less-error", lambda: (empty(0), 5, 5, ODD), call=factory, expects="randint.low"),
    ]
    if dtype is torch.int64:
        cases.append(Sample("default-dtype", lambda: (empty(0), -7, 8, (rows, cols)), expects="randint.low",
                            call=on_device_of(torch.randint, dtype=False), random=integers(-7, 8)))
    if dtype in (torch.int8, torch.uint8, torch.bool, torch.float16):
        cases.append(Sample("high-out-of-range-error", lambda: (empty(0), 0, 100000, ODD), call=factory,
                            expects="randint.low"))
    return cases


def randint_like_samples():
    """randint_like's overloads: the input's layout kept or made contiguous, dtype=, a CPU scalar tensor
    high, a generator, the out= forms, and a high tensor ATen refuses."""
    return _randint_like_samples


def _randint_like_samples(dtype, device, quick):
    rows, cols = draw_shape(quick)
    low, high = (0, 2) if dtype is torch.bool else (3, 10) if dtype is torch.uint8 else (-3, 4)
    integers = lambda lo, hi: verdict_of(lambda v, args, kw, outs: integer_law(v, outs[0], lo, hi))
    empty = lambda shape: torch.empty(shape, dtype=dtype, device=device)
    aten = torch.ops.aten.randint_like

    def like(variant, make, call, expects, draw, **kwargs):
        return Sample(variant, make, kwargs, call=call, expects=expects, random=draw)

    generator = {"generator": generator_for(device)}
    cases = [
        like("high", lambda: (empty((rows, cols)), high), aten.default, "randint_like", integers(0, high)),
        like("low-high", lambda: (empty((rows, cols)), low, high), aten.low_dtype, "randint_like.low_dtype",
             integers(low, high)),
        like("odd-shape", lambda: (empty(ODD), low, high), aten.low_dtype, "randint_like.low_dtype",
             integers(low, high)),
        like("0d", lambda: (empty(()), high), aten.default, "randint_like", integers(0, high)),
        like("empty", lambda: (empty((0, 5)), high), aten.default, "randint_like", integers(0, high)),
        like("noncontiguous-transposed", lambda: (empty((cols, rows)).t(), high), aten.default, "randint_like",
             integers(0, high)),
        like("noncontiguous-strided", lambda: (empty((rows, 2 * cols))[:, ::2], high), aten.default, "randint_like",
             integers(0, high)),
        like("dtype-kwarg", lambda: (empty(ODD), 5), aten.default, "randint_like", integers(0, 5),
             dtype=torch.int32 if dtype != torch.int32 else torch.int64),
        # A high tensor is a CPU scalar: made in the call, not moved to the device with the sample.
        like("high-tensor", lambda: (empty((rows, cols)), high), lambda x, h: aten.Tensor(x, torch.tensor(h)),
             "randint_like.Tensor", integers(0, high)),
        like("generator", lambda: (empty((rows, cols)), high), aten.generator, "randint_like.generator",
             integers(0, high), **generator),
        like("high-tensor-generator", lambda: (empty(ODD), high),
             lambda x, h, **kw: aten.Tensor_generator(x, torch.tensor(h), **kw), "randint_like.Tensor_generator",
             integers(0, high), **generator),
        like("low-generator", lambda: (empty(ODD), low, high), aten.low_generator_dtype,
             "randint_like.low_generator_dtype", integers(low, high), **generator),
    ]
    outs = [("out", (high,), aten.out, "randint_like.out", {}),
            ("high-tensor-out", (high,), lambda x, h, out: aten.Tensor_out(x, torch.tensor(h), out=out),
             "randint_like.Tensor_out", {}),
            ("generator-out", (high,), aten.generator_out, "randint_like.generator_out", generator),
            ("high-tensor-generator-out", (high,),
             lambda x, h, out, **kw: aten.Tensor_generator_out(x, torch.tensor(h), out=out, **kw),
             "randint_like.Tensor_generator_out", generator),
            ("low-out", (low, high), aten.low_dtype_out, "randint_like.low_dtype_out", {}),
            ("low-generator-out", (low, high), aten.low_generator_dtype_out, "randint_like.low_generator_dtype_out",
             generator)]
    for variant, bounds, call, expects, kwargs in outs:
        law = integers(*bounds) if len(bounds) == 2 else integers(0, *bounds)
        cases.append(Sample(variant, lambda b=bounds: (empty(ODD), *b, empty((2,))), kwargs, expects=expects,
                            call=lambda *a, c=call, **kw: c(*a[:-1], out=a[-1], **kw), random=law))
    cases.append(Sample("high-tensor-shape-error", lambda: (empty(ODD), torch.tensor([high, high])), call=aten.Tensor,
                        expects="randint_like.Tensor"))
    return cases


# --------------------------------------------------------------------------- permutations


def permutation_law(verdict: Verdict, values: torch.Tensor, what: str = "randperm") -> None:
    """A permutation of 0..n-1: exactly those values; fewer than 12 fixed points (a uniform permutation
    has at least k with probability at most 1/k!, 2e-9 for 12); the mean of its first half within
    Hoeffding's bound for sampling without replacement."""
    x = values.detach().to(torch.int64).flatten()
    n = x.numel()
    verdict.require(torch.equal(x.sort().values, torch.arange(n)), f"{what}: not a permutation of 0..{n - 1}")
    if n < 2:
        return
    fixed = int((x == torch.arange(n)).sum())
    verdict.require(fixed < 12 or n < 12, f"{what}: {fixed} fixed points")
    bounded_mean(verdict, x[: n // 2].double(), (n - 1) / 2, n - 1, what + " (first half)")


def randperm_samples():
    """randperm's overloads: sizes (0, 1, odd, past a sort block), every numeric dtype, a generator, out=
    (contiguous, resized, strided), and a negative n or one the dtype cannot hold."""
    return _randperm_samples


def _randperm_samples(dtype, device, quick):
    n = 1024 if quick else 1 << 20
    permutation = verdict_of(lambda v, args, kw, outs: permutation_law(v, outs[0]))
    small = {torch.int8: 100, torch.uint8: 200, torch.float16: 2000, torch.bfloat16: 200}.get(dtype, n)
    empty = lambda size: torch.empty(size, dtype=dtype, device=device)
    factory = on_device_of(torch.randperm)

    def sized(variant, n, expects="randperm", draw=permutation, **kwargs):
        return Sample(variant, lambda: (empty(0), n), kwargs, call=factory, expects=expects, random=draw)

    def out(variant, size, make, expects, **kwargs):
        return Sample(variant, lambda: (size, make()), kwargs, call=lambda m, o, **kw: torch.randperm(m, out=o, **kw),
                      expects=expects, random=permutation)

    cases = [sized("contiguous", small), sized("odd", 97), sized("one", 1), sized("empty", 0),
             sized("generator", small, "randperm.generator", generator=generator_for(device)),
             out("out", 97, lambda: empty(97), "randperm.out"),
             out("out-resize", 50, lambda: empty(3), "randperm.out"),
             out("out-noncontiguous", 50, lambda: empty(100)[::2], "randperm.out"),
             out("generator-out", 97, lambda: empty(5), "randperm.generator_out", generator=generator_for(device)),
             sized("negative-n-error", -1, draw=None)]
    if dtype in (torch.int8, torch.uint8, torch.float16):
        cases.append(sized("n-too-large-error", 300 if dtype != torch.float16 else 3000, draw=None))
    if dtype is torch.int64:
        cases.append(Sample("default-dtype", lambda: (empty(0), n), call=on_device_of(torch.randperm, dtype=False),
                            expects="randperm", random=permutation))
    return cases


# --------------------------------------------------------------------------- dropout


def _close(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """Where got (a float result) equals want (float64) within the result dtype's rounding, NaN matching NaN."""
    from gems.testing.compare import RTOL

    g, w = got.double(), want
    tol = 2 * RTOL.get(got.dtype, 1e-7) * w.abs() + 1e-30
    return (g == w) | ((g - w).abs() <= tol) | (g.isnan() & w.isnan())


def dropout_law(verdict: Verdict, x, out, mask, p: float, what: str = "dropout") -> None:
    """native_dropout's (out, mask): mask is a Bernoulli(1 - p) draw (Hoeffding on the keep ratio); kept
    elements are x * 1 / (1 - p), dropped ones x * 0 (a signed zero, NaN for NaN), or zeros when p = 1."""
    x, kept = x.double(), mask.bool()
    bounded_mean(verdict, kept.double().flatten(), 1.0 - p, 1.0, what + " keep ratio")
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    wrong = int((~_close(out[kept], x[kept] * scale)).sum())
    verdict.require(wrong == 0, f"{what}: {wrong} kept values are not x / (1 - p)")
    got, want = out[~kept].double(), x[~kept] * 0  # x * 0: a zero of x's sign, NaN for NaN and infinities
    right = (got.isnan() & want.isnan()) | ((got == want) & (got.signbit() == want.signbit()))
    if p == 1:  # ATen's CUDA shortcut writes zeros
        right |= got == 0
    verdict.require(bool(right.all()), f"{what}: {int((~right).sum())} dropped values are not x * 0")


def dropout_samples():
    """native_dropout and its out= form: several p (0 and 1 included), train None and False, shapes and
    layouts, special values, its gradient (native_dropout_backward), and p outside [0, 1]."""
    return _dropout_samples


def _dropout_samples(dtype, device, quick):
    from gems.testing.samples import make_tensor, special_values

    rows, cols = draw_shape(quick)
    make = lambda shape: make_tensor(shape, dtype, device)

    def law(p, varies=True):
        return verdict_of(lambda v, args, kw, outs: dropout_law(v, args[0].detach(), outs[0], outs[1], p), varies)

    def case(variant, build, p, train=True, **kwargs):
        return Sample(variant, lambda: (build(), p, train), call=torch.native_dropout, expects="native_dropout",
                      random=law(p, 0 < p < 1), **kwargs)

    def grad_call(x, g, p):
        out, mask = torch.native_dropout(x, p, True)
        return out, mask, torch.autograd.grad(out, x, g)[0]

    def grad_law(v, args, kw, outs):
        dropout_law(v, args[0].detach(), outs[0], outs[1], 0.4)
        want = args[1].double() * outs[1].double() / 0.6
        v.require(bool(_close(outs[2], want).all()), "dropout: the gradient is not grad * mask / (1 - p)")

    def specials():
        values = special_values(dtype, device)
        return values.repeat(rows * cols // values.numel())

    cases = [case("contiguous", lambda: make((rows, cols)), 0.3), case("p-half", lambda: make((rows, cols)), 0.5),
             case("p-small", lambda: make((rows, cols)), 0.05), case("p-zero", lambda: make(ODD), 0.0),
             case("p-one", lambda: make(ODD), 1.0), case("train-none", lambda: make((rows, cols)), 0.3, None),
             case("odd-shape", lambda: make(ODD), 0.3), case("0d", lambda: make(()), 0.3),
             case("empty", lambda: make((0, 5)), 0.3),
             case("noncontiguous-transposed", lambda: make((cols, rows)).t(), 0.3),
             case("noncontiguous-strided", lambda: make((rows, 2 * cols))[:, ::2], 0.3),
             case("special-values", specials, 0.5),
             Sample("eval", lambda: (make((rows, cols)), 0.3, False), call=torch.native_dropout,
                    expects="native_dropout"),
             Sample("out", lambda: (make((rows, cols)), torch.empty(2, dtype=dtype, device=device),
                                    torch.empty(2, dtype=torch.bool, device=device)),
                    call=lambda x, o0, o1: torch.ops.aten.native_dropout.out(x, 0.3, True, out0=o0, out1=o1),
                    expects="native_dropout.out", random=law(0.3)),
             Sample("grad", lambda: (make((rows, cols)).requires_grad_(), make((rows, cols)), 0.4), call=grad_call,
                    expects=("native_dropout", "native_dropout_backward"), random=verdict_of(grad_law))]
    cases += [Sample(variant, lambda p=p: (make(ODD), p, True), call=torch.native_dropout, expects="native_dropout")
              for variant, p in (("p-above-one-error", 1.5), ("p-negative-error", -0.5),
                                 ("p-nan-error", float("nan")))]
    return cases


def dropout_backward_samples():
    """native_dropout_backward (deterministic: compared with the float64 oracle): masks with the grad's
    layout, special values in the grad, scale 0 (p = 1), out=."""
    return _dropout_backward_samples


def _dropout_backward_samples(dtype, device, quick):
    from gems.testing.samples import make_tensor, shape_for, special_values

    shape = shape_for(quick)
    rows, cols = shape
    grad = lambda s: make_tensor(s, dtype, device)
    mask = lambda s: torch.rand(s) < 0.6
    call = torch.ops.aten.native_dropout_backward

    def case(variant, build, **kwargs):
        return Sample(variant, build, call=call, expects="native_dropout_backward", **kwargs)

    return [case("contiguous", lambda: (grad(shape), mask(shape).to(device), 2.5)),
            case("noncontiguous-transposed", lambda: (grad((cols, rows)).t(), mask((cols, rows)).to(device).t(),
                                                      1 / 0.7)),
            case("noncontiguous-strided", lambda: (grad((rows, 2 * cols))[:, ::2], mask(shape).to(device), 1.25)),
            case("0d", lambda: (grad(()), torch.tensor(True, device=device), 2.0)),
            case("empty", lambda: (grad((0, cols)), mask((0, cols)).to(device), 2.0)),
            case("special-values", lambda: (special_values(dtype, device), mask((16,)).to(device), 1 / 0.9)),
            case("scale-zero", lambda: (grad(shape), mask(shape).to(device), 0.0)),
            Sample("out", lambda: (grad(shape), mask(shape).to(device), 1.5,
                                   torch.empty(2, dtype=dtype, device=device)),
                   call=lambda g, m, s, o: call(g, m, s, out=o), expects="native_dropout_backward.out")]


# --------------------------------------------------------------------------- rrelu


def rrelu_law(verdict: Verdict, x, out, noise, lower: float, upper: float, what: str = "rrelu") -> None:
    """rrelu_with_noise in training: where x <= 0 the noise is a U[lower, upper) draw and out = x * noise;
    elsewhere (NaN too) the noise is 1 and out = x."""
    x = x.double()
    negative = x <= 0
    uniform_law(verdict, noise[negative], lower, upper, what + " slopes", reversed_bound=False)
    wrong = int((~_close(out[negative], x[negative] * noise[negative].double())).sum())
    verdict.require(wrong == 0, f"{what}: {wrong} results of x <= 0 are not x * noise")
    rest_out, rest_x = out[~negative].double(), x[~negative]
    same = ((rest_out == rest_x) | (rest_out.isnan() & rest_x.isnan())).all() and (noise[~negative] == 1).all()
    verdict.require(bool(same), f"{what}: elements above 0 (or NaN) changed, or their noise is not 1")


def rrelu_samples():
    """rrelu_with_noise: training (random: slopes and results judged together), its out= and in-place
    forms, its gradient (rrelu_with_noise_backward), evaluation (the leaky ReLU, compared with the oracle),
    and noise of another shape or dtype and integer inputs, which ATen refuses."""
    return _rrelu_samples


def _rrelu_samples(dtype, device, quick):
    from gems.testing.samples import make_tensor, special_values

    rows, cols = draw_shape(quick)
    aten = torch.ops.aten
    make = lambda shape: make_tensor(shape, dtype, device)
    noise = lambda shape: torch.empty(shape, dtype=dtype, device=device)
    low, high = 0.1, 0.3

    def law(lower=low, upper=high):
        return verdict_of(lambda v, args, kw, outs: rrelu_law(v, args[0], outs[0], outs[1], lower, upper))

    def train(variant, build, lower=low, upper=high, **kwargs):
        return Sample(variant, lambda: (build(),), kwargs, expects="rrelu_with_noise", random=law(lower, upper),
                      call=lambda x, **kw: _with_noise(aten.rrelu_with_noise, x, lower, upper, **kw))

    def grad_call(x, g):
        slopes = torch.empty_like(x, memory_format=torch.contiguous_format).detach()
        y = aten.rrelu_with_noise(x, slopes, low, high, True)
        return y, slopes, torch.autograd.grad(y, x, g)[0]

    def grad_law(v, args, kw, outs):
        rrelu_law(v, args[0].detach(), outs[0], outs[1], low, high)
        v.require(bool(_close(outs[2], args[1].double() * outs[1].double()).all()),
                  "rrelu: the gradient is not grad * noise")

    def specials():
        values = special_values(dtype, device)
        return values.repeat(rows * cols // values.numel())

    cases = [train("contiguous", lambda: make((rows, cols))), train("default-bounds", lambda: make((rows, cols)),
                                                                  0.125, 1 / 3),
             train("odd-shape", lambda: make(ODD)), train("0d", lambda: make(())), train("empty", lambda: make((0, 5))),
             train("noncontiguous-transposed", lambda: make((cols, rows)).t()),
             train("special-values", specials),
             train("generator", lambda: make((rows, cols)), generator=generator_for(device)),
             Sample("out", lambda: (make((rows, cols)), noise((rows, cols)), noise((rows, cols))),
                    expects="rrelu_with_noise.out", random=law(),  # ATen's CPU kernel crashes on an out to resize
                    call=lambda x, n, o: (aten.rrelu_with_noise.out(x, n, low, high, True, out=o), n)),
             Sample("inplace", lambda: (make((rows, cols)), noise((rows, cols))), expects="rrelu_with_noise_",
                    call=lambda x, n: (aten.rrelu_with_noise_(x, n, low, high, True), n),
                    random=verdict_of(lambda v, args, kw, outs: rrelu_law(v, args[0], outs[0], outs[1], low, high))),
             Sample("grad", lambda: (make((rows, cols)).requires_grad_(), make((rows, cols))), call=grad_call,
                    expects=("rrelu_with_noise", "rrelu_with_noise_backward"), random=verdict_of(grad_law)),
             Sample("eval", lambda: (make(ODD), noise(ODD), low, high, False), call=aten.rrelu_with_noise,
                    expects="rrelu_with_noise"),
             Sample("eval-inplace", lambda: (make(ODD), noise(ODD), low, high, False), call=aten.rrelu_with_noise_,
                    expects="rrelu_with_noise_"),
             Sample("noise-shape-error", lambda: (make(ODD), noise((3,)), low, high, True), call=aten.rrelu_with_noise,
                    expects="rrelu_with_noise")]
    if dtype == torch.float32:
        cases += [Sample("noise-dtype-error", lambda: (make(ODD), torch.empty(ODD, dtype=torch.float64, device=device),
                                                       low, high, True), call=aten.rrelu_with_noise,
                         expects="rrelu_with_noise"),
                  Sample("integer-error", lambda: (torch.ones(ODD, dtype=torch.int64, device=device),
                                                   torch.empty(ODD, dtype=torch.int64, device=device), low, high, True),
                         call=aten.rrelu_with_noise, expects="rrelu_with_noise")]
    return cases


def _with_noise(op, x, lower, upper, **kwargs):
    """(op(x, noise, lower, upper, True), noise) for a fresh noise tensor."""
    slopes = torch.empty_like(x, memory_format=torch.contiguous_format)
    return op(x, slopes, lower, upper, True, **kwargs), slopes


def rrelu_backward_samples():
    """rrelu_with_noise_backward (deterministic: compared with the float64 oracle): training (grad * noise)
    and the leaky ReLU's backward (evaluation, or upper - lower too small), self_is_result, out=, and a
    negative slope on an in-place result, which ATen refuses."""
    return _rrelu_backward_samples


def _rrelu_backward_samples(dtype, device, quick):
    from gems.testing.samples import make_tensor, shape_for, special_values

    shape = shape_for(quick)
    rows, cols = shape
    call = torch.ops.aten.rrelu_with_noise_backward
    make = lambda s: make_tensor(s, dtype, device)
    slopes = lambda s: (torch.rand(s, dtype=torch.float64) * 0.2 + 0.1).to(dtype).to(device)

    def case(variant, build, tail, **kwargs):
        return Sample(variant, lambda: (*build(), *tail), call=call, expects="rrelu_with_noise_backward", **kwargs)

    train, evaluate = (0.1, 0.3, True, False), (0.1, 0.3, False, False)
    return [case("training", lambda: (make(shape), make(shape), slopes(shape)), train),
            case("training-transposed", lambda: (make((cols, rows)).t(), make(shape), slopes((cols, rows)).t()), train),
            case("eval", lambda: (make(shape), make(shape), slopes(shape)), evaluate),
            case("eval-special-values", lambda: (special_values(dtype, device), special_values(dtype, device).flip(0),
                                                 slopes((16,))), evaluate),
            case("narrow-bounds", lambda: (make(shape), make(shape), slopes(shape)), (0.2, 0.2, True, False)),
            case("self-is-result", lambda: (make(shape), make(shape), slopes(shape)), (0.1, 0.3, False, True)),
            case("0d", lambda: (make(()), make(()), slopes(())), train),
            case("empty", lambda: (make((0, cols)), make((0, cols)), slopes((0, cols))), train),
            Sample("out", lambda: (make(shape), make(shape), slopes(shape), torch.empty(2, dtype=dtype, device=device)),
                   call=lambda g, x, n, o: call(g, x, n, 0.1, 0.3, True, False, out=o),
                   expects="rrelu_with_noise_backward.out"),
            case("negative-slope-in-place-error", lambda: (make(shape), make(shape), slopes(shape)),
                 (-0.5, -0.1, False, True))]


# --------------------------------------------------------------------------- multinomial


def multinomial_law(verdict: Verdict, weights, out, replacement: bool, what: str = "multinomial") -> None:
    """Every index a category of its row with positive weight (while any is left); without replacement
    no index twice in a row; with replacement every draw, else each row's first draw, has the weights'
    frequencies (rows of one weight vector; per category, Hoeffding)."""
    w = weights.double()
    rows = w if w.dim() == 2 else w.unsqueeze(0)
    drawn = (out if out.dim() == 2 else out.unsqueeze(0)).to(torch.int64)
    if drawn.numel() == 0:
        return
    k = rows.shape[1]
    verdict.require(bool(((drawn >= 0) & (drawn < k)).all()), f"{what}: indices outside [0, {k})")
    if not bool(((drawn >= 0) & (drawn < k)).all()):
        return
    positive = (rows > 0).sum(1, keepdim=True)
    chosen = rows.gather(1, drawn) > 0
    allowed = chosen | (torch.arange(drawn.shape[1]) >= positive)  # zeros only once the positive ones are used
    verdict.require(bool(allowed.all()), f"{what}: {int((~allowed).sum())} draws of a category of weight 0")
    if not replacement:
        distinct = drawn.sort(1).values.diff(dim=1).ne(0).all() if drawn.shape[1] > 1 else True
        verdict.require(bool(distinct), f"{what}: an index drawn twice in a row without replacement")
    if bool((rows == rows[:1]).all()):
        probs = rows[0] / rows[0].sum()
        frequencies(verdict, drawn if replacement else drawn[:, 0], probs, what)


def multinomial_samples():
    """multinomial: with and without replacement, one sample, weights with zeros, rows longer than a
    block, transposed weights, 1-D and 2-D, a generator, out=, and the weights and counts ATen refuses."""
    return _multinomial_samples


def _multinomial_samples(dtype, device, quick):
    draws = 1024 if quick else 1 << 20
    rows = 512 if quick else 1 << 16
    base = torch.tensor([0.5, 2.0, 0.0, 1.0, 3.0, 0.25, 1.25, 0.0], dtype=torch.float64)
    weights = lambda r=None: (base if r is None else base.repeat(r, 1)).to(dtype).to(device)
    law = lambda replacement: verdict_of(lambda v, args, kw, outs: multinomial_law(v, args[0], outs[0], replacement))

    def case(variant, build, n, replacement, **kwargs):
        return Sample(variant, lambda: (build(), n, replacement), kwargs, call=torch.multinomial,
                      expects="multinomial", random=law(replacement))

    def bad(values):
        w = base.to(dtype).clone()
        w[3] = values
        return w.to(device)

    cases = [case("replacement", weights, draws, True),
             case("replacement-2d", lambda: weights(4), draws // 4, True),
             case("no-replacement", lambda: weights(rows), 3, False),
             case("no-replacement-all", lambda: weights(rows // 4)[:, [0, 1, 3, 4, 5, 6]].contiguous(), 6, False),
             case("one-sample", lambda: weights(rows), 1, True),
             case("odd-shape", lambda: torch.rand(ODD, dtype=dtype, device=device), 5, False),
             case("long-rows", lambda: torch.rand((3, 1500), dtype=dtype, device=device), 2, False),
             case("long-rows-replacement", lambda: torch.rand((2, 1500), dtype=dtype, device=device), 20, True),
             case("noncontiguous-transposed", lambda: weights(rows).t().contiguous().t(), 2, False),
             case("empty", lambda: torch.rand((0, 5), dtype=dtype, device=device), 2, False),
             case("generator", lambda: weights(rows), 1, False, generator=generator_for(device)),
             Sample("out", lambda: (weights(4), draws // 4, torch.empty(3, dtype=torch.int64, device=device)),
                    call=lambda w, n, o: torch.multinomial(w, n, True, out=o), expects="multinomial.out",
                    random=law(True))]
    errors = [("negative-error", lambda: (bad(-1.0), 2, False)), ("nan-error", lambda: (bad(float("nan")), 2, False)),
              ("inf-error", lambda: (bad(float("inf")), 2, False)),
              ("zero-row-error", lambda: (torch.zeros((3, 4), dtype=dtype, device=device), 1, False)),
              ("replacement-negative-error", lambda: (bad(-1.0), 5, True)),
              ("replacement-nan-error", lambda: (bad(float("nan")), 5, True)),
              ("replacement-zero-row-error", lambda: (torch.zeros((3, 4), dtype=dtype, device=device), 5, True)),
              ("too-many-samples-error", lambda: (weights(), 9, False)),
              ("zero-samples-error", lambda: (weights(), 0, True)),
              ("three-dim-error", lambda: (torch.ones((2, 2, 2), dtype=dtype, device=device), 1, False))]
    if dtype == torch.float32:
        errors.append(("integer-error", lambda: (torch.ones(4, dtype=torch.int64, device=device), 1, False)))
    return cases + [Sample(v, build, call=torch.multinomial, expects="multinomial") for v, build in errors]


# --------------------------------------------------------------------------- perf

# gems-perf judges a perf case's draws on its first values only: a prefix of independent draws is a
# sample of the law too, and sorting 64M values on the CPU would take longer than the timing.
PERF_JUDGED = 1 << 20


def draws_perf(kind: str, shapes: str = "random"):
    """The PerfSpec of a random operator at a flat shape: the call, its statistical verdict (on the first
    PERF_JUDGED values) and the bytes it moves (what it writes, and reads: dropout's input, bernoulli's
    probabilities)."""
    from gems.spec import PerfSpec
    from gems.testing.perf_inputs import tensor_bytes
    from gems.testing.samples import make_tensor

    head = lambda t: t.flatten()[:PERF_JUDGED]
    inplace = {"uniform_": ("uniform", ()), "normal_": ("normal", ()), "exponential_": ("exponential", ()),
               "bernoulli_": ("bernoulli", (0.5,))}

    def inputs(shape, dtype, device):
        size = tuple(shape)
        if kind in inplace:
            law = law_of(*inplace[kind])
            return Sample("perf", (torch.empty(size, dtype=dtype, device=device),),
                          call=lambda x: getattr(x, kind)(*inplace[kind][1]),
                          random=verdict_of(lambda v, args, kw, outs: law(v, head(outs[0]))))
        if kind in ("rand", "randn"):
            law = law_of("uniform" if kind == "rand" else "normal", ())
            return Sample("perf", (size,), {"dtype": dtype, "device": device}, call=getattr(torch, kind),
                          random=verdict_of(lambda v, args, kw, outs: law(v, head(outs[0]))))
        if kind in ("random_", "randint"):
            call = (lambda x: x.random_(0, 100)) if kind == "random_" else (
                lambda x: torch.randint(0, 100, x.shape, dtype=x.dtype, device=x.device))
            return Sample("perf", (torch.empty(size, dtype=dtype, device=device),), call=call,
                          random=verdict_of(lambda v, args, kw, outs: integer_law(v, head(outs[0]), 0, 100)))
        if kind == "bernoulli":  # the probabilities are the input's values
            return Sample("perf", (make_tensor(size, dtype, device, low=0.0, high=1.0),), call=torch.bernoulli,
                          random=verdict_of(lambda v, args, kw, outs: bernoulli_law(v, head(outs[0]), head(args[0]))))
        if kind == "native_dropout":
            return Sample("perf", (make_tensor(size, dtype, device), 0.5, True), call=torch.native_dropout,
                          random=verdict_of(lambda v, args, kw, outs: dropout_law(
                              v, head(args[0]), head(outs[0]), head(outs[1]), 0.5)))
        raise ValueError(f"no perf inputs for {kind!r}")

    def bytes_moved(sample, result):
        written = result if isinstance(result, tuple) else (result,)
        read = sample.args[:1] if kind in ("native_dropout", "bernoulli") else ()
        return tensor_bytes(*read, *written)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
