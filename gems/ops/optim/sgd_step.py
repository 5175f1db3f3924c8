"""sgd_step: torch.optim's SGD step in its foreach form, ``torch.optim.sgd.sgd(..., foreach=True)``. Not one
ATen operator: the step dispatches the ``_foreach_*`` overloads this family serves (``composite_of``:
``_foreach_add_.List`` for the update and momentum, ``_foreach_mul_.Scalar`` for momentum,
``_foreach_add.List`` for weight decay, ``_foreach_neg`` for maximize); this declaration proves each ran
gems, with the result checked against the same step on float64 copies."""

import torch
from torch.optim.sgd import sgd as torch_sgd

from gems.spec import OpSpec, lazy

UPDATE = ("_foreach_add_.List",)
MOMENTUM = ("_foreach_mul_.Scalar",)
WEIGHT_DECAY = ("_foreach_add.List",)
MAXIMIZE = ("_foreach_neg",)


def sgd_foreach_step(params, grads, momentum_buffers, **hyper):
    """One foreach SGD step; returns what it updates (params, grads, momentum buffers)."""
    torch_sgd(params, grads, momentum_buffers, foreach=True, **hyper)
    return params, grads, momentum_buffers


SPECS = [
    OpSpec(name="sgd_step", family="optim", impls={}, composite_of=UPDATE + MOMENTUM + WEIGHT_DECAY + MAXIMIZE,
           call=sgd_foreach_step,
           samples=lazy("gems.testing.samples_optim", "sgd_step_samples", UPDATE, MOMENTUM, WEIGHT_DECAY, MAXIMIZE),
           dtypes=(torch.float32,)),
]
