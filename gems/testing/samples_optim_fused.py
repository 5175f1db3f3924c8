"""Samples of the fused optimizer steps: _fused_adam_, _fused_adamw_ and _fused_sgd_, over the family's lists
with their states."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor
from gems.testing.samples_optim_common import (
    FULL_SHAPES,
    MANY,
    QUICK_SHAPES,
    STEPS,
    aten,
    tensor_list,
)

ADAM = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "weight_decay": 0.0, "eps": 1e-8, "amsgrad": False,
        "maximize": False}


def moderate_special_values(dtype, device):
    """NaN, infinities, signed zeros and moderate numbers: no square of them overflows fp32 (an optimizer
    squares its grads in fp32 where the float64 oracle would not overflow)."""
    values = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 1e3, -1e3]
    return torch.tensor(values, dtype=torch.float64).to(dtype).to(device)


def _steps(n, device, first=False):
    return [torch.tensor(1.0 if first else STEPS[i % len(STEPS)], device=device) for i in range(n)]


def _device_scalar_call(call, dtype=torch.float32, **scalars):
    """The call with 0-d tensors (grad_scale, found_inf, lr; float32) made on the params' device at call time:
    a sample's own tensors would become float64 in the oracle, which ATen's fused kernels refuse."""
    def with_scalars(*lists, **kwargs):
        device = lists[0][0].device
        made = {k: torch.tensor(v, dtype=dtype, device=device if k != "lr_cpu" else "cpu")
                for k, v in scalars.items()}
        if "lr_cpu" in made:
            made["lr"] = made.pop("lr_cpu")
        return call(*lists, **kwargs, **made)
    return with_scalars


@dataclass(frozen=True)
class FusedAdamSamples:
    """_fused_adam_ (adamw False) and _fused_adamw_: a step over the family's list shapes with its state
    (exp_avg_sqs and max_exp_avg_sqs non-negative, steps 1 to 100). In every dtype: weight decay with amsgrad
    and maximize, and grad_scale (grads unscaled and written back) with lr as a device tensor
    (``.tensor_lr``); in float32 also the plain step, each option alone, found_inf 1 (the step is skipped)
    and 0, a first step, special grads, many tensors, transposed (column-major) lists, lr as a CPU tensor, empty
    tensors, and ATen's errors (a state tensor of another dtype, a float64 grad_scale). Lists of unequal length
    are left out: ATen's CUDA kernel indexes them unchecked (gems raises ATen's CPU error), and so are lists of
    different strides: ATen's CPU kernel computes them, its CUDA one refuses them, as gems does
    (tests/test_optim.py checks both)."""

    adamw: bool

    def __call__(self, dtype, device, quick):
        name = "_fused_adamw_" if self.adamw else "_fused_adam_"
        shapes = QUICK_SHAPES if quick else FULL_SHAPES
        state = lambda shapes=shapes, **kw: _adam_state(shapes, dtype, device, **kw)  # noqa: E731

        def sample(variant, make=state, overload=name, scalar_dtype=torch.float32, **options):
            scalars = {k: options.pop(k) for k in ("grad_scale", "found_inf", "lr", "lr_cpu") if k in options}
            op = aten(overload)
            call = _returning_lists(_device_scalar_call(op, scalar_dtype, **scalars) if scalars else op)
            kwargs = {**ADAM, **options}
            if "lr" in scalars or "lr_cpu" in scalars:
                kwargs.pop("lr")
            return Sample(variant, make, kwargs, call=call, expects=overload)

        tensor_lr = f"{name}.tensor_lr"
        cases = [sample("all", weight_decay=0.1, amsgrad=True, maximize=True),
                 sample("grad-scale", grad_scale=1024.0, overload=tensor_lr, lr=0.01)]
        if dtype == REJECT_HOST_DTYPE:
            cases += [sample("default"), sample("tensor-lr", overload=tensor_lr, lr=0.01),
                      sample("weight-decay", weight_decay=0.1), sample("amsgrad", amsgrad=True),
                      sample("maximize", maximize=True), sample("found-inf", found_inf=1.0, amsgrad=True),
                      sample("found-inf-zero", found_inf=0.0), sample("first-step", lambda: state(first=True)),
                      sample("special", lambda: state(special=True)), sample("many", lambda: state(MANY)),
                      sample("transposed", lambda: state(transposed=True), amsgrad=True),
                      sample("tensor-lr-cpu", overload=tensor_lr, lr_cpu=0.01),
                      sample("empty-tensors", lambda: state([(0,), (0, 3)])),
                      sample("error-state-dtype", lambda: state(odd_state=torch.float64)),
                      sample("error-grad-scale-dtype", grad_scale=1024.0, scalar_dtype=torch.float64)]
        return cases


def _returning_lists(op):
    """The fused step, returning every list it updates (params, grads, exp_avgs, exp_avg_sqs, max). Without
    amsgrad the max list is passed empty, as torch.optim does (ATen's CPU kernel refuses another)."""
    def step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, **kwargs):
        maxima = max_exp_avg_sqs if kwargs["amsgrad"] else []
        op(params, grads, exp_avgs, exp_avg_sqs, maxima, steps, **kwargs)
        return params, grads, exp_avgs, exp_avg_sqs, maxima
    return step


