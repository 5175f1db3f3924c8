"""Samples and perf inputs of the shape family (gems/ops/shape/).

These operators move elements without computing on them: one kernel serves every dtype of a given
element size. So every dtype runs the core variants (contiguous, non-contiguous, special values, out=,
the gradient for floats), and FULL_DTYPE runs the rest too (layouts, empty and edge shapes, type
promotion, the errors), which keeps the family's quick suite cheap on the interpreter.

This module names the sample generators for the declarations (:func:`generator`) and times the family
(:func:`shape_perf`); the generators live by job in samples_shape_join.py (cat, stack, hstack, vstack),
samples_shape_rearrange.py (flip, roll, pixel_shuffle, pixel_unshuffle), samples_shape_repeat.py (repeat,
tile, repeat_interleave), samples_shape_pad.py (constant_pad_nd, the reflection and replication paddings)
and samples_shape_views.py (slice, select and unfold backward, the *_scatter operators), with their shared
helpers in samples_shape_common.py.
"""

from __future__ import annotations

from gems.spec import PerfSpec, Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples_shape_common import FULL_DTYPE, maker
from gems.testing.samples_shape_join import cat_samples, hstack_samples, stack_samples, vstack_samples
from gems.testing.samples_shape_pad import constant_pad_nd_samples, padding_samples
from gems.testing.samples_shape_rearrange import (
    flip_samples,
    pixel_shuffle_samples,
    pixel_unshuffle_samples,
    roll_samples,
)
from gems.testing.samples_shape_repeat import repeat_interleave_samples, repeat_samples, tile_samples
from gems.testing.samples_shape_views import (
    diagonal_scatter_samples,
    select_backward_samples,
    select_scatter_samples,
    slice_backward_samples,
    slice_scatter_samples,
    unfold_backward_samples,
)

__all__ = [
    "FULL_DTYPE", "cat_samples", "constant_pad_nd_samples", "diagonal_scatter_samples", "flip_samples", "generator",
    "hstack_samples", "padding_samples", "pixel_shuffle_samples", "pixel_unshuffle_samples",
    "repeat_interleave_samples", "repeat_samples", "roll_samples", "select_backward_samples", "select_scatter_samples",
    "shape_perf", "slice_backward_samples", "slice_scatter_samples", "stack_samples", "tile_samples",
    "unfold_backward_samples", "vstack_samples",
]


def generator(name):
    """The sample generator named ``name`` here, from its family module (gems.ops.shape.shared.shape_samples
    refers to it)."""
    return globals()[name]


# --------------------------------------------------------------------------- perf


def _perf_sample(kind, shape, dtype, device):
    """The call timed for ``kind`` at a perf/shapes.yaml shape: [rows, cols] on the "shape" key (the result is
    rows x cols), [N, C, H, W] on "shape_image"."""
    make = maker(dtype, device)
    if kind.startswith(("reflection-pad", "replication-pad")):  # "reflection-pad2d"...: 3 pixels each side
        dims = int(kind[-2])
        n, c, h, w = shape
        x = make({1: (n, c, h * w - 6), 2: (n, c, h - 6, w - 6), 3: (n, c // 4, 4, h - 6, w - 6)}[dims])
        return Sample("perf", (x, (3, 3) * dims))
    if kind == "pixel-shuffle":
        n, c, h, w = shape
        return Sample("perf", (make((n, c, h // 2, w // 2)), 2))  # C divisible by 4: the result is (N, C/4, H, W)
    if kind == "pixel-unshuffle":
        return Sample("perf", (make(shape), 2))
    rows, cols = shape
    half = cols // 2
    if kind == "cat":  # two halves of each row (a Llama KV-cache append joins along a middle dim: the same copy)
        return Sample("perf", ([make((rows, half)), make((rows, cols - half))], -1))
    if kind == "flip":  # the last dim: loads run backwards
        return Sample("perf", (make((rows, cols)), (-1,)))
    if kind == "roll":
        return Sample("perf", (make((rows, cols)), (rows // 3, cols // 5), (0, 1)))
    if kind == "repeat":
        return Sample("perf", (make((rows // 2, half)), (2, 2)))
    if kind == "constant-pad":  # 1 column each side of every row
        return Sample("perf", (make((rows, cols - 2)), (1, 1), 0.5))
    if kind == "slice-backward":  # the gradient of x[:, cols/4 : 3cols/4]
        return Sample("perf", (make((rows, half)), (rows, cols), 1, cols // 4, cols // 4 + half, 1))
    raise ValueError(f"no perf inputs for {kind!r}")


def shape_perf(kind, shapes="shape"):
    """Perf inputs of the shape family: ``shapes`` names the perf/shapes.yaml key; bytes = what is read
    (every tensor argument) + what is written (the result)."""

    def inputs(shape, dtype, device):
        return _perf_sample(kind, shape, dtype, device)

    def bytes_moved(sample, result):
        tensors = [t for a in sample.args for t in (a if isinstance(a, (list, tuple)) else (a,))]
        return tensor_bytes(*tensors, result)

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
