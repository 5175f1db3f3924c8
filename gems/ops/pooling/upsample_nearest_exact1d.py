"""_upsample_nearest_exact1d (and .out): each output element copies the input element at floor((o + 0.5) * in / out),
clamped (Pillow's and scikit-image's nearest). Kernels: resample.py; ATen's checks and the declaration:
upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("_upsample_nearest_exact1d", 1, "nearest-exact")

SPECS = [forward_spec(UPSAMPLING)]