def column_major(tensors):
    """The same values, their 2-d tensors stored column by column (a transposed layout: dense, not contiguous)."""
    return [t.t().contiguous().t() if t.dim() == 2 else t for t in tensors]


def _adam_state(shapes, dtype, device, first=False, special=False, odd_state=None, transposed=False):
    params = tensor_list(shapes, dtype, device)
    grads = tensor_list(shapes, dtype, device)
    if special:
        grads[0] = moderate_special_values(dtype, device)
        params[0] = make_tensor(grads[0].shape, dtype, device)
    exp_avgs = [make_tensor(p.shape, dtype, device) for p in params]
    exp_avg_sqs = [make_tensor(p.shape, dtype, device, low=0.0) for p in params]
    max_exp_avg_sqs = [make_tensor(p.shape, dtype, device, low=0.0) for p in params]
    if odd_state is not None:  # one state tensor of another dtype: ATen refuses the lists
        exp_avgs[1] = exp_avgs[1].to(odd_state)
    lists = (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs)
    if transposed:  # every list alike (ATen's CUDA kernels refuse lists of different strides)
        lists = tuple(map(column_major, lists))
    return *lists, _steps(len(params), device, first)


SGD = {"weight_decay": 0.0, "momentum": 0.0, "lr": 0.05, "dampening": 0.0, "nesterov": False, "maximize": False,
       "is_first_step": False}


def fused_sgd_samples():
    """The generator of _fused_sgd_'s samples (declarations name a factory, gems.spec.lazy)."""
    return _fused_sgd_samples


def _fused_sgd_samples(dtype, device, quick):
    """_fused_sgd_ over the family's list shapes: in every dtype nesterov with weight decay and maximize, and
    momentum with dampening, grad_scale and lr as a device tensor; in float32 also the plain step (no
    momentum: an empty buffer list), momentum alone, lr as a device tensor alone, a first step (the buffers
    start as the grads), found_inf 1 and 0, many tensors, transposed (column-major) lists, lr as a CPU tensor,
    empty tensors, and ATen's
    errors (buffers without momentum, momentum without buffers, a buffer of another dtype)."""
    shapes = QUICK_SHAPES if quick else FULL_SHAPES

    def state(shapes=shapes, odd_buffer=None, transposed=False):
        params, grads, bufs = (tensor_list(shapes, dtype, device) for _ in range(3))
        if odd_buffer is not None:
            bufs[1] = bufs[1].to(odd_buffer)
        return tuple(map(column_major, (params, grads, bufs))) if transposed else (params, grads, bufs)

    def sample(variant, make=state, overload="_fused_sgd_", scalar_dtype=torch.float32, **options):
        scalars = {k: options.pop(k) for k in ("grad_scale", "found_inf", "lr", "lr_cpu") if k in options}
        op = aten(overload)
        call = _device_scalar_call(op, scalar_dtype, **scalars) if scalars else op
        kwargs = {**SGD, **options}
        if "lr" in scalars or "lr_cpu" in scalars:
            kwargs.pop("lr")
        # torch.optim passes the buffers with momentum only; the error variants pass the other combination
        keep = (options.get("momentum", 0.0) != 0) != variant.startswith("error-momentum")
        keep = keep or variant == "error-buffers-without-momentum"

        def step(params, grads, bufs, **kw):
            bufs = bufs if keep else []
            call(params, grads, bufs, **kw)
            return params, grads, bufs

        return Sample(variant, make, kwargs, call=step, expects=overload)

    momentum = {"momentum": 0.9, "dampening": 0.1}
    cases = [sample("nesterov", momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True),
             sample("grad-scale", grad_scale=512.0, overload="_fused_sgd_.tensor_lr", lr=0.05, **momentum)]
    if dtype == REJECT_HOST_DTYPE:
        cases += [sample("default"), sample("momentum", **momentum),
                  sample("tensor-lr", overload="_fused_sgd_.tensor_lr", lr=0.05, **momentum),
                  sample("first-step", is_first_step=True, **momentum),
                  sample("found-inf", found_inf=1.0, **momentum), sample("found-inf-zero", found_inf=0.0),
                  sample("many", lambda: state(MANY), **momentum),
                  sample("transposed", lambda: state(transposed=True), **momentum),
                  sample("tensor-lr-cpu", overload="_fused_sgd_.tensor_lr", lr_cpu=0.05),
                  sample("empty-tensors", lambda: state([(0,), (0, 3)])),
                  sample("error-buffers-without-momentum"), sample("error-momentum-without-buffers", momentum=0.9),
                  sample("error-buffer-dtype", lambda: state(odd_buffer=torch.float64), **momentum)]
    return cases
