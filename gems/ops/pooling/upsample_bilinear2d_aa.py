"""_upsample_bilinear2d_aa (and .out): anti-aliased bilinear resampling: a triangle filter as wide as the scale when
downsampling, weights normalized (PIL's). Kernels: antialias.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("_upsample_bilinear2d_aa", 2, "aa-linear", backward_keeps_layout=True)

SPECS = [forward_spec(UPSAMPLING)]
