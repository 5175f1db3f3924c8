"""_upsample_nearest_exact2d (and .out): each output element copies the input element at floor((o + 0.5) * in / out),
clamped, along each axis. Kernels: resample.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("_upsample_nearest_exact2d", 2, "nearest-exact", backward_keeps_layout=True)

SPECS = [forward_spec(UPSAMPLING)]
