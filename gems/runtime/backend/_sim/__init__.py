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
# {operator: {variant, or variant/dtype: reason}}. Conformance reports them as known failures (xfail) of
# this vendor and of vendors built on it; one that starts passing turns red (xpass). Each is a place
# where gems leans on ATen (on a real device ATen computes it), or where ATen's CPU answer, standing in
# for the device's, follows CPU-only rules that gems on an accelerator does not (CUDA's rules).
_ATEN = "gems relies on ATen's {what} here, and ATen has no kernels on this device"
_CPU_ONLY = ("ATen on the CPU (the stand-in for the device's absent ATen) raises {what}; gems on an accelerator "
             "follows ATen's CUDA behaviour, which returns a result")
_ALLCLOSE_RESULTS = ("0d", "atol-only", "broadcast", "contiguous", "defaults", "empty", "equal", "far",
                     "noncontiguous-transposed", "special-values", "special-values-equal-nan", "zero-tolerance")
_INTS = ("int8", "int16", "int32", "int64", "uint8")
device_gaps = {
    "allclose": {variant: _ATEN.format(what="aten::all (allclose reduces isclose's result with it)")
                 for variant in _ALLCLOSE_RESULTS},
    "abs": {"grad": _ATEN.format(what="aten::sgn (in abs's derivative formula)")},
    "clamp": {"grad": _ATEN.format(what="aten::logical_and (in clamp's derivative formula)"),
              "bound-overflow/float16": _CPU_ONLY.format(what="for a float16 bound that overflows")},
    "pow": {"grad": _ATEN.format(what="aten::logical_and (in pow's derivative formula)")},
    "bitwise_and": {"out-wider-dtype/bool": _ATEN.format(what="kernel (gems falls back for a bool out= of a wider "
                                                               "dtype)")},
    "bitwise_or": {"out-wider-dtype/bool": _ATEN.format(what="kernel (gems falls back for a bool out= of a wider "
                                                              "dtype)")},
    "resolve_conj": {"complex-conj-view": _ATEN.format(what="aten::complex (the sample makes a complex tensor)")},
    "resolve_neg": {"imag-of-conj": _ATEN.format(what="aten::complex (the sample makes a complex tensor)")},
    "softmax": {f"{variant}/float16": _CPU_ONLY.format(what="for half-to-float softmax")
                for variant in ("half-to-float", "backward-half-to-float")},
    "div": {f"{variant}/{dtype}": _CPU_ONLY.format(what="ZeroDivisionError for an integer division by zero")
            for variant in ("floor-zero-divisor", "trunc-zero-divisor") for dtype in _INTS},
    "floor_divide": {f"zero-divisor/{dtype}": _CPU_ONLY.format(what="ZeroDivisionError for an integer division "
                                                                    "by zero") for dtype in _INTS},
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
