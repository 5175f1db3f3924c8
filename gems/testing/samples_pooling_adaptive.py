"""Samples of the adaptive poolings: _adaptive_avg_pool2d (adaptive_avg_pool2d.out too) and
adaptive_max_pool2d, and their backwards."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from gems.spec import Sample
from gems.testing.samples_pooling_common import (
    ATEN,
    IMAGE,
    QUICK_EVERY_DTYPE_BACKWARD,
    empty,
    maker,
    noncontiguous,
    specials,
    with_extra,
)


def adaptive_samples(op):
    """_adaptive_avg_pool2d (adaptive_avg_pool2d.out too) or adaptive_max_pool2d, of output_size."""
    is_max = op.startswith("adaptive_max")
    fn = ATEN.adaptive_max_pool2d if is_max else ATEN._adaptive_avg_pool2d

    def samples(dtype, device, quick):
        make = maker(dtype, device)

        def case(variant, build, size=(4, 5), **kw):
            return Sample(variant, lambda: (build(), size), reduction_size=16, **kw)

        def out_call(x, size):
            if is_max:
                return fn.out(x, size, out=empty(x.dtype, x.device), indices=empty(torch.int64, x.device))
            return fn.out(x, size, out=empty(x.dtype, x.device))

        core = [
            case("basic", lambda: make(IMAGE)),
            case("channels-last", lambda: make(IMAGE, layout=torch.channels_last)),
            case("out", lambda: make(IMAGE), expects=f"{fn.__name__.split('.')[0]}.out", call=out_call),
        ]
        core.append(case("special-values", lambda: specials(IMAGE, dtype, device)))

        def extra():
            cases = [
                case("global", lambda: make(IMAGE), (1, 1)),
                case("noncontiguous", lambda: noncontiguous(make, IMAGE)),
                case("larger-than-input", lambda: make(IMAGE), (13, 17)),
                case("unbatched", lambda: make(IMAGE[1:])),
                case("empty-batch", lambda: make((0, *IMAGE[1:]))),
                case("zero-output", lambda: make(IMAGE), (0, 3)),
                case("long-window-channels-last", lambda: make((1, 3, 40, 40), layout=torch.channels_last), (1, 1)),
                case("channels-last-global", lambda: make(IMAGE, layout=torch.channels_last), (1, 1)),
                case("error-output-size-length", lambda: make(IMAGE), (3,)),
                case("error-1d-output", lambda: make(IMAGE[2:])),
                case("error-empty-height", lambda: make((2, 3, 0, 11))),
                case("error-int-input", lambda: make(IMAGE, torch.int64)),
            ]
            if is_max:
                return cases + [
                    case("functional", lambda: make(IMAGE), call=F.adaptive_max_pool2d,
                         kwargs={"return_indices": True}),
                    case("error-empty-channels", lambda: make((2, 0, 9, 11))),
                ]
            return cases + [
                case("functional", lambda: make(IMAGE), call=F.adaptive_avg_pool2d),
                case("functional-global", lambda: make(IMAGE), (1, 1), call=F.adaptive_avg_pool2d, expects="mean.dim"),
                case("aten-out", lambda: make(IMAGE), expects="adaptive_avg_pool2d.out",
                     call=lambda x, size: ATEN.adaptive_avg_pool2d.out(x, size, out=empty(x.dtype, x.device))),
                case("empty-channels", lambda: make((2, 0, 9, 11))),
            ]

        return with_extra(dtype, quick, core, extra)

    return samples


def adaptive_backward_samples(op):
    """_adaptive_avg_pool2d_backward(grad, x) or adaptive_max_pool2d_backward(grad, x, indices)."""
    is_max = op.startswith("adaptive_max")
    forward = ATEN.adaptive_max_pool2d if is_max else ATEN._adaptive_avg_pool2d
    backward = ATEN.adaptive_max_pool2d_backward if is_max else ATEN._adaptive_avg_pool2d_backward
    name = "adaptive_max_pool2d_backward" if is_max else "_adaptive_avg_pool2d_backward"
    forward_name = "adaptive_max_pool2d" if is_max else "_adaptive_avg_pool2d"

    def samples(dtype, device, quick):
        make = maker(dtype, device)

        def grad(variant, shape, size=(4, 5), layout=None):
            call = (lambda x, s: ATEN.adaptive_max_pool2d(x, s)[0]) if is_max else ATEN._adaptive_avg_pool2d
            return Sample(variant, lambda: (make(shape, grad=True, layout=layout), size), call=call, grad=True,
                          expects=(forward_name, name))

        def direct(variant, shape, size=(4, 5), layout=None, out=False):
            def build():
                x = make(shape, layout=layout)
                y = forward(x, size)
                g = make((y[0] if is_max else y).shape, layout=layout)
                return (g, x, y[1]) if is_max else (g, x)

            overload = ".grad_input" if is_max else ".out"
            call = None
            if out:
                kw = "grad_input" if is_max else "out"
                call = lambda *a: getattr(backward, overload[1:])(*a, **{kw: empty(a[0].dtype, a[0].device)})  # noqa: E731
            return Sample(variant, build, call=call, expects=name + (overload if out else ""), reduction_size=4)

        core = [grad("grad", IMAGE), direct("channels-last", IMAGE, layout=torch.channels_last)]

        def extra():
            return [
                grad("grad-global", IMAGE, (1, 1)),
                direct("direct", IMAGE),
                direct("out", IMAGE, out=True),
                grad("grad-channels-last", IMAGE, layout=torch.channels_last),
                grad("grad-larger-than-input", IMAGE, (13, 17)),
                grad("grad-unbatched", IMAGE[1:], (2, 7)),
                direct("empty-batch", (0, *IMAGE[1:])),
                Sample("error-grad-rank", lambda: (make((3, 4, 5)), make(IMAGE),
                                                   *((torch.zeros(3, 4, 5, dtype=torch.int64, device=device),)
                                                     if is_max else ())), call=backward.default),
            ]

        return with_extra(dtype, quick, core, extra, QUICK_EVERY_DTYPE_BACKWARD)

    return samples
