"""Sample generators for the convolutions (gems/ops/conv/), with the signature ``samples(dtype, device, quick)``,
and their perf inputs.

The torch-level calls (F.conv1d/2d/3d, their "same"/"valid" padding) are CompositeImplicitAutograd and reach
``convolution``, which is what their samples expect; gradients reach ``convolution_backward`` too. Shapes
stay tiny (the interpreter runs one program after another) but reach both reduction schemes of the
kernels: fewer than 16 channels per group (flattened over channel and tap) and more (tap-major), groups,
depthwise, strides, dilation, asymmetric padding, 1-d, 3-d, unbatched, channels-last and strided views,
an empty batch, NaN/Inf, transposed calls (left to ATen) and the errors ATen raises.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from gems.spec import Sample
from gems.testing.samples import make_tensor

BOTH = ("convolution", "convolution_backward")
# More input channels than FLAT_BELOW (gems/ops/conv/implicit_gemm.py): the tap-major loops run.
WIDE = 20


def _maker(dtype, device):
    # Values in [-1, 1): sums of a few dozen products stay well inside fp16's range.
    return lambda *shape: make_tensor(shape, dtype, device, low=-1.0, high=1.0)


_CONVOLUTION = torch.ops.aten.convolution.default


def _rg(t):
    return t.requires_grad_()


def _conv(dims):
    return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[dims]


def _special(make, shape, dtype, device):
    x = make(*shape)
    flat = x.view(-1)
    flat[1], flat[7], flat[-3] = math.nan, math.inf, -math.inf
    return x


def convolution_samples():
    return _convolution_samples


def _convolution_samples(dtype, device, quick):
    """F.convNd(x, w, b, stride, padding, dilation, groups) as (x, w, b) args and the rest as kwargs."""
    t = _maker(dtype, device)
    n = 2 if quick else 4
    s = 6 if quick else 17  # image side

    def case(variant, dims, x, w, bias=True, grad=False, **kw):
        """x, w: shapes; the reduction is C/groups * taps (forward), or the batch's pixels (grad_weight)."""
        groups = kw.get("groups", 1)
        red = x[1 if len(x) == dims + 2 else 0] // groups * math.prod(w[2:])
        size = max(red, math.prod(x) // max(x[1], 1), w[0]) if grad else red
        wrap = _rg if grad else (lambda v: v)

        def args(x=x, w=w):
            made = [wrap(t(*x)), wrap(t(*w))]
            return (*made, wrap(t(w[0])) if bias else None)
        return Sample(variant, args, kw, call=_conv(dims), expects=BOTH if grad else "convolution",
                      reduction_size=size, grad=grad)

    samples = [
        case("basic", 2, (n, 3, s, s), (4, 3, 3, 3), padding=1),
        case("no-bias", 2, (n, 3, s, s), (4, 3, 3, 3), bias=False),
        # 16 input channels: whole channel blocks of the interpreter's config (the loads without a channel mask).
        case("even-channels", 2, (1, 16, 4, 4), (2, 16, 3, 3)),
        case("stride-asym-padding", 2, (n, 4, s + 1, s), (6, 4, 3, 2), stride=2, padding=(1, 2)),
        case("dilation", 2, (1, 3, s + 2, s + 2), (4, 3, 3, 3), dilation=2, padding=1),
        case("groups", 2, (n, 4, s, s), (6, 2, 3, 3), groups=2, padding=1),
        case("depthwise", 2, (n, 4, s, s), (4, 1, 3, 3), groups=4, padding=1),
        case("depthwise-multiplier", 2, (n, 4, s, s), (8, 1, 3, 3), groups=4, stride=2),
        # Depthwise (gems/ops/conv/depthwise.py's direct kernels): dilation, 1-d, 3-d, layouts, views.
        case("depthwise-dilation", 2, (n, 4, s + 2, s + 1), (4, 1, 3, 2), groups=4, dilation=2, padding=(2, 1)),
        case("depthwise-conv1d", 1, (n, 4, s + 3), (8, 1, 3), groups=4, stride=2, padding=1),
        case("depthwise-conv3d", 3, (1, 2, 4, s - 1, s - 1), (2, 1, 3, 3, 3), groups=2, padding=1),
        Sample("depthwise-channels-last", lambda: (t(n, 4, s, s).to(memory_format=torch.channels_last),
                                                   t(4, 1, 3, 3), t(4)),
               {"padding": 1, "groups": 4}, call=F.conv2d, expects="convolution", reduction_size=9),
        Sample("depthwise-noncontiguous", lambda: (t(n, 8, s, 2 * s)[:, ::2, :, ::2], t(8, 1, 3, 3)[::2], t(8)[1::2]),
               {"stride": (2, 1), "groups": 4}, call=F.conv2d, expects="convolution", reduction_size=9),
        case("wide-3x3", 2, (1, WIDE, s - 1, s - 1), (WIDE - 2, WIDE, 3, 3), padding=1),
        case("wide-1x1", 2, (n, WIDE, s - 1, s - 1), (8, WIDE, 1, 1)),
        # convolution.py's one-image tiles (NCHW stores along pixels): 3x3 from PER_IMAGE_MIN_PIXELS (1024)
        # output pixels; a pointwise one from POINTWISE_MIN_PIXELS (512), reading x in place (channels not
        # a multiple of the tile's, last tiles partial).
        case("image-1x1", 2, (2, 20, 23, 23), (8, 20, 1, 1)),
        case("image-3x3", 2, (1, 16, 33, 32), (8, 16, 3, 3), padding=1),
        case("image-stem", 2, (1, 3, 32, 33), (4, 3, 3, 3), padding=1),
        case("stem-7x7-stride2", 2, (1, 3, s + 4, s + 4), (4, 3, 7, 7), stride=2, padding=3),
        case("same", 2, (n, 3, s, s), (4, 3, 4, 3), padding="same"),
        case("same-dilation", 2, (n, 3, s + 1, s), (4, 3, 3, 2), padding="same", dilation=(2, 1)),
        case("valid", 2, (n, 3, s, s), (4, 3, 3, 3), padding="valid"),
        case("unbatched", 2, (3, s, s), (4, 3, 3, 3), padding=1),
        case("conv1d", 1, (n, 3, s + 3), (5, 3, 3), stride=2, padding=1),
        case("conv1d-same-dilation", 1, (n, 4, s + 3), (4, 2, 3), padding="same", dilation=2, groups=2),
        case("conv3d", 3, (1, 2, 4, s - 1, s - 1), (3, 2, 2, 3, 3), stride=(1, 2, 1), padding=1),
        case("conv3d-same", 3, (1, 2, 3, 4, 4), (3, 2, 3, 3, 3), padding="same"),
        Sample("channels-last", lambda: (t(n, 3, s, s).to(memory_format=torch.channels_last), t(4, 3, 3, 3), t(4)),
               {"padding": 1}, call=F.conv2d, expects="convolution", reduction_size=27),
        Sample("noncontiguous", lambda: (t(n, 3, s, 2 * s)[..., ::2], t(4, 3, 3, 3).transpose(2, 3), t(8)[::2]),
               {"stride": (1, 2)}, call=F.conv2d, expects="convolution", reduction_size=27),
        Sample("empty-batch", lambda: (t(0, 3, s, s), t(4, 3, 3, 3), t(4)), call=F.conv2d, expects="convolution"),
        Sample("special-values", lambda: (_special(t, (n, 3, s, s), dtype, device), t(4, 3, 3, 3), t(4)),
               {"padding": 1}, call=F.conv2d, expects="convolution", reduction_size=27),
        Sample("transposed", lambda: (t(n, 4, s, s), t(4, 3, 3, 3), t(3)), {"stride": 2}, call=F.conv_transpose2d,
               expects="convolution", reduction_size=36),
        # Bad inputs: ATen's exception type, raised before any launch.
        case("error-channels", 2, (n, 4, s, s), (6, 3, 3, 3)),
        case("error-groups-not-dividing", 2, (n, 4, s, s), (6, 1, 3, 3), groups=4),
        case("error-kernel-too-large", 2, (n, 3, 3, 3), (4, 3, 5, 5)),
        case("error-zero-size-image", 2, (n, 3, 0, s), (4, 3, 3, 3), padding=1),
        case("error-rank", 2, (n, 3, 2, s, s), (4, 3, 3, 3)),
        Sample("error-dtype-mix", lambda: (t(n, 3, s, s), t(4, 3, 3, 3).to(torch.float64 if dtype != torch.float64
                                                                          else torch.float32), None),
               call=F.conv2d, expects="convolution"),
        Sample("error-bias-size", lambda: (t(n, 3, s, s), t(4, 3, 3, 3), t(5)), call=F.conv2d, expects="convolution"),
        # The overload itself, past F.conv2d's own checks: ATen's checks of its arguments.
        *[Sample(f"error-overload-{variant}", build, call=_CONVOLUTION, expects="convolution") for variant, build in (
            ("weight-2d", lambda: (t(n, 4, s, s), t(6, 4), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
            ("groups-zero", lambda: (t(n, 4, s, s), t(6, 2, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 0)),
            ("stride-length", lambda: (t(n, 4, s, s), t(6, 2, 3, 3), None, [1, 1, 1], [0, 0], [1, 1], False, [0, 0],
                                       2)),
            ("input-rank", lambda: (t(n, 4, s), t(6, 2, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 2)),
            ("fewer-filters-than-groups", lambda: (t(n, 4, s, s), t(1, 1, 3, 3), None, [1, 1], [0, 0], [1, 1], False,
                                                   [0, 0], 4)),
        )],
        # Gradients: convolution_backward's three kernels.
        case("grad", 2, (n, 3, s, s), (4, 3, 3, 3), grad=True, padding=1),
        case("grad-stride-dilation", 2, (n, 3, s + 2, s + 1), (4, 3, 3, 2), grad=True, stride=2, dilation=(1, 2)),
        case("grad-groups", 2, (n, 4, s, s), (6, 2, 3, 3), grad=True, groups=2, padding=(0, 1)),
        case("grad-depthwise", 2, (n, 4, s, s), (8, 1, 3, 3), grad=True, groups=4, padding=1),
        case("grad-depthwise-stride-dilation", 2, (n, 4, s + 1, s), (4, 1, 3, 3), grad=True, groups=4, stride=2,
             dilation=(2, 1), padding=1),
        Sample("grad-depthwise-channels-last",
               lambda: (_rg(t(n, 4, s, s).to(memory_format=torch.channels_last)), _rg(t(8, 1, 3, 3)), _rg(t(8))),
               {"padding": 1, "groups": 4}, call=F.conv2d, expects=BOTH, reduction_size=n * s * s, grad=True),
        case("grad-wide", 2, (1, WIDE, s - 1, s - 1), (WIDE - 2, WIDE, 3, 3), grad=True, stride=2, padding=1),
        case("grad-no-bias", 2, (n, 3, s, s), (4, 3, 1, 1), bias=False, grad=True),
        case("grad-conv1d", 1, (n, 3, s + 3), (5, 3, 3), grad=True, stride=2, padding=2),
        case("grad-conv3d", 3, (1, 2, 3, s - 1, s - 1), (3, 2, 2, 3, 3), grad=True, padding=(0, 1, 1)),
    ]
    return samples


def convolution_backward_samples():
    return _convolution_backward_samples


def _convolution_backward_samples(dtype, device, quick):
    """aten.convolution_backward(dy, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding,
    groups, output_mask) called directly: masks, an empty batch, transposed (left to ATen)."""
    t = _maker(dtype, device)
    n = 2 if quick else 4
    s = 6 if quick else 17

    def case(variant, x, w, out, mask, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, transposed=False):
        def args():
            return (t(*out), t(*x), t(*w), [w[1 if transposed else 0]], list(stride), list(padding), list(dilation),
                    transposed, [0] * len(stride), groups, mask)
        red = max(x[1] // groups * math.prod(w[2:]), math.prod(out) // max(out[1], 1), w[0])
        return Sample(variant, args, reduction_size=red)

    o = s - 2  # a 3x3 output side without padding
    return [
        case("all", (n, 4, s, s), (6, 2, 3, 3), (n, 6, o, o), [True, True, True], groups=2),
        case("input-only", (n, 3, s, s), (4, 3, 3, 3), (n, 4, s // 2, s // 2), [True, False, False], stride=(2, 2),
             padding=(1, 1)),
        case("weight-only", (n, 3, s, s), (4, 3, 3, 3), (n, 4, s - 4, s - 2), [False, True, False],
             dilation=(2, 1)),
        # Not bias without weight: ATen's CPU (mkldnn) kernel then returns a grad_weight too (torch 2.13).
        case("weight-bias", (n, 3, s, s), (4, 3, 3, 3), (n, 4, o, o), [False, True, True]),
        case("conv1d", (n, 3, s), (4, 3, 3), (n, 4, s), [True, True, True], stride=(1,), padding=(1,),
             dilation=(1,)),
        case("wide", (1, WIDE, s, s), (WIDE, WIDE, 3, 3), (1, WIDE, s, s), [True, True, True], padding=(1, 1)),
        case("depthwise", (n, 4, s, s), (8, 1, 3, 3), (n, 8, (s - 1) // 2 + 1, (s - 1) // 2 + 1), [True, True, True],
             stride=(2, 2), padding=(1, 1), groups=4),
        case("depthwise-dilation", (n, 4, s, s), (4, 1, 3, 3), (n, 4, s, s - 2), [True, True, False],
             padding=(2, 1), dilation=(2, 2), groups=4),
        case("empty-batch", (0, 3, s, s), (4, 3, 3, 3), (0, 4, o, o), [True, True, True]),
        # 16 output channels: grad_input's reduction in whole channel blocks (no channel mask).
        case("input-only-even-channels", (1, 3, s, s), (16, 3, 3, 3), (1, 16, o, o), [True, False, False]),
        # Enough pixels (2,116 and 4,096) that grad_weight splits its reduction over programs even where one
        # program runs at a time (the interpreter), and adds the partial sums in a second kernel.
        case("weight-split", (1, 1, 48, 48), (2, 1, 3, 3), (1, 2, 46, 46), [False, True, False]),
        case("depthwise-weight-split", (1, 2, 64, 64), (2, 1, 1, 1), (1, 2, 64, 64), [False, True, False], groups=2),
        case("transposed", (n, 4, o, o), (4, 3, 3, 3), (n, 3, s, s), [True, True, True], transposed=True),
    ]


def conv_depthwise2d_samples():
    return _conv_depthwise2d_samples


def _conv_depthwise2d_samples(dtype, device, quick):
    """aten._conv_depthwise2d(x, w, kernel_size, bias, stride, padding, dilation) called directly."""
    t = _maker(dtype, device)
    n, c = (2, 4) if quick else (4, 32)
    s = 6 if quick else 17
    return [
        Sample("basic", lambda: (t(n, c, s, s), t(c, 1, 3, 3), [3, 3], t(c), [1, 1], [1, 1], [1, 1]), reduction_size=9),
        Sample("multiplier-stride", lambda: (t(n, c, s, s), t(2 * c, 1, 3, 3), [3, 3], None, [2, 2], [0, 1], [1, 1]),
               reduction_size=9),
        Sample("dilation", lambda: (t(n, c, s + 2, s), t(c, 1, 3, 2), [3, 2], t(c), [1, 1], [1, 0], [2, 1]),
               reduction_size=6),
    ]


# --------------------------------------------------------------------------- perf


def perf_inputs():
    """Perf inputs of shape [N, C, H, W, K, kernel, stride, padding]: F.conv2d(x, w, b, stride, padding)."""
    def inputs(shape, dtype, device):
        n, c, h, w, k, r, stride, padding = shape
        t = _maker(dtype, device)
        return Sample("perf", (t(n, c, h, w), t(k, c, r, r), t(k)), {"stride": stride, "padding": padding},
                      call=F.conv2d, expects="convolution")
    return inputs


def conv_flops():
    """flops(sample, result) = 2 * output elements * C * taps (multiply-adds of the products, bias aside)."""
    def flops(sample, result) -> int:
        w = sample.args[1]
        return 2 * result.numel() * math.prod(w.shape[1:])
    return flops


def moved_bytes():
    """bytes(sample, result): input, weight and bias read once, the result written once."""
    def moved(sample, result) -> int:
        tensors = [a for a in sample.args if isinstance(a, torch.Tensor)] + [result]
        return sum(t.numel() * t.element_size() for t in tensors)
    return moved
