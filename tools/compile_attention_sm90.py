"""Compile every attention kernel specialization (fp16/bf16/fp32, causal or not, with and without a bias,
P rounded or kept fp32, head dims 64/128) for sm_90 on a machine without a GPU:

    python tools/compile_attention_sm90.py        # prints "ok N fail M" and each failure
"""

import os
import sys

os.environ.pop("TRITON_INTERPRET", None)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from gems.runtime import selection  # noqa: E402

selection._current = selection.load_backend("nvidia")  # the nvidia configs, without its device

from gems.ops.attention import flash, flash_backward  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
TYPES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}


def signature(kernel, pointer_types, constexprs):
    fn = kernel
    while not isinstance(fn, triton.runtime.jit.JITFunction):  # under the Autotuner
        fn = fn.fn
    sig = {}
    for name in fn.arg_names:
        if name in constexprs:
            sig[name] = "constexpr"
        elif name.endswith("_ptr"):
            sig[name] = pointer_types.get(name, pointer_types["default"])
        elif name in ("qk_scale", "empty_lse", "scale"):
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
    return fn, sig


def compile_one(kernel, pointer_types, constexprs, warps, stages):
    fn, sig = signature(kernel, pointer_types, constexprs)
    try:
        options = {"num_warps": warps, "num_stages": stages}
        triton.compile(ASTSource(fn, sig, constexprs), target=TARGET, options=options)
        return None
    except Exception as exc:
        return f"{fn.__name__} {constexprs}: {str(exc)[:800]}"


def main():
    results = []
    for dtype in TYPES:
        pointers = {"default": "*" + TYPES[dtype], "lse_ptr": "*fp32", "delta_ptr": "*fp32"}
        for causal in (False, True):
            for bias in (False, True):
                for round_p in ((True, False) if dtype != torch.float32 else (False,)):
                    for d in (64, 128):
                        common = dict(HEAD_DIM=d, HEAD_DIM_V=d, BLOCK_D=d, BLOCK_DV=d, HAS_BIAS=bias,
                                      IS_CAUSAL=causal, PRECISION="ieee", ROUND_P=round_p)
                        forward = dict(common, INT64=False, BLOCK_M=128, BLOCK_N=64)
                        backward = dict(common, BLOCK_M=64, BLOCK_N=64)
                        results.append(compile_one(flash._attn_fwd_kernel, pointers, forward, 8, 3))
                        results.append(compile_one(flash_backward._bwd_dkdv_kernel, pointers, backward, 4, 2))
                        results.append(compile_one(flash_backward._bwd_dq_kernel, pointers, backward, 4, 2))
        delta = dict(HEAD_DIM_V=128, BLOCK_M=64, BLOCK_DV=128)
        results.append(compile_one(flash_backward._bwd_delta_kernel, pointers, delta, 4, 1))
    failures = [r for r in results if r]
    print("ok", len(results) - len(failures), "fail", len(failures))
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
