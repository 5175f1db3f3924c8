"""Samples and perf inputs of the pooling family (gems/ops/pooling/): window and adaptive pooling, the upsampling
operators, forward and backward, and the 1-d / functional composites that reach them.

Every dtype runs the core variants (a typical window or scale, a non-contiguous and a channels-last input, out=,
special values or the gradient; in quick mode only those of _QUICK_EVERY_DTYPE*); FULL_DTYPE runs the rest too
(unbatched and empty inputs, ceil_mode, padding and divisor options, dilation, align_corners and scale factors, the
functional entry points, ATen's errors), which keeps the family's quick suite cheap on the interpreter. Shapes are
small and odd (9 x 11 planes) so that masks run and few programs are interpreted. Quick mode also leaves out the
upsampling cases whose loops cost the interpreter most and whose paths other cases reach: the anti-aliased whole-
plane window (output 1) and the backwards' downscale, align_corners and channels-last gradients through autograd
(direct calls instead).
"""

from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, special_values

FULL_DTYPE = torch.float32
IMAGE = (2, 3, 9, 11)  # (N, C, H, W) of the window and adaptive pooling samples
_ATEN = torch.ops.aten
# The core variants every dtype runs in quick mode (each dtype's arithmetic, special values and gradient); the
# layouts and out= forms run on FULL_DTYPE there (they are index math, the same for every dtype).
_QUICK_EVERY_DTYPE = ("basic", "special-values", "upscale", "grad", "direct")
# A backward's: its direct call (the kernel under test; through autograd, the forward's kernel runs too).
_QUICK_EVERY_DTYPE_BACKWARD = ("direct", "channels-last")


def _maker(dtype, device):
    def make(shape, d=dtype, grad=False, layout=None):
        t = make_tensor(shape, d, device)
        if layout is not None:
            t = t.contiguous(memory_format=layout)
        return t.requires_grad_() if grad else t

    return make


def _specials(shape, dtype, device, all_kinds=True):
    """Random values with NaN, +-Inf and -0.0 (or NaN only) sprinkled in (about one element in five)."""
    t = make_tensor(shape, dtype, device)
    values = special_values(dtype, device)[:5 if all_kinds else 1]
    picks = torch.randint(0, 5 * values.numel(), shape)
    hit = picks < values.numel()
    return torch.where(hit.to(device), values[picks.clamp(max=values.numel() - 1)].to(device), t)


def _noncontiguous(make, shape):
    """shape with reversed strides (neither contiguous nor channels-last)."""
    return make(shape[::-1]).permute(*range(len(shape) - 1, -1, -1))


def _empty(d, device):
    return torch.empty(0, dtype=d, device=device)


def _with_extra(dtype, quick, core, extra, every=None):
    """FULL_DTYPE's samples: the core and the extra ones; the other dtypes': the core, in quick mode only its
    variants in ``every`` (default _QUICK_EVERY_DTYPE)."""
    if dtype == FULL_DTYPE:
        return core + extra()
    return [s for s in core if s.variant in (every or _QUICK_EVERY_DTYPE)] if quick else core


# --------------------------------------------------------------------------- window pooling


_WINDOW_ARGS = {"avg_pool2d": ((3, 3), (2, 2), (1, 1)), "max_pool2d_with_indices": ((3, 3), (2, 2), (1, 1))}


