"""reflection_pad1d (and .out) with its backward, reflection_pad1d_backward (and .grad_input): the last 1 dim(s)
mirrored at their edges (the edge not repeated). Kernels, checks and declaration: gems/ops/shape/padding.py, shared
by the six paddings."""

from gems.ops.shape.padding import padding_spec

SPECS = [padding_spec("reflection", 1)]
