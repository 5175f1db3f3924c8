"""_upsample_bicubic2d_aa_backward (and .grad_input): the gradient of _upsample_bicubic2d_aa (see
upsample_bicubic2d_aa.py), output-indexed: each grad_input element sums what the outputs that read it pass back.
Kernels: antialias.py."""

from gems.ops.pooling.upsample_bicubic2d_aa import UPSAMPLING
from gems.ops.pooling.upsampling import backward_spec

SPECS = [backward_spec(UPSAMPLING)]