def window_samples(op):
    """avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor) or max_pool2d_with_indices(x,
    kernel, stride, padding, dilation, ceil_mode)."""
    is_max = op.startswith("max")
    base = _WINDOW_ARGS[op]
    fn = getattr(_ATEN, op)

    def samples(dtype, device, quick):
        make = _maker(dtype, device)
        size = 9

        def case(variant, build, args=base, **kw):
            return Sample(variant, lambda: (build(), *args), reduction_size=1 if is_max else size, **kw)

        def out_call(x, *args):
            if is_max:
                return fn.out(x, *args, out=_empty(x.dtype, x.device), indices=_empty(torch.int64, x.device))
            return fn.out(x, *args, out=_empty(x.dtype, x.device))

        core = [
            case("basic", lambda: make(IMAGE)),
            case("channels-last", lambda: make(IMAGE, layout=torch.channels_last)),
            case("out", lambda: make(IMAGE), expects=f"{op}.out", call=out_call),
            case("special-values", lambda: _specials(IMAGE, dtype, device)),
        ]

        def extra():
            cases = [
                case("noncontiguous", lambda: _noncontiguous(make, IMAGE)),
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

        return _with_extra(dtype, quick, core, extra)

    return samples


def _pool_call(op):
    """The functional call whose gradient is op's backward (max: the values of max_pool2d_with_indices)."""
    if op == "avg_pool2d":
        return lambda x, *a: F.avg_pool2d(x, *a)
    return lambda x, *a: _ATEN.max_pool2d_with_indices(x, *a)[0]


def window_backward_samples(op):
    """avg_pool2d_backward / max_pool2d_with_indices_backward: through autograd and called directly."""
    is_max = op.startswith("max")
    forward = getattr(_ATEN, op)
    backward = getattr(_ATEN, f"{op}_backward")
    k, s, p = _WINDOW_ARGS[op]
    tail = ((1, 1), False) if is_max else (False, True, None)  # dilation, ceil_mode / ceil_mode, pad, divisor

    def samples(dtype, device, quick):
        make = _maker(dtype, device)
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

            call = (lambda *a: backward.grad_input(*a, grad_input=_empty(a[0].dtype, a[0].device))) if out else None
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

        return _with_extra(dtype, quick, core, extra, _QUICK_EVERY_DTYPE_BACKWARD)

    return samples


def max_pool2d_backward_samples():
    """max_pool2d_backward(grad, x, kernel, stride, padding[, dilation, ceil_mode]), called directly."""

    def samples(dtype, device, quick):
        make = _maker(dtype, device)
        k, s, p = _WINDOW_ARGS["max_pool2d_with_indices"]

        def direct(variant, shape, args=(k, s, p), layout=None, **kw):
            def build():
                x = make(shape, layout=layout)
                y = _ATEN.max_pool2d_with_indices(x, *args)[0]
                return (make(y.shape, layout=layout), x, *args)

            return Sample(variant, build, reduction_size=4, **kw)

        out = _ATEN.max_pool2d_backward.out
        core = [direct("direct", IMAGE), direct("channels-last", IMAGE, layout=torch.channels_last),
                direct("out", IMAGE, expects="max_pool2d_backward.out",
                       call=lambda g, x, *a: out(g, x, *a, out=_empty(g.dtype, g.device)))]

        def extra():
            return [
                direct("dilation-ceil-mode", IMAGE, (k, s, p, (2, 1), True)),
                direct("unbatched", IMAGE[1:]),
                direct("empty-batch", (0, *IMAGE[1:])),
                Sample("error-grad-shape", lambda: (make((2, 3, 4, 4)), make(IMAGE), k, s, p)),
            ]

        return _with_extra(dtype, quick, core, extra)

    return samples


# --------------------------------------------------------------------------- adaptive pooling


def adaptive_samples(op):
    """_adaptive_avg_pool2d (adaptive_avg_pool2d.out too) or adaptive_max_pool2d, of output_size."""
    is_max = op.startswith("adaptive_max")
    fn = _ATEN.adaptive_max_pool2d if is_max else _ATEN._adaptive_avg_pool2d

    def samples(dtype, device, quick):
        make = _maker(dtype, device)

        def case(variant, build, size=(4, 5), **kw):
            return Sample(variant, lambda: (build(), size), reduction_size=16, **kw)

        def out_call(x, size):
            if is_max:
                return fn.out(x, size, out=_empty(x.dtype, x.device), indices=_empty(torch.int64, x.device))
            return fn.out(x, size, out=_empty(x.dtype, x.device))

        core = [
            case("basic", lambda: make(IMAGE)),
            case("channels-last", lambda: make(IMAGE, layout=torch.channels_last)),
            case("out", lambda: make(IMAGE), expects=f"{fn.__name__.split('.')[0]}.out", call=out_call),
        ]
        core.append(case("special-values", lambda: _specials(IMAGE, dtype, device)))

        def extra():
            cases = [
                case("global", lambda: make(IMAGE), (1, 1)),
                case("noncontiguous", lambda: _noncontiguous(make, IMAGE)),
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
                     call=lambda x, size: _ATEN.adaptive_avg_pool2d.out(x, size, out=_empty(x.dtype, x.device))),
                case("empty-channels", lambda: make((2, 0, 9, 11))),
            ]

        return _with_extra(dtype, quick, core, extra)

    return samples


