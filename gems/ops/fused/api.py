"""What every ``gems.fused`` function shares: its calls are counted in ``gems.call_counts()`` under its
API name (``gems.fused.silu_and_mul``), as registered ATen overloads are, so conformance and perf can
prove the gems kernel ran; an input the kernel does not handle runs the eager PyTorch composite
instead, counted as a fallback with its reason.

The kernels have no backward: where autograd would need one (grad enabled and an input that requires
grad) the composite runs, so training stays correct. Under torch.compile the composite is what gets traced
(Dynamo cannot trace a Triton launch of gems' own): the compiler fuses it with its own kernels.
"""

from __future__ import annotations

import functools

import torch

from gems.runtime import registration, selection
from gems.runtime.registration import Fallback


def _check_handled(args, kwargs) -> None:
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
    device = selection.current().device
    if any(t.device.type != device for t in tensors):
        raise Fallback(f"tensors not on the vendor's device type {device!r}")
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise Fallback("an input requires grad and gems.fused kernels have no backward: the eager composite runs")


def api_function(name: str, impl, reference):
    """The public function ``name``: ``impl`` (the gems kernel's launcher), else ``reference``."""
    calls = registration.gems_calls.cell(name)

    @functools.wraps(impl)
    def call(*args, **kwargs):
        if torch.compiler.is_compiling():
            return reference(*args, **kwargs)
        try:
            _check_handled(args, kwargs)
            out = impl(*args, **kwargs)
        except Fallback as why:
            registration.fallback_calls[name, str(why)] += 1
            return reference(*args, **kwargs)
        calls[0] += 1
        return out

    call.__name__ = call.__qualname__ = name.rpartition(".")[2]
    return call
