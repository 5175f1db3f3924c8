"""Sample generators of the random operators that draw integers: random_, randint (and its _like form), randperm
and multinomial."""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.draws import (
    Verdict,
    bounded_mean,
    frequencies,
    integer_law,
)
from gems.testing.samples_random_common import (
    ODD,
    draw_shape,
    generator_for,
    on_device_of,
    verdict_of,
)
from gems.testing.samples_random_tensors import InplaceDraws

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
