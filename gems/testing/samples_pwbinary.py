"""Sample generators of the binary and ternary pointwise operators that the generic binary records of
:mod:`gems.testing.samples_extra` do not cover: three-tensor operators (addcmul, addcdiv, lerp with a
tensor weight) and the inputs ATen refuses by dtype. Same signature and habits as the other
generators: ``samples(dtype, device, quick) -> list[Sample]``, lazy, variant names independent of the
device."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, _with_out, make_tensor, shape_for, special_values
from gems.testing.samples_extra import _INPLACE_WIDER, _WIDER, _refused_out_dtype, _strided_empty, other_device


def integer_input_error_samples(call, operands=2):
    """``call`` on int32 and on bool tensors, which ATen refuses for a floating-only operator
    (NotImplementedError); listed once, under float32."""

    def samples(dtype, device, quick):
        if dtype != REJECT_HOST_DTYPE:
            return []
        return [Sample(f"error-{str(bad).replace('torch.', '')}-input",
                       lambda bad=bad: tuple(make_tensor((3, 4), bad, device) for _ in range(operands)), call=call)
                for bad in (torch.int32, torch.bool)]

    return samples
