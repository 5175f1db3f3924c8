"""Samples of torch.optim's foreach steps as operators (gems/ops/optim/adam_step.py, adamw_step.py,
sgd_step.py): adam_step, adamw_step and sgd_step."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE
from gems.testing.samples_optim_common import (
    FULL_SHAPES,
    QUICK_SHAPES,
    STEPS,
    tensor_list,
)

ADAM_STEP = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "amsgrad": False, "maximize": False}


def moments_state(shapes, dtype, device, amsgrad=False, steps_on=None, first=False):
    """params, grads, exp_avgs, exp_avg_sqs (>= 0.5: denominators stay clear of eps in fp16), max_exp_avg_sqs
    (empty without amsgrad, as torch.optim keeps them) and 0-d float32 steps (on ``steps_on``)."""
    params, grads, exp_avgs = (tensor_list(shapes, dtype, device) for _ in range(3))
    exp_avg_sqs = tensor_list(shapes, dtype, device, positive=True)
    maxima = tensor_list(shapes, dtype, device, positive=True) if amsgrad else []
    steps = [torch.tensor(0.0 if first else STEPS[i % len(STEPS)], device=steps_on or device)
             for i in range(len(params))]
    return params, grads, exp_avgs, exp_avg_sqs, maxima, steps


@dataclass(frozen=True)
class StepSamples:
    """adam_step / adamw_step (kind "adam" / "adamw"): torch.optim's foreach step over the family's list
    shapes, each sample expecting the overloads it dispatches (core, plus those of amsgrad, maximize and, for
    Adam, weight decay). In every dtype the default step; in float32 also amsgrad, maximize, the first step
    and Adam's weight decay (out of place, and in place under maximize)."""

    kind: str
    core: tuple
    amsgrad: tuple
    maximize: tuple
    weight_decay: tuple = ()

    def __call__(self, dtype, device, quick):
        shapes = QUICK_SHAPES if quick else FULL_SHAPES
        default_wd = 0.01 if self.kind == "adamw" else 0.0

        def sample(variant, expects, first=False, **options):
            hyper = {**ADAM_STEP, "weight_decay": default_wd, **options}
            make = lambda: moments_state(shapes, dtype, device, hyper["amsgrad"], first=first)  # noqa: E731
            return Sample(variant, make, hyper, expects=expects)

        cases = [sample("default", self.core)]
        if dtype == REJECT_HOST_DTYPE:
            cases += [sample("amsgrad", self.core + self.amsgrad, amsgrad=True),
                      sample("maximize", self.core + self.maximize, maximize=True),
                      sample("first-step", self.core, first=True)]
            if self.weight_decay:
                out_of_place, in_place = self.weight_decay
                cases += [sample("weight-decay", self.core + (out_of_place,), weight_decay=0.01),
                          sample("weight-decay-maximize", self.core + self.maximize + (in_place,), weight_decay=0.01,
                                 maximize=True)]
        return cases


def sgd_step_samples(update, momentum, weight_decay, maximize):
    """sgd_step: torch.optim's foreach SGD step, each sample expecting the overloads it dispatches."""

    def samples(dtype, device, quick):
        shapes = QUICK_SHAPES if quick else FULL_SHAPES

        def sample(variant, expects, buffers=True, **options):
            hyper = {"weight_decay": 0.0, "momentum": 0.0, "lr": 0.05, "dampening": 0.0, "nesterov": False,
                     "maximize": False, **options}

            def make():
                params, grads = tensor_list(shapes, dtype, device), tensor_list(shapes, dtype, device)
                bufs = tensor_list(shapes, dtype, device) if buffers else [None] * len(params)
                return params, grads, bufs
            return Sample(variant, make, hyper, expects=expects)

        cases = [sample("momentum", update + momentum, momentum=0.9, dampening=0.1)]
        if dtype == REJECT_HOST_DTYPE:
            cases += [sample("default", update, buffers=False),
                      sample("weight-decay", update + weight_decay, buffers=False, weight_decay=0.01),
                      sample("nesterov-maximize", update + momentum + maximize, momentum=0.9, nesterov=True,
                             weight_decay=0.01, maximize=True),
                      sample("first-momentum-step", update, buffers=False, momentum=0.9)]
        return cases

    return samples
