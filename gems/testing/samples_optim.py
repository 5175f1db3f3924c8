"""Samples of the optimizer family (gems/ops/optim/): lists of tensors, and optimizer states. This module
names the generators for the declarations and times the optimizer steps (:func:`step_perf`); they live by
family in samples_optim_foreach.py (the _foreach_* operators), samples_optim_norm.py (_foreach_norm),
samples_optim_fused.py (_fused_adam_, _fused_adamw_, _fused_sgd_) and samples_optim_step.py (adam_step,
adamw_step, sgd_step), their shared pieces (list shapes and lists) in samples_optim_common.py.
"""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.samples_optim_common import aten, tensor_list
from gems.testing.samples_optim_foreach import ForeachSamples
from gems.testing.samples_optim_fused import ADAM, SGD, FusedAdamSamples, fused_sgd_samples
from gems.testing.samples_optim_norm import norm_samples
from gems.testing.samples_optim_step import ADAM_STEP, StepSamples, moments_state, sgd_step_samples

__all__ = [
    "ForeachSamples",
    "FusedAdamSamples",
    "StepSamples",
    "fused_sgd_samples",
    "llama_shapes",
    "norm_samples",
    "sgd_step_samples",
    "step_perf",
]


# ------------------------------------------------------------------------- perf: a model's parameters

def llama_shapes(layers, hidden, intermediate, kv_dim, vocab) -> list:
    """The parameter shapes of a Llama-style model: embedding, per layer q/k/v/o, gate/up/down and two norms,
    the final norm and an untied output head."""
    layer = [(hidden, hidden), (kv_dim, hidden), (kv_dim, hidden), (hidden, hidden), (intermediate, hidden),
             (intermediate, hidden), (hidden, intermediate), (hidden,), (hidden,)]
    return [(vocab, hidden), *(layer * layers), (hidden,), (vocab, hidden)]


def _perf_state(shape, dtype, device, steps_on=None):
    return moments_state(llama_shapes(*shape), dtype, device, steps_on=steps_on)


def step_perf(kind, shapes):
    """The perf declaration of an optimizer step over a model's parameters (``shape``: [layers, hidden,
    intermediate, kv_dim, vocab] of perf/shapes.yaml's ``optim`` key). kind: "adamw_foreach" (torch.optim's
    foreach AdamW, its steps on the CPU as torch.optim keeps them), "adamw_fused", "adam_fused", "sgd_fused".
    bytes: what the update must move, the fused kernel's traffic (params, grads and the state read, params and
    state written), for both forms: the foreach form moves more, which its GB/s shows. The step updates its
    inputs in place, so ATen's and gems' first calls update the same tensors one after the other: the perf
    check cannot compare them (the call returns nothing); conformance checks the values."""
    from gems.spec import PerfSpec

    def inputs(shape, dtype, device):
        if kind == "adamw_foreach":
            from gems.ops.optim.adamw_step import CORE, adamw_foreach_step
            state = _perf_state(shape, dtype, device, steps_on="cpu")
            call = lambda *a, **k: (adamw_foreach_step(*a, **k), None)[1]  # noqa: E731
            return Sample("perf", state, {**ADAM_STEP, "weight_decay": 0.01}, call=call, expects=CORE)
        if kind == "sgd_fused":
            params, grads, bufs = (tensor_list(llama_shapes(*shape), dtype, device) for _ in range(3))
            hyper = {**SGD, "momentum": 0.9}
            return Sample("perf", (params, grads, bufs), hyper, call=torch.ops.aten._fused_sgd_.default,
                          expects="_fused_sgd_")
        name = "_fused_adamw_" if kind == "adamw_fused" else "_fused_adam_"
        return Sample("perf", _perf_state(shape, dtype, device), {**ADAM, "weight_decay": 0.01},
                      call=aten(name), expects=name)

    def bytes_moved(sample, result):
        lists = sample.args[:3] if kind == "sgd_fused" else sample.args[:4]
        written = 2 if kind == "sgd_fused" else 3
        element = sum(t.numel() * t.element_size() for t in lists[0])
        return (len(lists) + written) * element

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
