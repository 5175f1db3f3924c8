"""square: x * x. Every ATen overload of square (``square``, ``square_``, ``square.out``) is
CompositeImplicitAutograd: ATen runs pow with the exponent 2 (pow.Tensor_Scalar, pow_.Scalar,
pow.Tensor_Scalar_out), which gems serves (pow.py). gems registers no square kernel; this declaration
proves that square's calls run gems' pow (``composite_of``).
"""

import torch

from gems.dtypes import NUMERIC
from gems.ops.pointwise.shared import pointwise_perf
from gems.ops.pointwise.unary_shared import composite_samples
from gems.spec import OpSpec

OVERLOADS = ("pow.Tensor_Scalar", "pow_.Scalar", "pow.Tensor_Scalar_out")

SPECS = [
    OpSpec(name="square", family="pointwise", impls={}, composite_of=OVERLOADS, call=torch.square,
           samples=composite_samples(torch.square_, torch.square, OVERLOADS), dtypes=NUMERIC, perf=pointwise_perf(1)),
]