def adaptive_backward_samples(op):
    """_adaptive_avg_pool2d_backward(grad, x) or adaptive_max_pool2d_backward(grad, x, indices)."""
    is_max = op.startswith("adaptive_max")
    forward = _ATEN.adaptive_max_pool2d if is_max else _ATEN._adaptive_avg_pool2d
    backward = _ATEN.adaptive_max_pool2d_backward if is_max else _ATEN._adaptive_avg_pool2d_backward
    name = "adaptive_max_pool2d_backward" if is_max else "_adaptive_avg_pool2d_backward"
    forward_name = "adaptive_max_pool2d" if is_max else "_adaptive_avg_pool2d"

    def samples(dtype, device, quick):
        make = _maker(dtype, device)

        def grad(variant, shape, size=(4, 5), layout=None):
            call = (lambda x, s: _ATEN.adaptive_max_pool2d(x, s)[0]) if is_max else _ATEN._adaptive_avg_pool2d
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
                call = lambda *a: getattr(backward, overload[1:])(*a, **{kw: _empty(a[0].dtype, a[0].device)})  # noqa: E731
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

        return _with_extra(dtype, quick, core, extra, _QUICK_EVERY_DTYPE_BACKWARD)

    return samples


# --------------------------------------------------------------------------- upsampling

_UPSAMPLE_IN = {1: (2, 3, 7), 2: (2, 3, 5, 7), 3: (1, 2, 3, 4, 5)}
_UPSAMPLE_OUT = {1: (16,), 2: (11, 13), 3: (5, 7, 9)}  # about 2x and 2.2x: several outputs per input
# Cubic, anti-aliased and 3-d gradients gather up to (4 x the scale)^dims outputs per input: under the interpreter
# a milder upscale keeps them cheap (still several outputs per input).
_MILD_UPSAMPLE_OUT = {1: (10,), 2: (7, 9), 3: (4, 6, 7)}
_DOWNSAMPLE_OUT = {1: (3,), 2: (2, 4), 3: (2, 3, 2)}
_WHOLE_FACTORS = {1: (4,), 2: (2, 4), 3: (2, 1, 2)}  # upscales that copy each input to a whole block
_LAYOUT = {2: torch.channels_last, 3: torch.channels_last_3d}
_MODES = {"nearest": "nearest", "nearest-exact": "nearest-exact", "linear": {1: "linear", 2: "bilinear",
                                                                               3: "trilinear"},
          "cubic": "bicubic", "aa-linear": "bilinear", "aa-cubic": "bicubic"}


def _upsampled(up) -> tuple:
    """The output size of up's upscale samples."""
    mild = up.mode not in ("nearest", "nearest-exact", "linear") or up.spatial == 3
    return (_MILD_UPSAMPLE_OUT if mild else _UPSAMPLE_OUT)[up.spatial]


def _interpolate_mode(up) -> str:
    mode = _MODES[up.mode]
    return mode[up.spatial] if isinstance(mode, dict) else mode


