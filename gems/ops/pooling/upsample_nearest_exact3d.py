"""_upsample_nearest_exact3d (and .out): each output element copies the input element at floor((o + 0.5) * in / out),
clamped, along each axis. Kernels: resample.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("_upsample_nearest_exact3d", 3, "nearest-exact")

SPECS = [forward_spec(UPSAMPLING)]
