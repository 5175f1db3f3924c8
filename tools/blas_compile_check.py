"""Compile the blas kernels (gems/ops/blas/) for an NVIDIA GPU target on a machine with no GPU.

The interpreter runs kernels but does not compile them; this catches what only the compiler sees
(dot shapes and dtypes, constexpr branches, types that differ between branches). It selects the
nvidia vendor without its device check, so the kernels are defined for compilation, and compiles each
kernel for every dtype with the nvidia vendor's tune configs. Usage:

    PYTHONPATH=. python -u tools/blas_compile_check.py [--arch 90] [--dtypes fp16,bf16,fp32,fp64] [--all-configs]
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
DTYPES = {"fp16": tl.float32, "bf16": tl.float32, "fp32": tl.float32, "fp64": tl.float64}


def _jit(kernel):
    while not isinstance(kernel, triton.runtime.jit.JITFunction):
        kernel = getattr(kernel, "autotuner", None) or kernel.fn
    return kernel


def _compile(kernel, types: dict, constexprs: dict, arch: int):
    fn = _jit(kernel)
    signature = {name: types.get(name, "i32") for name in fn.arg_names if name not in constexprs}
    signature.update({name: "constexpr" for name in constexprs})
    return triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", arch, 32))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--all-configs", action="store_true", help="every config of each key (default: the first)")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated, of " + ", ".join(DTYPES))
    args = parser.parse_args(argv)
    from gems.runtime import selection

    backend = selection.select("nvidia", explicit=False)
    from gems.ops.blas import diagonal, gemm, grouped_mm, skinny, tuning

    failures = 0
    jobs = []
    for dtype in args.dtypes.split(","):
        acc = DTYPES[dtype]
        acc_name = "fp64" if dtype == "fp64" else "fp32"
        ptr = f"*{dtype}"
        scalar = "i64" if dtype == "fp64" else "fp32"
        gemm_configs, gemv_configs = backend.tune_configs("gemm"), backend.tune_configs("gemv")
        if not args.all_configs:  # the first gemm config that fits an sm_90 block's shared memory, as tuning would
            itemsize = {"fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8}[dtype]
            gemm_configs = [c for c in gemm_configs if tuning._tile_bytes(c, itemsize) <= _SM90_SHARED][:1]
            gemv_configs = gemv_configs[:1]
        for config in gemm_configs:
            for has_bias in (False, True):
                for even_k in (False, True):
                    meta = {**config.kwargs, "EVEN_K": even_k, "HAS_BIAS": has_bias, "SCALED": True,
                            "FP64_SCALARS": dtype == "fp64", "PRECISION": "ieee", "ACC": acc, "INT64": False}
                    jobs.append((f"gemm {dtype} {config}", gemm._gemm_kernel,
                                 {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr, "bias_ptr": ptr, "alpha": scalar,
                                  "beta": scalar}, meta))
        for config in gemv_configs:
            for split in (1, 16):
                meta = {**config.kwargs, "HAS_BIAS": True, "SCALED": True, "FP64_SCALARS": dtype == "fp64",
                        "ACC": acc, "INT64": True, "SPLIT_K": split}
                jobs.append((f"gemv {dtype} {config} split {split}", gemm._gemv_kernel,
                             {"a_ptr": ptr, "x_ptr": ptr, "y_ptr": ptr, "bias_ptr": ptr, "part_ptr": f"*{acc_name}",
                              "alpha": scalar, "beta": scalar}, meta))
        for config in backend.tune_configs("skinny") if args.all_configs else backend.tune_configs("skinny")[:1]:
            for split in (1, 16):
                meta = {**config.kwargs, "HAS_BIAS": True, "SCALED": True, "FP64_SCALARS": dtype == "fp64",
                        "PRECISION": "ieee", "ACC": acc, "INT64": split == 16, "BLOCK_M": 16, "SPLIT_K": split}
                jobs.append((f"skinny {dtype} {config} split {split}", skinny._skinny_kernel,
                             {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr, "bias_ptr": ptr, "part_ptr": f"*{acc_name}",
                              "alpha": scalar, "beta": scalar}, meta))
        jobs.append((f"skinny finish {dtype}", skinny._finish_kernel,
                     {"part_ptr": f"*{acc_name}", "c_ptr": ptr, "bias_ptr": ptr, "alpha": scalar, "beta": scalar},
                     {"HAS_BIAS": True, "SCALED": True, "FP64_SCALARS": dtype == "fp64", "ACC": acc, "INT64": True,
                      "SPLIT_K": 16, "BLOCK": 1024}))
        jobs.append((f"gemv finish {dtype}", gemm._gemv_finish_kernel,
                     {"part_ptr": f"*{acc_name}", "y_ptr": ptr, "bias_ptr": ptr, "alpha": scalar, "beta": scalar},
                     {"HAS_BIAS": True, "SCALED": True, "FP64_SCALARS": dtype == "fp64", "ACC": acc, "INT64": False,
                      "SPLIT_K": 16, "BLOCK_M": 1024}))
        if dtype != "fp64":
            for mode in (0, 1, 2):
                config = backend.tune_configs("gemm")[1]
                jobs.append((f"grouped {dtype} mode {mode}", grouped_mm._grouped_kernel,
                             {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr, "offs_ptr": "*i32"},
                             {**config.kwargs, "GROUP_DIM": mode, "PRECISION": "ieee"}))
        jobs.append((f"tril {dtype}", diagonal._tril_kernel, {"x_ptr": ptr, "out_ptr": ptr},
                     {"INPLACE": False, "BLOCK_M": 32, "BLOCK_N": 64}))
        jobs.append((f"embed {dtype}", diagonal._embed_kernel, {"src_ptr": ptr, "out_ptr": ptr},
                     {"BLOCK_M": 32, "BLOCK_N": 64}))
        jobs.append((f"trace {dtype}", diagonal._diagonal_kernel, {"x_ptr": ptr, "out_ptr": ptr},
                     {"SUM": True, "ACC": acc, "BLOCK": 1024}))
    jobs.append(("gemm fp32 tf32", gemm._gemm_kernel,
                 {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "bias_ptr": "*fp32", "alpha": "fp32",
                  "beta": "fp32"},
                 {**backend.tune_configs("gemm")[0].kwargs, "EVEN_K": True, "HAS_BIAS": False, "SCALED": False,
                  "FP64_SCALARS": False, "PRECISION": "tf32", "ACC": tl.float32, "INT64": True}))
    for name, kernel, types, meta in jobs:
        started = time.perf_counter()
        try:
            _compile(kernel, types, meta, args.arch)
            print(f"ok    {time.perf_counter() - started:5.1f}s  {name}")
        except Exception as exc:  # report every kernel, then fail
            failures += 1
            print(f"FAIL  {name}: {type(exc).__name__}: {str(exc)[:400]}")
    print(f"{len(jobs) - failures} of {len(jobs)} compiled for sm_{args.arch}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
