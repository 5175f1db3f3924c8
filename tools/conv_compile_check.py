"""Compile the convolution kernels (gems/ops/conv/) for an NVIDIA GPU target on a machine with no GPU.

The interpreter runs kernels but never compiles them; this catches what only the compiler sees (dot
shapes and dtypes, constexpr branches). It selects the nvidia vendor without its device check and
compiles each kernel for every dtype, both reduction schemes and every nvidia "conv" config that fits
an sm_90 block's shared memory (the first one only unless --all-configs). Usage:

    PYTHONPATH=. python -u tools/conv_compile_check.py [--arch 90] [--all-configs]
"""

from __future__ import annotations

import argparse
import sys
import time

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

_SM90_SHARED = 227 * 1024
DTYPES = {"fp16": (tl.float32, 2), "bf16": (tl.float32, 2), "fp32": (tl.float32, 4), "fp64": (tl.float64, 8)}


def _jit(kernel):
    while not isinstance(kernel, triton.runtime.jit.JITFunction):
        kernel = kernel.fn
    return kernel


def _compile(kernel, types: dict, constexprs: dict, arch: int):
    fn = _jit(kernel)
    signature = {name: types.get(name, "i32") for name in fn.arg_names if name not in constexprs}
    signature.update({name: "constexpr" for name in constexprs})
    return triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", arch, 32))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--all-configs", action="store_true")
    args = parser.parse_args(argv)
    from gems.runtime import selection

    backend = selection.select("nvidia", explicit=False)
    from gems.ops.conv import convolution, convolution_backward, implicit_gemm

    jobs = []
    for dtype, (acc, itemsize) in DTYPES.items():
        ptr = f"*{dtype}"
        configs = [c for c in backend.tune_configs("conv") if implicit_gemm._tile_bytes(c, itemsize) <= _SM90_SHARED]
        precision = "tf32" if dtype == "fp32" else "ieee"
        for config in configs if args.all_configs else configs[:1]:
            base = {**config.kwargs, "PRECISION": precision, "ACC": acc}
            for flat in (False, True):
                for int64 in (False, True):
                    for per_image, x_pixels in ((False, False), (True, False), (True, not flat)):
                        jobs.append((f"forward {dtype} flat={flat} int64={int64} per_image={per_image} "
                                     f"x_pixels={x_pixels} {config}", convolution._conv_forward_kernel,
                                     {"x_ptr": ptr, "w_ptr": ptr, "bias_ptr": ptr, "y_ptr": ptr},
                                     {**base, "HAS_BIAS": True, "FLAT": flat, "INT64": int64, "EVEN_C": not flat,
                                      "PER_IMAGE": per_image, "X_PIXELS": x_pixels}))
                    jobs.append((f"grad_input {dtype} flat={flat} int64={int64} {config}",
                                 convolution_backward._conv_dx_kernel,
                                 {"dy_ptr": ptr, "w_ptr": ptr, "dx_ptr": ptr},
                                 {**base, "FLAT": flat, "INT64": int64, "EVEN_K": not flat}))
            jobs.append((f"grad_weight {dtype} {config}", convolution_backward._conv_dw_kernel,
                         {"dy_ptr": ptr, "x_ptr": ptr, "dw_ptr": "*fp64" if dtype == "fp64" else "*fp32"},
                         {**base, "INT64": False}))
        jobs.append((f"grad_bias {dtype}", convolution_backward._conv_db_kernel, {"dy_ptr": ptr, "db_ptr": ptr},
                     {"ACC": acc, "INT64": True, "BLOCK_C": 8, "BLOCK_P": 256}))
        jobs.append((f"sum_splits {dtype}", convolution_backward._sum_splits_kernel,
                     {"part_ptr": "*fp64" if dtype == "fp64" else "*fp32", "out_ptr": ptr}, {"BLOCK": 1024}))
    failures = 0
    for name, kernel, types, meta in jobs:
        started = time.perf_counter()
        try:
            _compile(kernel, types, meta, args.arch)
            print(f"ok    {time.perf_counter() - started:5.1f}s  {name}")
        except Exception as exc:  # report every kernel, then fail
            failures += 1
            print(f"FAIL  {name}: {type(exc).__name__}: {str(exc)[:600]}")
    print(f"{len(jobs) - failures} of {len(jobs)} compiled for sm_{args.arch}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
