"""scaled_softmax_forward: softmax(scale * x) over the last dim, what Megatron-style fused attention
kernels compute on the [batch, heads, sq, sk] attention scores (their ``scaled_softmax_cuda.forward``),
in one kernel: softmax's (gems/ops/reduction/softmax.py) with the scale applied in fp32 as each element
is loaded. Any number of dims >= 1 is taken. The reference is the eager composite
``softmax(x.float() * scale, -1).to(x.dtype)`` (fp16/bf16 computed in fp32, as the fused kernels do).
"""

from __future__ import annotations

import torch

from gems.ops.fused.api import api_function
from gems.ops.reduction.softmax import SOFTMAX, forward
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.scaled_softmax_forward"
# fp64 is left to the composite: a Python float reaches the kernel as fp32, and scale * x would lose
# the scale's last 29 bits there.
DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def check_scores(*tensors):
    for t in tensors:
        if t.dim() == 0:
            raise ValueError("scaled softmax takes a tensor of at least 1 dim (softmax over the last), got a 0-d one")
        if t.shape != tensors[0].shape or t.dtype != tensors[0].dtype:
            raise ValueError(f"gradient and softmax result must have one shape and dtype, got {list(t.shape)} "
                             f"{t.dtype} and {list(tensors[0].shape)} {tensors[0].dtype}")


def reference(x, scale):
    check_scores(x)
    wide = torch.promote_types(x.dtype, torch.float32)
    return torch.softmax(x.to(wide) * scale, -1).to(x.dtype)


def _scaled_softmax_forward(x, scale):
    check_scores(x)
    if x.dtype not in DTYPES:
        raise Fallback(f"scaled softmax of {x.dtype} is left to the composite")
    return forward(x, -1, x.dtype, SOFTMAX, float(scale))


scaled_softmax_forward = api_function(NAME, _scaled_softmax_forward, reference,
                                      schema="(Tensor x, float scale) -> Tensor")


def samples(dtype, device, quick):
    """(x, scale): attention-score shapes, rows longer than one block, a strided last dim, special values."""
    from gems.testing.samples import make_tensor
    from gems.testing.samples_norm import case_maker, rg
    from gems.testing.samples_softmax import FULL_LONG_ROW, QUICK_LONG_ROW, softmax_special_rows

    make = lambda s: make_tensor(s, dtype, device)
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    case = case_maker(None)
    return [
        case("bhss", lambda: (make((2, 3, 5, 17)), 0.125), 17),
        case("scale-one", lambda: (make((2, 2, 4, 33)), 1.0), 33),
        case("large-scale", lambda: (make((1, 2, 3, 40)), 8.0), 40),
        case("negative-scale", lambda: (make((1, 2, 3, 40)), -0.5), 40),
        case("long-rows", lambda: (make((1, 2, 2, long)), 0.3), long),
        case("3d", lambda: (make((4, 5, 19)), 0.25), 19),
        case("noncontiguous", lambda: (make((2, 3, 17, 5)).transpose(-1, -2), 0.125), 17),
        case("special-values", lambda: (softmax_special_rows(dtype, device).view(1, 1, 7, 6), 0.125), 6),
        case("empty", lambda: (make((2, 0, 4, 8)), 0.125), 8),
        case("error-0d", lambda: (make(()), 0.125), 1),
        case("grad", lambda: (rg(make((2, 3, 5, 17))), 0.125), 17),
    ]


def perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    return Sample("perf", (make_tensor(shape, dtype, device), 0.125), reduction_size=shape[-1])


SPECS = [
    OpSpec(
        name="scaled_softmax_forward", family="fused", impls={}, api={NAME: scaled_softmax_forward},
        reference=reference, call=scaled_softmax_forward,
        samples=samples,
        dtypes=DTYPES,
        tolerance="reduction",
        deliberate_fallbacks={"grad": "gems.fused kernels have no backward: the eager composite runs"},
        perf=PerfSpec(inputs=perf_inputs, shapes="scaled_softmax",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes")),
    ),
]
