"""_upsample_bicubic2d_aa (and .out): anti-aliased bicubic resampling: Keys' cubic (A = -0.5) as wide as the scale when
downsampling, weights normalized (PIL's). Kernels: antialias.py; ATen's checks and the declaration: upsampling.py."""

from dataclasses import replace

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("_upsample_bicubic2d_aa", 2, "aa-cubic")

SPECS = [replace(forward_spec(UPSAMPLING), known_failures={
    ("nvidia", "float32", "empty-batch"): "ATen's CUDA kernel fails to launch for an empty batch (CUDA error: invalid "
                                          "argument, H200, torch 2.11); gems returns the empty result"})]
