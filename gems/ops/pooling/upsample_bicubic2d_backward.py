"""upsample_bicubic2d_backward (and .grad_input): the gradient of upsample_bicubic2d (see upsample_bicubic2d.py),
output-indexed: each grad_input element sums what the outputs that read it pass back. Kernels: resample.py."""

from gems.ops.pooling.upsample_bicubic2d import UPSAMPLING
from gems.ops.pooling.upsampling import backward_spec

SPECS = [backward_spec(UPSAMPLING)]
