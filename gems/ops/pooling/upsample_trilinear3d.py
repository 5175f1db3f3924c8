"""upsample_trilinear3d (and .out): trilinear interpolation of the 2 x 2 x 2 input elements around each output's source
position. Kernels: resample.py; ATen's checks and the declaration: upsampling.py."""

from gems.ops.pooling.upsampling import Upsampling, forward_spec

UPSAMPLING = Upsampling("upsample_trilinear3d", 3, "linear", backward_keeps_layout=True)

SPECS = [forward_spec(UPSAMPLING)]
