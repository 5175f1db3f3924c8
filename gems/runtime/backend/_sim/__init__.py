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
_CUDA_REFUSES = ("ATen on the CPU (the stand-in for the device's absent ATen) {what}; gems on an accelerator follows "
                 "ATen's CUDA kernel, which refuses it")
# On the interpreter these pass by the aten-parity rule (gems is no further from the float64 oracle than
# ATen's own result in the same dtype); a device with no ATen answer has only the tolerance rule.
_NO_PARITY = ("outside the dtype's tolerance, as ATen's own CPU result is in the same dtype (the interpreter "
              "passes it by the aten-parity rule); this device has no ATen answer to apply that rule with")
_CPU_STATS = ("ATen on the CPU returns batch norm's saved statistics with another shape or dtype than ATen on "
              "CUDA, whose behaviour gems follows on an accelerator")
_INTS = ("int8", "int16", "int32", "int64", "uint8")
_CPU_ONLY_ARITHMETIC = ("ATen on the CPU (the stand-in) computes round(decimals=) of fp16/bf16 in fp32; gems on an "
                        "accelerator follows ATen's CUDA kernel, which computes 10^d and x * 10^d in the dtype")
device_gaps = {
    "clamp": {"bound-overflow/float16": _CPU_ONLY.format(what="for a float16 bound that overflows")},
    "bitwise_and": {"out-wider-dtype/bool": _ATEN.format(what="kernel (gems falls back for a bool out= of a wider "
                                                               "dtype)")},
    "bitwise_or": {"out-wider-dtype/bool": _ATEN.format(what="kernel (gems falls back for a bool out= of a wider "
                                                              "dtype)")},
    "bitwise_xor": {"out-wider-dtype/bool": _ATEN.format(what="kernel (gems falls back for a bool out= of a wider "
                                                               "dtype)")},
    "resolve_conj": {"complex-conj-view": _ATEN.format(what="aten::complex (the sample makes a complex tensor)")},
    "resolve_neg": {"imag-of-conj": _ATEN.format(what="aten::complex (the sample makes a complex tensor)")},
    "softmax": {f"{variant}/float16": _CPU_ONLY.format(what="for half-to-float softmax")
                for variant in ("half-to-float", "backward-half-to-float")},
    "div": {f"{variant}/{dtype}": _CPU_ONLY.format(what="ZeroDivisionError for an integer division by zero")
            for variant in ("floor-zero-divisor", "trunc-zero-divisor") for dtype in _INTS},
    "floor_divide": {f"zero-divisor/{dtype}": _CPU_ONLY.format(what="ZeroDivisionError for an integer division "
                                                                    "by zero") for dtype in _INTS},
    # fmod and remainder: the integer zero divisors as floor_divide's. (Their float special values pass: the
    # interpreter's stand-in for libdevice's fmod is C's, exact, since 0253d30.)
    **{op: {f"zero-divisor/{dtype}": _CPU_ONLY.format(what="ZeroDivisionError for an integer division by zero")
            for dtype in _INTS}
       for op in ("fmod", "remainder")},

    # Measured on 2026-11-22 for the operators added that day (quick suite on sim, 230 cases).
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
        # The backward kernel's cases (gems.patch, 2026-11): y is the norm of s rounded to the dtype, as above.
        **{f"{variant}/{dtype}": _NO_PARITY for dtype in ("bfloat16", "float16")
           for variant in ("grad-3d", "grad-long-rows", "grad-many-rows", "grad-input-only", "grad-residual-only",
                           "grad-noncontiguous")},
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
    # Measured on 2026-11-26 (merging the indexing, shape and optim families): where ATen's CPU and CUDA kernels
    # disagree, gems on an accelerator follows CUDA.
    "scatter": {f"{variant}/bool": _CUDA_REFUSES.format(what="computes bool products")
                for variant in ("inplace-reduce", "out-value-reduce", "reduce-multiply", "value-reduce-multiply")},
    "scatter_reduce": {f"{variant}/bool": _CUDA_REFUSES.format(what="computes bool products, maxima and minima")
                       for variant in ("amax", "amax-exclude-self", "amin", "amin-exclude-self", "inplace", "out",
                                       "prod", "prod-exclude-self")},
    "foreach_add": {"tensor-cpu-scalar/float32": _CUDA_REFUSES.format(what="reads a CPU scalar tensor of the "
                                                                         "lists' dtype beside a list on the device")},
    "index_select": {"error-index-2d/float32": _CUDA_REFUSES.format(what="raises IndexError for a 2-d index (CUDA: "
                                                                         "RuntimeError)")},
    # one_hot's class checks (issue #27): ATen checks the classes on the host only on the CPU; on CUDA and
    # out-of-tree devices it leaves them to a device assert in its scatter_, and gems follows the device's rule.
    "one_hot": {variant: "ATen on the CPU (the stand-in for the device's absent ATen) checks the classes on the "
                         "host; on this device ATen checks none (a device assert), and gems follows the device"
                for variant in ("negative-class-error", "class-too-large-error")},
    "trace": {
        "grad/bfloat16": _ATEN.format(what="aten::index_fill_.int_Tensor"),
        "grad/float16": _ATEN.format(what="aten::index_fill_.int_Tensor"),
        "grad/float32": _ATEN.format(what="aten::index_fill_.int_Tensor"),
        "grad/float64": _ATEN.format(what="aten::index_fill_.int_Tensor"),
    },
    # The pointwise unary operators of issue #27 (quick suite on sim, 2026-11-26).
    "digamma": {f"grad/{dtype}": _ATEN.format(what="aten::polygamma (digamma's derivative)")
                for dtype in ("bfloat16", "float16", "float32", "float64")},
    "sgn": {f"grad/{dtype}": _ATEN.format(what="aten::_efficientzerotensor (sgn's derivative of a real tensor)")
            for dtype in ("bfloat16", "float16", "float32", "float64")},
    **{op: {f"grad/{dtype}": f"{op}'s derivative calls {derivative} in fp16/bf16, which ATen's CUDA kernel (and "
                             "gems after it) computes in float32 and float64 only; ATen on the CPU, the stand-in "
                             "here, computes it"
            for dtype in ("bfloat16", "float16")}
       for op, derivative in (("i0", "special_i1"), ("special_i0e", "special_i1e"))},
    "nan_to_num": {f"special-values/{dtype}": _NO_PARITY for dtype in ("bfloat16", "float16", "float32")},
    "round": {"decimals2/float16": _CPU_ONLY_ARITHMETIC, "decimals5/float16": _CPU_ONLY_ARITHMETIC},
    # Random operators (gems/ops/random), where ATen's CPU kernels differ from its CUDA ones (2026-11-26).
    "native_dropout": {f"empty/{dtype}": "ATen on the CPU (the stand-in for the device's absent ATen) returns an "
                       "empty input's mask in the input's dtype; gems on an accelerator follows ATen's CUDA kernel, "
                       "whose mask is bool" for dtype in ("bfloat16", "float16", "float32", "float64")},
    "rrelu_with_noise": {f"{variant}/float16": _CPU_ONLY.format(what="NotImplementedError for float16 in training")
                         for variant in ("contiguous", "default-bounds", "odd-shape", "0d", "empty",
                                         "noncontiguous-transposed", "special-values", "generator", "out", "inplace",
                                         "grad")},
    # The anti-aliased upsampling of issue #26 (quick suite on sim, 2026-11-26; the full suite's core variants too):
    # ATen's CPU kernels refuse fp16/bf16, its CUDA kernels compute them.
    **{f"upsample_{mode}2d_aa{suffix}": {
        f"{variant}/{dtype}": _CPU_ONLY.format(what="NotImplementedError for fp16/bf16 anti-aliased upsampling")
        for variant in variants for dtype in ("bfloat16", "float16")}
       for mode in ("bilinear", "bicubic")
       for suffix, variants in (("", ("upscale", "out", "channels-last")), ("_backward", ("grad", "channels-last")))},
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
