"""The CPU vendor: the same Triton kernels run by Triton's interpreter on CPU tensors.

It needs no accelerator, so every test, the scaffold, the perf runner and the gate run on it in CI.
Its timings show only that the pipeline works; they say nothing about kernel speed.
"""

import os

import torch

from gems.runtime.vendor import Capabilities, VendorInfoBase

vendor_info = VendorInfoBase(
    vendor_name="interpreter",
    device_name="cpu",
    device_query_cmd=None,
    dispatch_key="CPU",
)

capabilities = Capabilities(
    dtypes=frozenset({
        torch.float16, torch.bfloat16, torch.float32, torch.float64,
        torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
    }),
    multi_config_autotune=False,
    kernels_call_torch=True,
    notes=(
        "bf16 is computed in fp32 (the interpreter has no bf16 arithmetic); casts round to nearest even.",
        "libdevice functions are evaluated by torch on CPU in the kernel's precision.",
        "Autotuned kernels (gemm, gemv) run the first config of their tune_configs.yaml list: the interpreter "
        "cannot benchmark configs against one another.",
        "Timings are wall-clock times of a Python emulator: they only show that the pipeline works.",
    ),
)


def activate():
    """Turn the interpreter on before any kernel is defined, then patch what it lacks."""
    os.environ["TRITON_INTERPRET"] = "1"
    from gems.runtime.backend._interpreter import interpreter_support

    interpreter_support.install()
