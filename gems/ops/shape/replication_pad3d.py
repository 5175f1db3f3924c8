"""replication_pad3d (and .out) with its backward, replication_pad3d_backward (and .grad_input): the last 3 dim(s)
extended by repeating their edge elements. Kernels, checks and declaration: gems/ops/shape/padding.py, shared by the
six paddings."""

from gems.ops.shape.padding import padding_spec

SPECS = [padding_spec("replication", 3)]
