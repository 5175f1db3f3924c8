"""adamw_step: torch.optim's AdamW step in its foreach form, ``torch.optim.adamw.adamw(..., foreach=True)``
(capturable=False, as torch.optim runs it by default on a GPU). It is not one ATen operator: the step
dispatches the ``_foreach_*`` overloads this family serves (``composite_of``), one launch each, and this
declaration proves that every one of them ran gems on the step's device, with the updated params and
moments checked against the same step on float64 copies. Its perf case is the issue's "AdamW step over a
1B-parameter model, foreach form" (the fused form: fused_adamw.py)."""

from torch.optim.adamw import adamw as torch_adamw

from gems.dtypes import FLOATS
from gems.spec import OpSpec, lazy, lazy_perf

# What the step dispatches on the parameters' device (the steps themselves are counted on the CPU).
CORE = ("_foreach_lerp_.Scalar", "_foreach_mul_.Scalar", "_foreach_addcmul_.Scalar", "_foreach_sqrt",
        "_foreach_div_.ScalarList", "_foreach_add_.Scalar", "_foreach_addcdiv_.ScalarList")
AMSGRAD = ("_foreach_maximum_.List",)
MAXIMIZE = ("_foreach_neg",)


def adamw_foreach_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **hyper):
    """One foreach AdamW step; returns what it updates (params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs)."""
    torch_adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=True,
                            capturable=False, **hyper)
    return params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs


SPECS = [
    OpSpec(name="adamw_step", family="optim", impls={}, composite_of=CORE + AMSGRAD + MAXIMIZE,
           call=adamw_foreach_step,
           samples=lazy("gems.testing.samples_optim", "StepSamples", "adamw", CORE, AMSGRAD, MAXIMIZE),
           dtypes=FLOATS,
           perf=lazy_perf("gems.testing.samples_optim", "step_perf", "adamw_foreach", shapes="optim")),
]
