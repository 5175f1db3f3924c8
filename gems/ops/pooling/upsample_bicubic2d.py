"""upsample_bicubic2d (and .out): bicubic (Keys, A = -0.75) interpolation of the 4 x 4 input elements around each
output's source position, border taps clamped. Kernels: resample.py; ATen's checks and the declaration:
upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("upsample_bicubic2d", 2, "cubic")

SPECS = [forward_spec(UPSAMPLING)]
