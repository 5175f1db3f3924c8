"""allclose: whether isclose holds everywhere (isclose.py's kernel, then gems' sum)."""

import torch

from gems.dtypes import ALL
from gems.ops.pointwise.isclose import check_isclose, closeness_samples, isclose_op
from gems.ops.reduction.sum import sum_all
from gems.spec import OpSpec


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_isclose(self, other, rtol, atol, equal_nan)
    close = isclose_op(self, other, float(rtol), float(atol), bool(equal_nan))
    return int(sum_all(close)) == close.numel()  # counted by a gems kernel: Tensor.all() would be ATen's


SPECS = [
    OpSpec(
        # allclose returns a Python bool: the samples wrap it in a tensor so that it is compared.
        name="allclose", family="pointwise", impls={"allclose": allclose}, call=torch.allclose,
        samples=closeness_samples(torch.allclose, "allclose", wrap=torch.tensor), dtypes=ALL, tolerance="exact",
        no_launch={"empty": "empty tensors are all close: True, with no element to compare"},
    ),
]