def upsample_samples(up):
    """The forward upsample_*(x, output_size, [align_corners], *scales) of up (gems.ops.pooling.upsampling)."""
    fn = getattr(_ATEN, up.aten)
    sp = up.spatial
    flags = (False,) if up.aligned else ()
    # Interpolations get NaN only: ATen's CPU paths differ among themselves (float64, the oracle, against float32)
    # and from CUDA in where Inf * 0 makes NaN and in the sign of a zero sum; NaN spreads alike everywhere.
    exact = up.mode.startswith("nearest")

    def samples(dtype, device, quick):
        make = _maker(dtype, device)
        shape = _UPSAMPLE_IN[sp]

        upsized = _upsampled(up)

        def case(variant, build, size=upsized, rest=flags, **kw):
            return Sample(variant, lambda: (build(), list(size), *rest), **kw)

        core = [
            case("upscale", lambda: make(shape)),
            case("out", lambda: make(shape), expects=f"{up.aten}.out",
                 call=lambda x, *a: fn.out(x, *a, out=_empty(x.dtype, x.device))),
            case("channels-last", lambda: make(shape, layout=_LAYOUT[sp])) if sp > 1 else
            case("noncontiguous", lambda: _noncontiguous(make, shape)),
        ]

        def extra():
            scale = 1.7  # output sizes floor(in * 1.7): what F.interpolate(scale_factor=1.7) passes
            cases = [
                case("downscale", lambda: make(shape), _DOWNSAMPLE_OUT[sp]),
                case("scale-factors", lambda: make(shape), [math.floor(n * scale) for n in shape[2:]],
                     (*flags, *([scale] * sp))),
                case("same-size", lambda: make(shape), shape[2:]),
                case("empty-batch", lambda: make((0, *shape[1:]))),
                case("special-values", lambda: _specials(shape, dtype, device, exact)),
                case("functional", lambda: make(shape), call=lambda x, size, *a: F.interpolate(
                    x, scale_factor=2.0, mode=_interpolate_mode(up), antialias=up.mode.startswith("aa"))),
                case("error-output-size-length", lambda: make(shape), (4,) * (sp + 1)),
                case("error-input-rank", lambda: make(shape[1:])),
                case("error-zero-output", lambda: make(shape), (0,) * sp),
                case("error-empty-channels", lambda: make((2, 0, *shape[2:]))),
                case("error-bool-input", lambda: make(shape, torch.bool)),
            ]
            if not (quick and up.mode.startswith("aa-")):  # a whole-plane window: hundreds of interpreted taps
                cases.append(case("output-1", lambda: make(shape), (1,) * sp))
            if up.aligned:
                cases += [case("align-corners", lambda: make(shape), rest=(True,)),
                          case("align-corners-downscale", lambda: make(shape), _DOWNSAMPLE_OUT[sp], (True,))]
            if sp > 1:
                cases += [case("noncontiguous", lambda: _noncontiguous(make, shape)),
                          case("channels-last-downscale", lambda: make(shape, layout=_LAYOUT[sp]), _DOWNSAMPLE_OUT[sp])]
            return cases

        return _with_extra(dtype, quick, core, extra)

    return samples


