"""maximum: elementwise, NaN from either operand propagates (bool: logical or)."""

import torch

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ALL
from gems.ops.pointwise.shared import binary_samples, combined, edge_samples, max_nan, out_of, pointwise_perf
from gems.spec import OpSpec

maximum_op = PointwiseOp("maximum", max_nan, operands=2)

SPECS = [
    OpSpec(
        name="maximum", family="pointwise",
        impls={"maximum": maximum_op, "maximum.out": out_of(maximum_op)},
        call=torch.maximum,
        samples=combined(binary_samples(torch.maximum, out="maximum.out", grad=True, scalar=None, float_scalar=False),
                         edge_samples("integer_extreme_samples", torch.maximum, operands=2, expects="maximum")),
        dtypes=ALL, perf=pointwise_perf(2),
    ),
]
