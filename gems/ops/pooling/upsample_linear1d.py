"""upsample_linear1d (and .out): linear interpolation between the two input elements around each output's source
position. Kernels: resample.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("upsample_linear1d", 1, "linear")

SPECS = [forward_spec(UPSAMPLING)]
