"""Samples of the window poolings: avg_pool2d and max_pool2d_with_indices, their backwards (through autograd
and called directly) and max_pool2d_backward."""

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

_WINDOW_ARGS = {"avg_pool2d": ((3, 3), (2, 2), (1, 1)), "max_pool2d_with_indices": ((3, 3), (2, 2), (1, 1))}


def window_samples(op):
    """avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor) or max_pool2d_with_indices(x,
    kernel, stride, padding, dilation, ceil_mode)."""
    is_max = op.startswith("max")
    base = _WINDOW_ARGS[op]
    fn = getattr(ATEN, op)

    def samples(dtype, device, quick):
        make = maker(dtype, device)
        size = 9

        def case(variant, build, args=base, **kw):
            return Sample(variant, lambda: (build(), *args), reduction_size=1 if is_max else size, **kw)

        def out_call(x, *args):
            if is_max:
                return fn.out(x, *args, out=empty(x.dtype, x.device), indices=empty(torch.int64, x.device))
            return fn.out(x, *args, out=empty(x.dtype, x.device))

        core = [
            case("basic", lambda: make(IMAGE)),
            case("channels-last", lambda: make(IMAGE, layout=torch.channels_last)),
            case("out", lambda: make(IMAGE), expects=f"{op}.out", call=out_call),
            case("special-values", lambda: specials(IMAGE, dtype, device)),
        ]

        def extra():
            cases = [
                case("noncontiguous", lambda: noncontiguous(make, IMAGE)),
                case("unbatched", lambda: make(IMAGE[1:])),
                case("empty-batch", lambda: make((0, *IMAGE[1:]))),
                case("kernel-rect", lambda: make(IMAGE), ((2, 3), (1, 2), (1, 0))),
                case("default-stride", lambda: make(IMAGE), ((2, 2), (), (0, 0))),
                case("large-window", lambda: make((1, 2, 9, 11)), ((9, 11), (1, 1), (0, 0))),  # looped, not unrolled
                case("channels-last-odd", lambda: make((2, 5, 7, 6), layout=torch.channels_last), ((2, 2), (2, 2),
                                                                                                      (0, 0))),
                case("error-kernel-zero", lambda: make(IMAGE), ((0, 2), (1, 1), (0, 0))),
                case("error-kernel-length", lambda: make(IMAGE), ((1, 2, 3), (1, 1), (0, 0))),
                case("error-stride-negative", lambda: make(IMAGE), ((2, 2), (-1, 1), (0, 0))),
                case("error-stride-zero", lambda: make(IMAGE), ((2, 2), (0, 1), (0, 0))),
                case("error-stride-length", lambda: make(IMAGE), ((2, 2), (1, 1, 1), (0, 0))),
                case("error-pad-negative", lambda: make(IMAGE), ((2, 2), (1, 1), (-1, 0))),
                case("error-pad-too-large", lambda: make(IMAGE), ((2, 2), (1, 1), (2, 0))),
                case("error-output-too-small", lambda: make(IMAGE), ((10, 10), (1, 1), (0, 0))),
                case("error-2d-input", lambda: make(IMAGE[2:])),
                case("error-5d-input", lambda: make((1, *IMAGE))),
                case("error-empty-channels", lambda: make((2, 0, 9, 11))),
                case("error-bool-input", lambda: make(IMAGE, torch.bool)),
            ]
            if is_max:
                return cases + [
                    case("dilation", lambda: make(IMAGE), (*base, (2, 1), False)),
                    case("ceil-mode", lambda: make(IMAGE), ((2, 2), (2, 2), (0, 0), (1, 1), True)),
                    case("functional", lambda: make(IMAGE), ((3, 3), (2, 2), (1, 1)), call=F.max_pool2d,
                         kwargs={"return_indices": True}),
                    case("error-dilation-zero", lambda: make(IMAGE), (*base, (0, 1), False)),
                    # no padding: the output size passes, pool2d_shape_check refuses the dilation
                    case("error-dilation-zero-unpadded", lambda: make(IMAGE), ((3, 3), (2, 2), (0, 0), (0, 1), False)),
                    case("error-dilation-negative", lambda: make(IMAGE), ((3, 3), (2, 2), (0, 0), (1, -1), False)),
                    # within half the dilated window, past half the kernel
                    case("error-pad-over-half-kernel", lambda: make(IMAGE), ((2, 2), (1, 1), (2, 2), (5, 5), False)),
                    # a padded last window starting in the right padding: dropped
                    case("ceil-mode-padded", lambda: make(IMAGE), ((2, 2), (2, 2), (1, 1), (1, 1), True)),
                    case("error-dilation-length", lambda: make(IMAGE), (*base, (1, 1, 1), False)),
                ]
            return cases + [
                case("ceil-mode", lambda: make(IMAGE), ((2, 2), (2, 2), (0, 0), True)),
                case("ceil-mode-exclude-pad", lambda: make(IMAGE), ((3, 3), (2, 2), (1, 1), True, False)),
                case("ceil-mode-padded", lambda: make(IMAGE), ((2, 2), (2, 2), (1, 1), True)),
                case("divisor-override", lambda: make(IMAGE), (*base, False, True, 5)),
                case("divisor-negative", lambda: make(IMAGE), (*base, False, True, -3)),
                case("functional", lambda: make(IMAGE), ((3, 3), (2, 2), (1, 1)), call=F.avg_pool2d),
                case("error-divisor-zero", lambda: make(IMAGE), (*base, False, True, 0)),
            ]

        return with_extra(dtype, quick, core, extra)

    return samples


