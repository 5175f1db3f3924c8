"""scaled_softmax_backward: the input gradient of y = softmax(scale * x) over the last dim from y and
the gradient g (Megatron-style fused attention's ``scaled_softmax_cuda.backward``), in one kernel:
softmax's backward (gems/ops/reduction/softmax.py) with the result scaled,

    dx = scale * (p - y * sum(p)),   p = g * y, all in fp32

which is scale * y * (g - sum(g * y)) up to rounding, in the form whose zero signs CUDA ATen's softmax
backward has (on every device: the composite below defines them). The reference is that eager composite.
"""

from __future__ import annotations

import torch

from gems.ops.fused.api import api_function
from gems.ops.fused.scaled_softmax_forward import DTYPES, check_scores
from gems.ops.reduction.softmax import backward
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.scaled_softmax_backward"


def reference(grad, y, scale):
    check_scores(grad, y)
    wide = torch.promote_types(grad.dtype, torch.float32)
    p = grad.to(wide) * y.to(wide)
    return ((p - y.to(wide) * p.sum(-1, keepdim=True)) * scale).to(grad.dtype)


def _scaled_softmax_backward(grad, y, scale):
    check_scores(grad, y)
    if grad.dtype not in DTYPES:
        raise Fallback(f"scaled softmax backward of {grad.dtype} is left to the composite")
    # aten_device="cuda": the product-first form on every device, as the composite computes it.
    return backward(grad, y, -1, grad.dtype, False, aten_device="cuda", scale=float(scale),
                    round_product=False)


scaled_softmax_backward = api_function(NAME, _scaled_softmax_backward, reference,
                                       schema="(Tensor grad, Tensor y, float scale) -> Tensor")


def samples(dtype, device, quick):
    """(grad, y, scale) with y a softmax result: y with underflowed zeros among gradients of both signs,
    rows longer than one block, strided tensors."""
    from gems.testing.samples import make_tensor
    from gems.testing.samples_norm import case_maker
    from gems.testing.samples_softmax import FULL_LONG_ROW, QUICK_LONG_ROW

    make = lambda s: make_tensor(s, dtype, device)
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW

    def pair(shape, spread=1.0, scale=0.125):
        y = torch.softmax(make(shape).double() * spread, -1).to(dtype)
        return make(shape), y, scale

    case = case_maker(None)
    return [
        case("bhss", lambda: pair((2, 3, 5, 17)), 17),
        case("scale-one", lambda: pair((2, 2, 4, 33), scale=1.0), 33),
        case("underflowed-probabilities", lambda: pair((2, 2, 4, 300), spread=12.0), 300),
        case("long-rows", lambda: pair((1, 2, 2, long), spread=4.0, scale=0.3), long),
        case("3d", lambda: pair((4, 5, 19), scale=0.25), 19),
        case("noncontiguous", lambda: tuple(t.transpose(-1, -2) if torch.is_tensor(t) else t
                                            for t in pair((2, 3, 17, 5))), 5),
        case("empty", lambda: pair((2, 0, 4, 8)), 8),
        case("error-shape-mismatch", lambda: (make((2, 3, 4, 8)), make((2, 3, 4, 9)), 0.125), 1),
    ]


def perf_inputs(shape, dtype, device):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor

    y = torch.softmax(make_tensor(shape, dtype, device), -1)
    return Sample("perf", (make_tensor(shape, dtype, device), y, 0.125), reduction_size=shape[-1])


SPECS = [
    OpSpec(
        name="scaled_softmax_backward", family="fused", impls={}, api={NAME: scaled_softmax_backward},
        reference=reference, call=scaled_softmax_backward,
        samples=samples,
        dtypes=DTYPES,
        tolerance="reduction",
        perf=PerfSpec(inputs=perf_inputs, shapes="scaled_softmax",
                      bytes=lazy("gems.testing.samples_norm", "io_bytes", 2)),
    ),
]
