"""Samples of the CompositeImplicitAutograd poolings (F.max_pool2d, the 1-d poolings): the overloads they
decompose into run gems, forward and backward."""

from __future__ import annotations

import torch.nn.functional as F

from gems.spec import Sample
from gems.testing.samples_pooling_common import IMAGE, maker

# name -> (call, the overloads it reaches: forward, backward, arguments after the input)
_COMPOSITES = {
    "avg_pool1d": (F.avg_pool1d, "avg_pool2d", (3, 2, 1)),
    "max_pool1d": (F.max_pool1d, "max_pool2d_with_indices", (3, 2, 1)),
    "max_pool2d": (F.max_pool2d, "max_pool2d_with_indices", (3, 2, 1)),
    "adaptive_avg_pool1d": (F.adaptive_avg_pool1d, "_adaptive_avg_pool2d", (4,)),
    "adaptive_max_pool1d": (F.adaptive_max_pool1d, "adaptive_max_pool2d", (4,)),
}


def composite_samples(name):
    """A CompositeImplicitAutograd pooling (F.max_pool2d, the 1-d poolings): the overloads it decomposes into
    run gems, forward and backward."""
    call, forward, args = _COMPOSITES[name]
    rank = 4 if name.endswith("2d") else 3

    def samples(dtype, device, quick):
        make = maker(dtype, device)
        shape = IMAGE[4 - rank:] if rank == 3 else IMAGE
        cases = [
            Sample("basic", lambda: (make(shape), *args), call=call, expects=forward, reduction_size=3),
            Sample("unbatched", lambda: (make(shape[1:]), *args), call=call, expects=forward, reduction_size=3),
            Sample("grad", lambda: (make(shape, grad=True), *args), call=call, grad=True, reduction_size=3,
                   expects=(forward, f"{forward}_backward")),
        ]
        if name.startswith("max"):
            cases.append(Sample("return-indices", lambda: (make(shape), *args), {"return_indices": True}, call=call,
                                expects=forward))
        return cases

    return samples
