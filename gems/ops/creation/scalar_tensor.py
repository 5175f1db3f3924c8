"""scalar_tensor (and scalar_tensor.out): a 0-d tensor holding a number, in the default float dtype unless dtype=
says otherwise (never inferred from the number, unlike full); the number is checked as ATen's Scalar::to checks
it. One launch of the fill kernel, as ATen's empty + fill_."""

import torch

from gems.dtypes import ALL
from gems.ops.creation.fill import factory_samples
from gems.ops.creation.full import full, full_out
from gems.spec import OpSpec, lazy_perf


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full((), s, dtype=torch.get_default_dtype() if dtype is None else dtype, layout=layout, device=device,
                pin_memory=pin_memory)


def scalar_tensor_out(s, *, out):
    return full_out((), s, out=out)


def _scalar_tensor_calls(dtype, device, quick):
    values = [("int-value", 3), ("float-value", -2.75), ("bool-value", True), ("negative-zero", -0.0)]
    if dtype.is_floating_point:
        values += [("nan", float("nan")), ("inf", float("-inf"))]
    if dtype in (torch.int8, torch.uint8):
        # (fp16 and bf16 differ by device: ATen's CUDA kernel refuses 1e6 for fp16, as gems does, and its CPU kernel
        # stores inf into a tensor of one element)
        values.append(("overflow-error", 1e6))
    calls = [(variant, lambda like, v=value: torch.scalar_tensor(v, dtype=like.dtype, device=like.device),
              "scalar_tensor", ()) for variant, value in values]
    calls.append(("out", lambda like, o: torch.ops.aten.scalar_tensor.out(1.5, out=o), "scalar_tensor.out",
                  lambda: (torch.empty(4, dtype=dtype, device=device),)))
    if dtype == torch.float32:  # dtype=None: the default dtype, whatever the number
        calls += [(f"default-dtype-{kind}", lambda like, v=v: torch.scalar_tensor(v, device=like.device),
                   "scalar_tensor", ()) for kind, v in (("int", 7), ("bool", False))]
    return calls


SPECS = [
    OpSpec(
        name="scalar_tensor", family="creation", impls={"scalar_tensor": scalar_tensor,
                                                        "scalar_tensor.out": scalar_tensor_out},
        call=torch.scalar_tensor, samples=factory_samples(_scalar_tensor_calls), dtypes=ALL, tolerance="exact",
        perf=lazy_perf("gems.testing.samples_extra", "creation_perf",
                       lambda like, shape: torch.scalar_tensor(1.5, dtype=like.dtype, device=like.device),
                       shapes="scalar_tensor"),
    ),
]
