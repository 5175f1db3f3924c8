"""upsample_nearest3d (and .out): each output element copies the input element at floor(o * in / out) (or 1 /
scale_factor), clamped, along each axis. Kernels: resample.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("upsample_nearest3d", 3, "nearest")

SPECS = [forward_spec(UPSAMPLING)]
