"""adam_step: torch.optim's Adam step in its foreach form, ``torch.optim.adam.adam(..., foreach=True)``
(capturable=False). Not one ATen operator: the step dispatches the ``_foreach_*`` overloads this family
serves (``composite_of``); this declaration proves each ran gems on the step's device, with the result
checked against the same step on float64 copies. Beside AdamW's overloads, Adam's weight decay adds the
params to the grads (``_foreach_add.List``, in place under maximize)."""

import torch
from torch.optim.adam import adam as torch_adam

from gems.ops.optim.adamw_step import AMSGRAD, CORE, MAXIMIZE
from gems.spec import OpSpec, lazy

WEIGHT_DECAY = ("_foreach_add.List", "_foreach_add_.List")


def adam_foreach_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **hyper):
    """One foreach Adam step; returns what it updates (params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs)."""
    torch_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=True,
                          capturable=False, **hyper)
    return params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs


SPECS = [
    OpSpec(name="adam_step", family="optim", impls={}, composite_of=CORE + AMSGRAD + MAXIMIZE + WEIGHT_DECAY,
           call=adam_foreach_step,
           samples=lazy("gems.testing.samples_optim", "StepSamples", "adam", CORE, AMSGRAD, MAXIMIZE, WEIGHT_DECAY),
           dtypes=(torch.float32,)),
]