def upsample_backward_samples(up):
    """The backward upsample_*_backward(grad, output_size, input_size, [align_corners], *scales) of up."""
    fn = getattr(_ATEN, up.aten)
    backward = getattr(_ATEN, f"{up.aten}_backward")
    sp = up.spatial
    flags = (False,) if up.aligned else ()
    both = (up.aten, f"{up.aten}_backward")

    def samples(dtype, device, quick):
        make = _maker(dtype, device)
        shape = _UPSAMPLE_IN[sp]

        upsized = _upsampled(up)

        def grad(variant, size=upsized, rest=flags, layout=None):
            return Sample(variant, lambda: (make(shape, grad=True, layout=layout), list(size), *rest), call=fn,
                          grad=True, expects=both)

        def direct(variant, size=upsized, rest=flags, layout=None, out=False, grad_shape=None, reduction_size=16):
            call = (lambda *a: backward.grad_input(*a, grad_input=_empty(a[0].dtype, a[0].device))) if out else None
            return Sample(variant, lambda: (make(grad_shape or (*shape[:2], *size), layout=layout), list(size),
                                            list(shape), *rest), call=call, reduction_size=reduction_size,
                          expects=f"{up.aten}_backward" + (".grad_input" if out else ""))

        core = [grad("grad"), direct("channels-last", layout=_LAYOUT[sp]) if sp > 1 else direct("direct")]

        def extra():
            cases = [
                direct("downscale", _DOWNSAMPLE_OUT[sp]) if quick else grad("grad-downscale", _DOWNSAMPLE_OUT[sp]),
                direct("grad-input", out=True),
                grad("grad-same-size", shape[2:]),
                direct("scale-factors", [math.floor(n * 1.7) for n in shape[2:]], (*flags, *([1.7] * sp))),
                direct("output-1", (1,) * sp),
                direct("empty-batch", grad_shape=(0, shape[1], *_upsampled(up))),
                direct("error-grad-shape", grad_shape=(*shape[:2], *(n + 1 for n in _upsampled(up)))),
                direct("error-grad-rank", grad_shape=(shape[1], *_upsampled(up))),
                Sample("error-input-size-length", lambda: (make((*shape[:2], *_upsampled(up))),
                                                           list(_upsampled(up)), list(shape[1:]), *flags),
                       call=backward.default),
            ]
            if sp > 1:
                cases.append(direct("direct"))
            if up.aligned:
                cases.append(direct("align-corners-downscale", _DOWNSAMPLE_OUT[sp], (True,)))
            else:  # whole factors: the nearest backward's gather of blocks
                whole = [n * k for n, k in zip(shape[2:], _WHOLE_FACTORS[sp])]
                cases += [direct("whole-factors", whole),
                          # x4 per axis: ATen's CPU kernels (the oracle) ignore a given scale where the size
                          # doubles or stays; conformance's check with the scales changed (x1.5) sums 6 per axis
                          direct("whole-factors-given", [4 * n for n in shape[2:]], (*flags, *[4.0] * sp),
                                 reduction_size=6**sp)]
                if sp > 1:
                    cases.append(direct("whole-factors-channels-last", whole, layout=_LAYOUT[sp]))
            if not quick:  # through autograd too; quick mode has align_corners and channels-last directly
                if up.aligned:
                    cases.append(grad("grad-align-corners", rest=(True,)))
                if sp > 1:
                    cases.append(grad("grad-channels-last", layout=_LAYOUT[sp]))
            return cases

        return _with_extra(dtype, quick, core, extra, _QUICK_EVERY_DTYPE_BACKWARD)

    return samples


# --------------------------------------------------------------------------- composites


# name -> (call, the overloads it reaches: forward, backward, arguments after the input)
_COMPOSITES = {
    "avg_pool1d": (F.avg_pool1d, "avg_pool2d", (3, 2, 1)),
    "max_pool1d": (F.max_pool1d, "max_pool2d_with_indices", (3, 2, 1)),
    "max_pool2d": (F.max_pool2d, "max_pool2d_with_indices", (3, 2, 1)),
    "adaptive_avg_pool1d": (F.adaptive_avg_pool1d, "_adaptive_avg_pool2d", (4,)),
    "adaptive_max_pool1d": (F.adaptive_max_pool1d, "adaptive_max_pool2d", (4,)),
}


def composite_samples(name):
    """A CompositeImplicitAutograd pooling (F.max_pool2d, the 1-d poolings): the overloads it decomposes into
    run gems, forward and backward."""
    call, forward, args = _COMPOSITES[name]
    rank = 4 if name.endswith("2d") else 3

    def samples(dtype, device, quick):
        make = _maker(dtype, device)
        shape = IMAGE[4 - rank:] if rank == 3 else IMAGE
        cases = [
            Sample("basic", lambda: (make(shape), *args), call=call, expects=forward, reduction_size=3),
            Sample("unbatched", lambda: (make(shape[1:]), *args), call=call, expects=forward, reduction_size=3),
            Sample("grad", lambda: (make(shape, grad=True), *args), call=call, grad=True, reduction_size=3,
                   expects=(forward, f"{forward}_backward")),
        ]
        if name.startswith("max"):
            cases.append(Sample("return-indices", lambda: (make(shape), *args), {"return_indices": True}, call=call,
                                expects=forward))
        return cases

    return samples


