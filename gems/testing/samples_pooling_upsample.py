"""Samples of the upsampling operators (gems.ops.pooling.upsampling), forward and backward: nearest, linear,
cubic and anti-aliased interpolation in 1 to 3 spatial dimensions."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from gems.spec import Sample
from gems.testing.samples_pooling_common import (
    ATEN,
    LAYOUT,
    QUICK_EVERY_DTYPE_BACKWARD,
    empty,
    maker,
    noncontiguous,
    specials,
    with_extra,
)

_UPSAMPLE_IN = {1: (2, 3, 7), 2: (2, 3, 5, 7), 3: (1, 2, 3, 4, 5)}
_UPSAMPLE_OUT = {1: (16,), 2: (11, 13), 3: (5, 7, 9)}  # about 2x and 2.2x: several outputs per input
# Cubic, anti-aliased and 3-d gradients gather up to (4 x the scale)^dims outputs per input: under the interpreter
# a milder upscale keeps them cheap (still several outputs per input).
_MILD_UPSAMPLE_OUT = {1: (10,), 2: (7, 9), 3: (4, 6, 7)}
_DOWNSAMPLE_OUT = {1: (3,), 2: (2, 4), 3: (2, 3, 2)}
_WHOLE_FACTORS = {1: (4,), 2: (2, 4), 3: (2, 1, 2)}  # upscales that copy each input to a whole block
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
    fn = getattr(ATEN, up.aten)
    sp = up.spatial
    flags = (False,) if up.aligned else ()
    # Interpolations get NaN only: ATen's CPU paths differ among themselves (float64, the oracle, against float32)
    # and from CUDA in where Inf * 0 makes NaN and in the sign of a zero sum; NaN spreads alike everywhere.
    exact = up.mode.startswith("nearest")

    def samples(dtype, device, quick):
        make = maker(dtype, device)
        shape = _UPSAMPLE_IN[sp]

        upsized = _upsampled(up)

        def case(variant, build, size=upsized, rest=flags, **kw):
            return Sample(variant, lambda: (build(), list(size), *rest), **kw)

        core = [
            case("upscale", lambda: make(shape)),
            case("out", lambda: make(shape), expects=f"{up.aten}.out",
                 call=lambda x, *a: fn.out(x, *a, out=empty(x.dtype, x.device))),
            case("channels-last", lambda: make(shape, layout=LAYOUT[sp])) if sp > 1 else
            case("noncontiguous", lambda: noncontiguous(make, shape)),
        ]
        if exact:  # whole power-of-two factors: the forward stores each input tile to its block of outputs
            whole = [n * k for n, k in zip(shape[2:], _WHOLE_FACTORS[sp])]
            core.append(case("whole-factors", lambda: make(shape), whole))
            if sp > 1:
                core.append(case("whole-factors-channels-last", lambda: make(shape, layout=LAYOUT[sp]), whole))

        def extra():
            scale = 1.7  # output sizes floor(in * 1.7): what F.interpolate(scale_factor=1.7) passes
            cases = [
                case("downscale", lambda: make(shape), _DOWNSAMPLE_OUT[sp]),
                case("scale-factors", lambda: make(shape), [math.floor(n * scale) for n in shape[2:]],
                     (*flags, *([scale] * sp))),
                case("same-size", lambda: make(shape), shape[2:]),
                case("empty-batch", lambda: make((0, *shape[1:]))),
                case("special-values", lambda: specials(shape, dtype, device, exact)),
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
            if up.mode.startswith("aa-"):  # 20x narrower: more taps than antialias.MAX_UNROLLED_TAPS, a rolled loop
                cases.append(case("downscale-wide", lambda: make((1, 2, 3, 40)), (3, 2)))
            if up.aligned:
                cases += [case("align-corners", lambda: make(shape), rest=(True,)),
                          case("align-corners-downscale", lambda: make(shape), _DOWNSAMPLE_OUT[sp], (True,))]
            if sp > 1:
                cases += [case("noncontiguous", lambda: noncontiguous(make, shape)),
                          case("channels-last-downscale", lambda: make(shape, layout=LAYOUT[sp]), _DOWNSAMPLE_OUT[sp])]
            return cases

        return with_extra(dtype, quick, core, extra)

    return samples


def upsample_backward_samples(up):
    """The backward upsample_*_backward(grad, output_size, input_size, [align_corners], *scales) of up."""
    fn = getattr(ATEN, up.aten)
    backward = getattr(ATEN, f"{up.aten}_backward")
    sp = up.spatial
    flags = (False,) if up.aligned else ()
    both = (up.aten, f"{up.aten}_backward")

    def samples(dtype, device, quick):
        make = maker(dtype, device)
        shape = _UPSAMPLE_IN[sp]

        upsized = _upsampled(up)

        def grad(variant, size=upsized, rest=flags, layout=None):
            return Sample(variant, lambda: (make(shape, grad=True, layout=layout), list(size), *rest), call=fn,
                          grad=True, expects=both)

        def direct(variant, size=upsized, rest=flags, layout=None, out=False, grad_shape=None, reduction_size=16):
            call = (lambda *a: backward.grad_input(*a, grad_input=empty(a[0].dtype, a[0].device))) if out else None
            return Sample(variant, lambda: (make(grad_shape or (*shape[:2], *size), layout=layout), list(size),
                                            list(shape), *rest), call=call, reduction_size=reduction_size,
                          expects=f"{up.aten}_backward" + (".grad_input" if out else ""))

        core = [grad("grad"), direct("channels-last", layout=LAYOUT[sp]) if sp > 1 else direct("direct")]

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
                    cases.append(direct("whole-factors-channels-last", whole, layout=LAYOUT[sp]))
            if not quick:  # through autograd too; quick mode has align_corners and channels-last directly
                if up.aligned:
                    cases.append(grad("grad-align-corners", rest=(True,)))
                if sp > 1:
                    cases.append(grad("grad-channels-last", layout=LAYOUT[sp]))
            return cases

        return with_extra(dtype, quick, core, extra, QUICK_EVERY_DTYPE_BACKWARD)

    return samples
