"""What every ``gems.fused`` function shares: its calls are counted in ``gems.call_counts()`` under its
API name (``gems.fused.silu_and_mul``), as registered ATen overloads are, so conformance and perf can
prove the gems kernel ran; an input the kernel does not handle runs the eager PyTorch composite
instead, counted as a fallback with its reason.

A function declared ``differentiable`` brings its own backward (a ``torch.autograd.Function`` whose
forward and backward launch gems kernels), so inputs that require grad run the kernels too. The others
have no backward: where autograd would need one (grad enabled and an input that requires grad) the
composite runs, so training stays correct. Under torch.compile the composite is what gets traced
(Dynamo cannot trace a Triton launch of gems' own): the compiler fuses it with its own kernels.
"""

from __future__ import annotations

import functools

import torch

from gems.runtime import registration, selection
from gems.runtime.registration import Fallback


def _tensors(args, kwargs) -> list:
    return [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]


def _check_handled(tensors, differentiable: bool) -> None:
    device = selection.current().device
    if any(t.device.type != device for t in tensors):
        raise Fallback(f"tensors not on the vendor's device type {device!r}")
    if not differentiable and torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise Fallback("an input requires grad and this gems.fused kernel has no backward: the eager composite runs")


def needs_grad(*tensors) -> bool:
    """Whether autograd will want gradients of any of ``tensors`` (None entries are skipped)."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def api_function(name: str, impl, reference, differentiable: bool = False):
    """The public function ``name``: ``impl`` (the gems kernel's launcher), else ``reference``."""
    calls = registration.gems_calls.cell(name)

    @functools.wraps(impl)
    def call(*args, **kwargs):
        if torch.compiler.is_compiling():
            return reference(*args, **kwargs)
        try:
            _check_handled(_tensors(args, kwargs), differentiable)
            out = impl(*args, **kwargs)
        except Fallback as why:
            registration.fallback_calls[name, str(why)] += 1
            return reference(*args, **kwargs)
        calls[0] += 1
        return out

    call.__name__ = call.__qualname__ = name.rpartition(".")[2]
    return call