# --------------------------------------------------------------------------- perf


def _perf_input(shape, dtype, device, spatial=2):
    """The perf/shapes.yaml entry [N, C, H, W, layout] (1: contiguous, 2: channels-last) as a tensor of ``spatial``
    spatial dims with as many elements: (N, C, H * W) for 1, (N, C / 4, 4, H, W) for 3."""
    n, c, h, w, layout = shape
    sizes = {1: (n, c, h * w), 2: (n, c, h, w), 3: (n, max(1, c // 4), 4, h, w)}[spatial]
    x = make_tensor(sizes, dtype, device)
    return x.contiguous(memory_format=_LAYOUT[spatial]) if layout == 2 and spatial > 1 else x


# The pooling arguments timed: ResNet's stem max pooling, a 2x2 average pooling, global adaptive pooling.
_POOL_ARGS = {"max_pool2d_with_indices": ((3, 3), (2, 2), (1, 1)), "max_pool2d": ((3, 3), (2, 2), (1, 1)),
              "avg_pool2d": ((2, 2), (2, 2), (0, 0)), "adaptive_avg_pool2d": ((1, 1),),
              "adaptive_max_pool2d": ((1, 1),)}


def _pool_perf_sample(kind, x, dtype, device):
    op = kind.removesuffix("_backward")
    args = _POOL_ARGS[op]
    if op == kind:
        return Sample("perf", (x, *args))
    forward = {"max_pool2d": "max_pool2d_with_indices", "adaptive_avg_pool2d": "_adaptive_avg_pool2d"}.get(op, op)
    y = getattr(_ATEN, forward)(x, *args)
    values = y[0] if isinstance(y, tuple) else y
    g = make_tensor(values.shape, dtype, device).contiguous(memory_format=_memory_format(x))
    tail = {"max_pool2d_with_indices": ((1, 1), False, y[1] if isinstance(y, tuple) else None),
            "avg_pool2d": (False, True, None), "adaptive_max_pool2d": (y[1] if isinstance(y, tuple) else None,),
            "adaptive_avg_pool2d": (), "max_pool2d": ()}[op]
    pooling = args if op in ("max_pool2d_with_indices", "avg_pool2d", "max_pool2d") else ()  # not the adaptive
    return Sample("perf", (g, x, *pooling, *tail))


def _memory_format(t):
    return _LAYOUT[t.dim() - 2] if t.dim() > 3 and not t.is_contiguous() else torch.contiguous_format


def _perf_sample(kind, shape, dtype, device):
    """What gems-perf times for kind (an operator, with "_backward" for its backward) at a perf/shapes.yaml shape:
    pooling as _POOL_ARGS says, upsampling x2 (the _aa ones /2, their use); backwards at the same sizes."""
    aten = kind.removesuffix("_backward")
    if "upsample" not in aten:
        return _pool_perf_sample(kind, _perf_input(shape, dtype, device), dtype, device)
    spatial = int(re.search(r"(\d)d", aten).group(1))
    x = _perf_input(shape, dtype, device, spatial)
    size = [n // 2 if aten.endswith("_aa") else n * 2 for n in x.shape[2:]]
    flags = () if "nearest" in aten else (False,)
    if aten == kind:
        return Sample("perf", (x, size, *flags))
    g = make_tensor((*x.shape[:2], *size), dtype, device).contiguous(memory_format=_memory_format(x))
    return Sample("perf", (g, size, list(x.shape), *flags))


def pooling_perf(kind, shapes):
    """Perf inputs of the pooling family; bytes = the tensors read (a backward's input only where it reads its
    values: max_pool2d_backward) + the results written."""

    def inputs(shape, dtype, device):
        return _perf_sample(kind, shape, dtype, device)

    def bytes_moved(sample, result):
        results = result if isinstance(result, tuple) else (result,)
        read = list(sample.args)
        if kind.endswith("_backward") and kind != "max_pool2d_backward" and "upsample" not in kind:
            del read[1]  # the forward's input: only its shape is used
        return tensor_bytes(*read, *results)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
