"""Sample generators for the pointwise, selection and creation families (beside samples.py).

Every generator keeps the shared signature ``samples(dtype, device, quick) -> list[Sample]`` and
the variant vocabulary of :mod:`gems.testing.samples`, adding the cases these operators need:

- error variants (ATen raises; gems must raise the same exception type): shapes that cannot
  broadcast, ``out=`` of a dtype or device ATen refuses, written tensors that overlap an input or
  themselves, in-place results that need a resize or a dtype the tensor cannot hold;
- ``out=`` variants that ATen accepts: a wider dtype, a strided view, a wrong-sized tensor it resizes;
- scalar overloads reached only through ``torch.ops.aten`` (``div.Scalar``), aliases that ATen
  decomposes before the backend (``divide``, ``true_divide``, ``clip``, ``greater``, ``__or__``),
  each with the overload that really runs as ``expects``.

A binary operator's behaviour is data: :class:`BinaryTraits` (what its operands and result are) and
:class:`BinarySamples` (its overloads), both frozen records; every sample is built lazily, only by the
case that runs it. Variant names never depend on the device (cases are listed on the meta device), only the values
and, for integer division by zero, the call (ATen raises on CPU and not on CUDA).

The generators live by family: samples_extra_binary.py (binary operators, comparisons, aliases),
samples_extra_unary.py (unary operators), samples_extra_creation.py (factories), samples_extra_perf.py
(where, masked_fill and clamp perf inputs), their shared pieces in samples_extra_common.py; this module
names them for the declarations.
"""

from __future__ import annotations

from gems.testing.samples_extra_binary import (
    BinarySamples,
    BinaryTraits,
    alias_samples,
    binary_op_samples,
    comparison_samples,
    nonzero_divisor,
    one_tensor,
    result_dtype,
    specials_pair,
    tensor_and_scalar,
    two_tensors,
)
from gems.testing.samples_extra_common import other_device
from gems.testing.samples_extra_creation import (
    creation_perf,
    creation_samples,
    factory_calls,
    like_samples,
    out_tensors,
)
from gems.testing.samples_extra_perf import masked_perf, scalars_perf
from gems.testing.samples_extra_unary import unary_op_samples

__all__ = [
    "BinarySamples",
    "BinaryTraits",
    "alias_samples",
    "binary_op_samples",
    "comparison_samples",
    "creation_perf",
    "creation_samples",
    "factory_calls",
    "like_samples",
    "masked_perf",
    "nonzero_divisor",
    "one_tensor",
    "other_device",
    "out_tensors",
    "result_dtype",
    "scalars_perf",
    "specials_pair",
    "tensor_and_scalar",
    "two_tensors",
    "unary_op_samples",
]
