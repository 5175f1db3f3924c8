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


def load_device():
    """Build the device's extension (once; cached) and register ``sim`` with torch, before gems checks
    that torch sees the device. A real out-of-tree vendor imports its torch plugin here."""
    from gems import simdevice
    from gems.runtime.vendor import VendorError

    try:
        simdevice.load()
    except simdevice.SimDeviceBuildError as exc:
        raise VendorError(f"vendor 'sim': {exc}") from exc
