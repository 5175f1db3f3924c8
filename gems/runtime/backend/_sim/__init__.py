"""The simulated accelerator: an out-of-tree (PrivateUse1) device, ``sim``, whose memory is host memory.

It is how CI runs the path of an out-of-tree vendor (Ascend's npu, Cambricon's mlu...) on a machine
with no GPU: tensors live on a device that is neither ``cpu`` nor ``cuda``, operators register under
``PrivateUse1``, and the Triton kernels are the interpreter vendor's, run by Triton's interpreter on
the device's tensors. ATen has no kernels on it (gems.simdevice refuses every operator it does not
need to hold tensors), so anything gems does not serve raises NotImplementedError naming it, and
conformance has no ATen answer on the device to compare with.
"""

import dataclasses

from gems.runtime.backend._interpreter import capabilities as _interpreter_capabilities
from gems.runtime.vendor import VendorInfoBase

base_vendor = "interpreter"

vendor_info = VendorInfoBase(
    vendor_name="sim",
    device_name="sim",
    device_query_cmd=None,  # never detected: selected by name (GEMS_VENDOR=sim, --vendor sim)
    dispatch_key="PrivateUse1",
)

capabilities = dataclasses.replace(
    _interpreter_capabilities,
    aten_kernels=False,
    notes=(
        *_interpreter_capabilities.notes,
        "Simulated device 'sim' (PrivateUse1, host memory): ATen has no kernels on it, so there is no ATen "
        "answer on the device; ATen on the CPU stands in only to say whether a call must raise and what it "
        "returns, and the aten-parity rule does not apply.",
    ),
)


# Cases gems cannot pass on a device where ATen has no kernels, found by running the quick suite on it:
# {operator: {variant or "*": reason}}. Conformance reports them as known failures (xfail) of this vendor
# and of vendors built on it; one that starts passing turns red (xpass). Each is a place where gems
# leans on ATen on a real device too (the first three kinds), or where ATen's CPU answer, standing in
# for the device's, follows CPU-only rules that gems on an accelerator does not (the last kind).
_ATEN_ONLY = "gems relies on ATen's {op} here, which has no kernel on a device without ATen"
_CPU_ONLY_ERROR = ("ATen on the CPU (the stand-in for the device's absent ATen) raises {error}; gems on an "
                   "accelerator follows ATen's CUDA behaviour and returns a result")
device_gaps = {
    "allclose": {"*": _ATEN_ONLY.format(op="aten::all (allclose reduces isclose's result with it)")},
    "abs": {"grad": _ATEN_ONLY.format(op="aten::sgn (in abs's derivative formula)")},
    "clamp": {"grad": _ATEN_ONLY.format(op="aten::logical_and (in clamp's derivative formula)"),
              "bound-overflow": _CPU_ONLY_ERROR.format(error="for a float16 bound that overflows")},
    "pow": {"grad": _ATEN_ONLY.format(op="aten::logical_and (in pow's derivative formula)")},
    "bitwise_and": {"out-wider-dtype": _ATEN_ONLY.format(op="kernel (gems falls back for a bool out= of a "
                                                            "wider dtype)")},
    "bitwise_or": {"out-wider-dtype": _ATEN_ONLY.format(op="kernel (gems falls back for a bool out= of a "
                                                           "wider dtype)")},
    "resolve_conj": {"complex-conj-view": _ATEN_ONLY.format(op="aten::complex (the sample builds a complex "
                                                                "tensor on the device)")},
    "div": {variant: _CPU_ONLY_ERROR.format(error="ZeroDivisionError for an integer division by zero")
            for variant in ("floor-zero-divisor", "trunc-zero-divisor")},
    "floor_divide": {"zero-divisor": _CPU_ONLY_ERROR.format(error="ZeroDivisionError for an integer division "
                                                                  "by zero")},
}


def load_device(info):
    """Build the device's extension (once; cached) and register it with torch under the selected vendor's
    device name (``sim``, or ``acme`` for a vendor scaffolded on this one with --device-name acme), before
    gems checks that torch sees it. A real out-of-tree vendor imports its torch plugin here."""
    from gems import simdevice
    from gems.runtime.vendor import VendorError

    try:
        simdevice.load(info.device_name)
    except simdevice.SimDeviceBuildError as exc:
        raise VendorError(f"vendor 'sim': {exc}") from exc
