"""Samples and perf inputs of the pooling family (gems/ops/pooling/): window and adaptive pooling, the upsampling
operators, forward and backward, and the 1-d / functional composites that reach them.

Every dtype runs the core variants (a typical window or scale, a non-contiguous and a channels-last input, out=,
special values or the gradient; in quick mode only those that samples_pooling_common.py lists); FULL_DTYPE runs the
rest too (unbatched and empty inputs, ceil_mode, padding and divisor options, dilation, align_corners and scale
factors, the functional entry points, ATen's errors), which keeps the family's quick suite cheap on the interpreter.
Shapes are small and odd (9 x 11 planes) so that masks run and few programs are interpreted. Quick mode also leaves
out the upsampling cases whose loops cost the interpreter most and whose paths other cases reach: the anti-aliased
whole-plane window (output 1) and the backwards' downscale, align_corners and channels-last gradients through
autograd (direct calls instead).

This module names the generators for the declarations (gems/ops/pooling/shared.py) and times the family
(:func:`pooling_perf`); they live by family in samples_pooling_window.py, samples_pooling_adaptive.py,
samples_pooling_upsample.py and samples_pooling_composite.py, their shared pieces in samples_pooling_common.py.
"""

from __future__ import annotations

import re

import torch

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor
from gems.testing.samples_pooling_adaptive import adaptive_backward_samples, adaptive_samples
from gems.testing.samples_pooling_common import ATEN, LAYOUT
from gems.testing.samples_pooling_composite import composite_samples
from gems.testing.samples_pooling_upsample import upsample_backward_samples, upsample_samples
from gems.testing.samples_pooling_window import max_pool2d_backward_samples, window_backward_samples, window_samples

__all__ = [
    "adaptive_backward_samples",
    "adaptive_samples",
    "composite_samples",
    "max_pool2d_backward_samples",
    "pooling_perf",
    "upsample_backward_samples",
    "upsample_samples",
    "window_backward_samples",
    "window_samples",
]

# --------------------------------------------------------------------------- perf


def _perf_input(shape, dtype, device, spatial=2):
    """The perf/shapes.yaml entry [N, C, H, W, layout] (1: contiguous, 2: channels-last) as a tensor of ``spatial``
    spatial dims with as many elements: (N, C, H * W) for 1, (N, C / 4, 4, H, W) for 3."""
    n, c, h, w, layout = shape
    sizes = {1: (n, c, h * w), 2: (n, c, h, w), 3: (n, max(1, c // 4), 4, h, w)}[spatial]
    x = make_tensor(sizes, dtype, device)
    return x.contiguous(memory_format=LAYOUT[spatial]) if layout == 2 and spatial > 1 else x


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
    y = getattr(ATEN, forward)(x, *args)
    values = y[0] if isinstance(y, tuple) else y
    g = make_tensor(values.shape, dtype, device).contiguous(memory_format=_memory_format(x))
    tail = {"max_pool2d_with_indices": ((1, 1), False, y[1] if isinstance(y, tuple) else None),
            "avg_pool2d": (False, True, None), "adaptive_max_pool2d": (y[1] if isinstance(y, tuple) else None,),
            "adaptive_avg_pool2d": (), "max_pool2d": ()}[op]
    pooling = args if op in ("max_pool2d_with_indices", "avg_pool2d", "max_pool2d") else ()  # not the adaptive
    return Sample("perf", (g, x, *pooling, *tail))


def _memory_format(t):
    return LAYOUT[t.dim() - 2] if t.dim() > 3 and not t.is_contiguous() else torch.contiguous_format


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
