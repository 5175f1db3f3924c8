"""absolute: |x|. Every ATen overload of absolute (``absolute``, ``absolute_``, ``absolute.out``) is a
CompositeImplicitAutograd alias of abs: ATen runs abs, abs_ and abs.out, which gems serves (abs.py). gems
registers no absolute kernel; this declaration proves that absolute's calls run gems' abs
(``composite_of``).
"""

import torch

from gems.dtypes import FLOATS, INTS
from gems.ops.pointwise.shared import pointwise_perf
from gems.ops.pointwise.unary_shared import composite_samples
from gems.spec import OpSpec

OVERLOADS = ("abs", "abs_", "abs.out")

SPECS = [
    OpSpec(name="absolute", family="pointwise", impls={}, composite_of=OVERLOADS, call=torch.absolute,
           samples=composite_samples(torch.Tensor.absolute_, torch.absolute, OVERLOADS), dtypes=FLOATS + INTS,
           perf=pointwise_perf(1)),
]
