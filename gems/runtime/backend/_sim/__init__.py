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
# On the interpreter these pass by the aten-parity rule (gems is no further from the float64 oracle than
# ATen's own result in the same dtype); a device with no ATen answer has only the tolerance rule.
_NO_PARITY = ("outside the dtype's tolerance, as ATen's own CPU result is in the same dtype (the interpreter "
              "passes it by the aten-parity rule); this device has no ATen answer to apply that rule with")
_CPU_STATS = ("ATen on the CPU returns batch norm's saved statistics with another shape or dtype than ATen on "
              "CUDA, whose behaviour gems follows on an accelerator")
_INTS = ("int8", "int16", "int32", "int64", "uint8")
device_gaps = {
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

    # Measured on 2026-11-22 for the operators added that day (quick suite on sim, 230 cases).
    "apply_rotary_position_embedding": {
        "grad/bfloat16": _ATEN.format(what="aten::cat.out"),
        "grad/float16": _ATEN.format(what="aten::cat.out"),
        "grad/float32": _ATEN.format(what="aten::cat.out"),
        "grad/float64": _ATEN.format(what="aten::cat.out"),
    },
    "batch_norm": {
        "eval-empty/bfloat16": _CPU_STATS,
        "eval-empty/float16": _CPU_STATS,
        "eval-empty/float32": _CPU_STATS,
        "eval-empty/float64": _CPU_STATS,
        "legit-no-stats/bfloat16": _CPU_STATS,
        "legit-no-stats/float16": _CPU_STATS,
        "legit-no-training/bfloat16": _CPU_STATS,
        "legit-no-training/float16": _CPU_STATS,
        "legit-no-training/float32": _CPU_STATS,
        "legit-no-training/float64": _CPU_STATS,
        "legit/bfloat16": _CPU_STATS,
        "legit/float16": _CPU_STATS,
        "native-eval/bfloat16": _CPU_STATS,
        "native-eval/float16": _CPU_STATS,
        "native-eval/float32": _CPU_STATS,
        "native-eval/float64": _CPU_STATS,
        "native-train/bfloat16": _CPU_STATS,
        "native-train/float16": _CPU_STATS,
        # gems serves _batch_norm_with_update on every device since normfix (fp32/fp64 pass on sim).
        "with-update/bfloat16": _CPU_STATS,
        "with-update/float16": _CPU_STATS,
    },
    "cummax": {
        "grad-dim0/bfloat16": _ATEN.format(what="aten::scatter_add.out"),
        "grad-dim0/float16": _ATEN.format(what="aten::scatter_add.out"),
        "grad-dim0/float32": _ATEN.format(what="aten::scatter_add.out"),
        "grad-dim0/float64": _ATEN.format(what="aten::scatter_add.out"),
        "grad/bfloat16": _ATEN.format(what="aten::scatter_add.out"),
        "grad/float16": _ATEN.format(what="aten::scatter_add.out"),
        "grad/float32": _ATEN.format(what="aten::scatter_add.out"),
        "grad/float64": _ATEN.format(what="aten::scatter_add.out"),
    },
    "cummin": {
        "grad-dim0/bfloat16": _ATEN.format(what="aten::scatter_add.out"),
        "grad-dim0/float16": _ATEN.format(what="aten::scatter_add.out"),
        "grad-dim0/float32": _ATEN.format(what="aten::scatter_add.out"),
        "grad-dim0/float64": _ATEN.format(what="aten::scatter_add.out"),
        "grad/bfloat16": _ATEN.format(what="aten::scatter_add.out"),
        "grad/float16": _ATEN.format(what="aten::scatter_add.out"),
        "grad/float32": _ATEN.format(what="aten::scatter_add.out"),
        "grad/float64": _ATEN.format(what="aten::scatter_add.out"),
    },
    "cumsum": {
        "grad-dim0/bfloat16": _ATEN.format(what="aten::flip"),
        "grad-dim0/float16": _ATEN.format(what="aten::flip"),
        "grad-dim0/float32": _ATEN.format(what="aten::flip"),
        "grad-dim0/float64": _ATEN.format(what="aten::flip"),
        "grad/bfloat16": _ATEN.format(what="aten::flip"),
        "grad/float16": _ATEN.format(what="aten::flip"),
        "grad/float32": _ATEN.format(what="aten::flip"),
        "grad/float64": _ATEN.format(what="aten::flip"),
    },
    "linalg_vector_norm": {
        "ord-2-special-values/bfloat16": _NO_PARITY,
        "ord-2-special-values/float32": _NO_PARITY,
        "ord-3-special-values/bfloat16": _NO_PARITY,
        "ord-3-special-values/float32": _NO_PARITY,
        "special-values-dim0/bfloat16": _NO_PARITY,
        "special-values-dim0/float32": _NO_PARITY,
        "special-values/bfloat16": _NO_PARITY,
        "special-values/float32": _NO_PARITY,
    },
    "log_softmax": {
        "backward-half-to-float/float16": _CPU_ONLY.format(what="for half-to-float log_softmax"),
        "half-to-float/float16": _CPU_ONLY.format(what="for half-to-float log_softmax"),
    },
    "nll_loss": {
        "cross-entropy-label-smoothing-grad/bfloat16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing-grad/float16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing-grad/float32": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing-grad/float64": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/bfloat16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/float16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/float32": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/float64": _ATEN.format(what="aten::masked_select"),
    },
    "nll_loss2d": {
        "cross-entropy-label-smoothing-grad/bfloat16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing-grad/float16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing-grad/float32": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing-grad/float64": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/bfloat16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/float16": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/float32": _ATEN.format(what="aten::masked_select"),
        "cross-entropy-label-smoothing/float64": _ATEN.format(what="aten::masked_select"),
    },
    "prod": {
        "special-values/bfloat16": _NO_PARITY,
        "special-values/float32": _NO_PARITY,
    },
    "rms_norm": {
        "eps-default-small-values/bfloat16": _NO_PARITY,
        "eps-default-small-values/float16": _NO_PARITY,
        "eps-default-small-values/float32": _NO_PARITY,
    },
    "silu_and_mul": {
        "special-values/bfloat16": _NO_PARITY,
        "special-values/float16": _NO_PARITY,
        "special-values/float32": _NO_PARITY,
    },
    "skip_layer_norm": {
        "perf/float16": _NO_PARITY,  # gems-perf's check of its 4x256 and 8x4096 inputs (2026-11-22)
        "1xN/float16": _NO_PARITY,
        "3d/bfloat16": _NO_PARITY,
        "3d/float16": _NO_PARITY,
        "contiguous/bfloat16": _NO_PARITY,
        "contiguous/float16": _NO_PARITY,
        "eps/bfloat16": _NO_PARITY,
        "eps/float16": _NO_PARITY,
        "grad/bfloat16": _NO_PARITY,
        "grad/float16": _NO_PARITY,
        "long-rows/bfloat16": _NO_PARITY,
        "long-rows/float16": _NO_PARITY,
        "no-weight/bfloat16": _NO_PARITY,
        "no-weight/float16": _NO_PARITY,
        "noncontiguous-permuted/bfloat16": _NO_PARITY,
        "noncontiguous-permuted/float16": _NO_PARITY,
        "noncontiguous/bfloat16": _NO_PARITY,
        "noncontiguous/float16": _NO_PARITY,
        "special-values/float16": _NO_PARITY,
    },
    "std": {
        "special-values-dim0/bfloat16": _NO_PARITY,
        "special-values-dim0/float32": _NO_PARITY,
    },
    # Operators added on 2026-11-22 (fourth session), found by README's worked example on the device:
    # quantile's error cases pass: ATen's checks run before its decomposition reaches the device.
    "quantile": {variant: _ATEN.format(what="gather, lerp and the other operators of quantile's decomposition "
                                            "(gems serves its sort)")
                 for variant in ("0d", "dim-negative-keepdim", "keepdim", "long", "middle-dim", "nan-flat", "nan-row",
                                 "noncontiguous-strided", "noncontiguous-transposed", "out", "q-0d-tensor", "scalar-q",
                                 "single", "special", "tensor-q-dim",
                                 *(f"{kind}-{mode}" for kind in ("flat", "interpolation")
                                   for mode in ("higher", "linear", "lower", "midpoint", "nearest")))},
    "flash_attention_forward": {"*": "ATen has _flash_attention_forward only on CUDA: no answer to compare with "
                                     "here (its cases are skipped on the interpreter for the same reason)"},
    "convolution": {"transposed": _ATEN.format(what="convolution for a transposed convolution (a deliberate "
                                                     "fallback of gems)")},
    "convolution_backward": {"transposed": _ATEN.format(what="convolution_backward for a transposed convolution "
                                                              "(a deliberate fallback of gems)")},
    "sort": {"error-out-dtype": "ATen's answer to an out= of the wrong dtype is computed on the device, where ATen "
                                "has no sort kernel; gems raises ATen's RuntimeError (the interpreter checks it)"},
    "tanh": {
        "grad/float16": _NO_PARITY,
    },
    "trace": {
        "grad/bfloat16": _ATEN.format(what="aten::index_fill_.int_Tensor"),
        "grad/float16": _ATEN.format(what="aten::index_fill_.int_Tensor"),
        "grad/float32": _ATEN.format(what="aten::index_fill_.int_Tensor"),
        "grad/float64": _ATEN.format(what="aten::index_fill_.int_Tensor"),
    },
    # Random operators (gems/ops/random), where ATen's CPU kernels differ from its CUDA ones (2026-11-26).
    "native_dropout": {f"empty/{dtype}": "ATen on the CPU (the stand-in for the device's absent ATen) returns an "
                       "empty input's mask in the input's dtype; gems on an accelerator follows ATen's CUDA kernel, "
                       "whose mask is bool" for dtype in ("bfloat16", "float16", "float32", "float64")},
    "rrelu_with_noise": {f"{variant}/float16": _CPU_ONLY.format(what="NotImplementedError for float16 in training")
                         for variant in ("contiguous", "default-bounds", "odd-shape", "0d", "empty",
                                         "noncontiguous-transposed", "special-values", "generator", "out", "inplace",
                                         "grad")},
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
