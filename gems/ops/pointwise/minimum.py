"""minimum: elementwise, NaN from either operand propagates (bool: logical and)."""

import torch

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, combined, edge_samples, min_nan, out_of, pointwise_perf
from gems.spec import OpSpec

minimum_op = PointwiseOp("minimum", min_nan, operands=2)

SPECS = [
    OpSpec(
        name="minimum", family="pointwise",
        impls={"minimum": minimum_op, "minimum.out": out_of(minimum_op)},
        call=torch.minimum,
        samples=combined(binary_samples(torch.minimum, out="minimum.out", grad=True, scalar=None, float_scalar=False),
                         edge_samples("integer_extreme_samples", torch.minimum, operands=2, expects="minimum")),
        dtypes=ALL, perf=pointwise_perf(2),
    ),
]
