"""_fused_adamw_: one AdamW step over every parameter, in one launch: fused_adam.py's kernel with decoupled
weight decay (``p -= lr * weight_decay * p`` before the update, instead of adding it to the grad); lr a
float or a 0-d tensor (``.tensor_lr``). ``torch.optim.AdamW(fused=True)`` dispatches it."""

import torch

from gems.dtypes import FLOATS
from gems.ops.optim.fused_adam import PER_CALL_SCALARS, adam_step
from gems.spec import OpSpec, lazy, lazy_perf


def fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                 weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    adam_step(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay, eps,
              amsgrad, maximize, grad_scale, found_inf, adamw=True)


fused_adamw_.per_call_scalars = PER_CALL_SCALARS


SPECS = [
    OpSpec(name="fused_adamw", family="optim",
           impls={"_fused_adamw_": fused_adamw_, "_fused_adamw_.tensor_lr": fused_adamw_},
           call=torch._fused_adamw_, samples=lazy("gems.testing.samples_optim", "FusedAdamSamples", adamw=True),
           dtypes=FLOATS, no_launch={"empty-tensors": "every parameter is empty"},
           perf=lazy_perf("gems.testing.samples_optim", "step_perf", "adamw_fused", shapes="optim")),
]
