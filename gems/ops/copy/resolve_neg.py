"""resolve_neg: a tensor with a negative bit (a lazy negation, ``torch._neg_view``) materialized, any other tensor
returned as it is. ATen's resolve_neg is CompositeImplicitAutograd and materializes through clone, which gems
serves, negating on the way (gems/ops/copy/shared.py); every operator given such a tensor clones it the same way
first. This declaration proves that clone ran gems (``composite_of``). resolve_conj has nothing to serve: a real
tensor has no conjugate bit, and gems kernels hold no complex dtype."""

import torch

from gems.dtypes import NUMERIC
from gems.ops.copy.shared import copy_perf, copy_samples
from gems.spec import OpSpec

SPECS = [
    OpSpec(
        name="resolve_neg", family="creation", impls={}, composite_of=("clone",), call=torch.resolve_neg,
        samples=copy_samples("resolve_neg_samples"), dtypes=NUMERIC, tolerance="exact",
        perf=copy_perf("unary_copy_perf", call=lambda x: torch.resolve_neg(torch._neg_view(x))),
    ),
]
