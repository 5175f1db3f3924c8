"""Sample generators of the random operators of neural networks: native_dropout (and its backward) and
rrelu_with_noise (and its backward)."""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.draws import (
    Verdict,
    bounded_mean,
    uniform_law,
)
from gems.testing.samples_random_common import (
    ODD,
    draw_shape,
    generator_for,
    verdict_of,
)

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
