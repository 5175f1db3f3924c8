"""_upsample_bicubic2d_aa (and .out): anti-aliased bicubic resampling: Keys' cubic (A = -0.5) as wide as the scale when
downsampling, weights normalized (PIL's). Kernels: antialias.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("_upsample_bicubic2d_aa", 2, "aa-cubic")

SPECS = [forward_spec(UPSAMPLING)]