def _pool_call(op):
    """The functional call whose gradient is op's backward (max: the values of max_pool2d_with_indices)."""
    if op == "avg_pool2d":
        return lambda x, *a: F.avg_pool2d(x, *a)
    return lambda x, *a: ATEN.max_pool2d_with_indices(x, *a)[0]


def window_backward_samples(op):
    """avg_pool2d_backward / max_pool2d_with_indices_backward: through autograd and called directly."""
    is_max = op.startswith("max")
    forward = getattr(ATEN, op)
    backward = getattr(ATEN, f"{op}_backward")
    k, s, p = _WINDOW_ARGS[op]
    tail = ((1, 1), False) if is_max else (False, True, None)  # dilation, ceil_mode / ceil_mode, pad, divisor

    def samples(dtype, device, quick):
        make = maker(dtype, device)
        both = (op, f"{op}_backward")

        def grad(variant, shape, args=(k, s, p), layout=None):
            return Sample(variant, lambda: (make(shape, grad=True, layout=layout), *args), call=_pool_call(op),
                          expects=both, grad=True)

        def direct(variant, shape, args=(k, s, p, *tail), layout=None, grad_layout=None, out=False):
            def build():
                x = make(shape, layout=layout)
                y = forward(x, *args)
                g = make((y[0] if is_max else y).shape, layout=grad_layout or layout)
                if is_max:  # (grad, x, kernel, stride, padding, dilation, ceil_mode, indices)
                    return (g, x, *args, y[1])
                return (g, x, *args)

            call = (lambda *a: backward.grad_input(*a, grad_input=empty(a[0].dtype, a[0].device))) if out else None
            return Sample(variant, build, call=call, expects=f"{op}_backward" + (".grad_input" if out else ""),
                          reduction_size=4)

        core = [grad("grad", IMAGE), direct("channels-last", IMAGE, layout=torch.channels_last)]

        def extra():
            return [
                direct("direct", IMAGE),
                direct("grad-input", IMAGE, out=True),
                grad("grad-channels-last", IMAGE, layout=torch.channels_last),
                grad("grad-unbatched", IMAGE[1:]),
                grad("grad-kernel-rect", IMAGE, ((2, 3), (1, 2), (1, 0))),
                grad("grad-overlapping", IMAGE, ((3, 3), (1, 1), (1, 1))),
                grad("grad-ceil-mode", IMAGE, ((2, 2), (2, 2), (0, 0), *(((1, 1), True) if is_max else (True,)))),
                direct("noncontiguous-grad", IMAGE, grad_layout=torch.channels_last),
                direct("empty-batch", (0, *IMAGE[1:])),
                grad("grad-large-window", (1, 2, 9, 11), ((9, 11), (1, 1), (0, 0))),  # looped, not unrolled
                Sample("error-grad-shape", lambda: (make((2, 3, 4, 4)), make(IMAGE), k, s, p, *tail,
                                                    *((torch.zeros(2, 3, 4, 4, dtype=torch.int64,
                                                                   device=device),) if is_max else ())),
                       call=backward.default),
            ] + ([
                grad("grad-dilation", IMAGE, (k, s, p, (2, 1))),
                Sample("error-indices-dtype", lambda: (make((2, 3, 5, 6)), make(IMAGE), k, s, p, *tail,
                                                       torch.zeros(2, 3, 5, 6, dtype=torch.int32, device=device)),
                       call=backward.default),
            ] if is_max else [grad("grad-divisor", IMAGE, (k, s, p, False, False, 4))])

        return with_extra(dtype, quick, core, extra, QUICK_EVERY_DTYPE_BACKWARD)

    return samples


def max_pool2d_backward_samples():
    """max_pool2d_backward(grad, x, kernel, stride, padding[, dilation, ceil_mode]), called directly."""

    def samples(dtype, device, quick):
        make = maker(dtype, device)
        k, s, p = _WINDOW_ARGS["max_pool2d_with_indices"]

        def direct(variant, shape, args=(k, s, p), layout=None, **kw):
            def build():
                x = make(shape, layout=layout)
                y = ATEN.max_pool2d_with_indices(x, *args)[0]
                return (make(y.shape, layout=layout), x, *args)

            return Sample(variant, build, reduction_size=4, **kw)

        out = ATEN.max_pool2d_backward.out
        core = [direct("direct", IMAGE), direct("channels-last", IMAGE, layout=torch.channels_last),
                direct("out", IMAGE, expects="max_pool2d_backward.out",
                       call=lambda g, x, *a: out(g, x, *a, out=empty(g.dtype, g.device)))]

        def extra():
            return [
                direct("dilation-ceil-mode", IMAGE, (k, s, p, (2, 1), True)),
                direct("unbatched", IMAGE[1:]),
                direct("empty-batch", (0, *IMAGE[1:])),
                Sample("error-grad-shape", lambda: (make((2, 3, 4, 4)), make(IMAGE), k, s, p)),
            ]

        return with_extra(dtype, quick, core, extra)

    return samples
