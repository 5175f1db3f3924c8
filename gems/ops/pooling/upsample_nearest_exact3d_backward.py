"""_upsample_nearest_exact3d_backward (and .grad_input): the gradient of _upsample_nearest_exact3d (see
upsample_nearest_exact3d.py), output-indexed: each grad_input element sums what the outputs that read it pass back.
Kernels: resample.py."""

from gems.ops.pooling.upsample_nearest_exact3d import UPSAMPLING
from gems.ops.pooling.upsampling import backward_spec

SPECS = [backward_spec(UPSAMPLING)]
