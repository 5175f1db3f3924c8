"""upsample_nearest2d (and .out): each output element copies the input element at floor(o * in / out) (or 1 /
scale_factor), clamped, along each axis. Kernels: resample.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("upsample_nearest2d", 2, "nearest", backward_keeps_layout=True)

SPECS = [forward_spec(UPSAMPLING)]
