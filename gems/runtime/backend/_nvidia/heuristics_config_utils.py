"""triton.heuristics rules per operator key: {key: {constexpr name: function(kernel args) -> value}}.

The rules of a family can live in heuristics/<family>.py instead (heuristics/pointwise.py); a key is
defined in one file only.
"""

import functools

from gems.runtime.launch import cdiv, next_power_of_2

# ---- reductions and softmax (gems/ops/reduction/) ----
# The input is viewed as (n_outer, n_red, n_inner) through its strides. args: "layout" ("rows": the
# reduced elements are the contiguous ones, "cols": n_inner consecutive outputs are contiguous), "n_outer",
# "n_red" (elements combined per output), "n_inner", "n_rows" (outputs = n_outer * n_inner). Rules run in
# order; each sees the values chosen before it. BLOCK_M: outputs per program; BLOCK_K: reduced elements
# per loop step; SPLITS: programs sharing one output (a second pass adds their partial results).
# The values follow from register budgets (no spills in sm_90 PTX) and 32-byte memory sectors; no
# alternatives were swept. What they give on an H200 (reports/nvidia, 2026-11-22, kernel time against
# ATen): sum 1.0-1.2x at 4096x4096 and 1024x65536, softmax 1.5-2.7x at 4096x4096, 1.0-1.5x at 4096x32000.

# Users of the "reduction" key: the shared kernels of gems/ops/reduction (combine.py: sum, mean, prod, amax,
# amin, aminmax, all, any, count_nonzero, linalg_vector_norm, equal, and the inner products of blas/gemm.py: dot,
# vdot, a one-row mv; arg_reduce.py: argmax, argmin, max.dim, min.dim; moments.py: var, std, var_mean). At
# 32768x4096 fp16/bf16 over the last dim: one 4096-element row per program (BLOCK_M 1, BLOCK_K 4096, 8 warps,
# 16-byte loads), 32768 programs, one read of the input.
# Measured on an H100 at fd810e7 (% of the copy bandwidth): sum 93, mean 88-92, amax 70-72, var_mean 68-72,
# argmax 22; middle dim [32, 4096, 1024] (64 consecutive outputs x 64 reduced elements per step, 512
# programs): 77-80, argmax 44-45. What limited them, from sm_90 builds (registers per thread, barriers):
# a cross-lane reduction costs two barriers, and with at most 32 / 40 / 48 / 64 registers per thread a
# program of 8 warps fits 8 / 6 / 5 / 4 times per SM. At f0cab9b (H100: argmax 42%, aminmax 51-58%,
# var_mean 67-69%) the kernels kept a running value per lane across the K loop even when the row fits one
# tile: argmax 63-64 registers, aminmax 56, var_mean 55 (4 programs per SM). A split that fits one BLOCK_K
# tile now takes a ONE_STEP path (no loop): argmax 32, amax 32, sum/mean 20, var_mean 30-32, aminmax 47
# (sm_90 builds, ptxas -v). H100 at 4c36a94 (tools/gpu_redperf.sh, in git history at ca8e18b): sum/mean 93,
# var_mean 92-93, amax 87-88, argmax/argmin 69-72, max.dim 67-69, aminmax 55; middle dim 77-85. Candidate row kernels
# in the same run (tools/gpu_redperf_variants.py, in git history) put the rest down to the finish, not the plan: amax
# 93 with the max
# taken by halving before the order keys (17 registers), argmax 88-90 that way, aminmax 92-93; 2 rows per
# program or a pipelined persistent loop gained nothing. The max/min finishes now halve first
# (planning.halve_extreme): amax 19 registers, argmax 32, aminmax 32 with 5 barriers (sm_90 builds).
# Elements one program loads per loop step: 16 fp32 registers per thread at 8 warps.
_REDUCTION_TILE = 4096
# A softmax row up to this length stays in registers (one read, one write; 32 fp32 values per thread at
# 16 warps); longer rows take the online form, whose second read mostly hits L2.
_SOFTMAX_ONE_PASS = 16384


@functools.cache
def _sm_count():
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def _programs(args, block_m):
    if args["layout"] == "cols":
        return args["n_outer"] * cdiv(args["n_inner"], block_m)
    return cdiv(args["n_rows"], block_m)


def _fill(args, block_m):
    """Halve a rows-layout BLOCK_M while the outputs give fewer than two programs per SM."""
    while block_m > 1 and _programs(args, block_m) < 2 * _sm_count():
        block_m //= 2
    return block_m


def _reduction_block_m(args):
    if args["layout"] == "cols":
        # 64 consecutive outputs: 128-256 contiguous bytes per reduced element.
        return min(next_power_of_2(args["n_inner"]), 64)
    block_k = min(next_power_of_2(args["n_red"]), _REDUCTION_TILE)
    return _fill(args, min(next_power_of_2(args["n_rows"]), max(1, _REDUCTION_TILE // block_k)))


def _reduction_block_k(args):
    return min(next_power_of_2(args["n_red"]), max(1, _REDUCTION_TILE // args["BLOCK_M"]))


def _reduction_splits(args):
    """Split the reduced dim when the outputs alone give too few programs to fill the GPU."""
    programs = _programs(args, args["BLOCK_M"])
    target = 4 * _sm_count()
    if programs >= target // 2:
        return 1
    steps = cdiv(args["n_red"], args["BLOCK_K"])
    # At least 4 loop steps per program, so the second pass stays small next to the first.
    return max(1, min(cdiv(target, programs), steps // 4, 4096))


def _tile_warps(args):
    return max(1, min(8, args["BLOCK_M"] * args["BLOCK_K"] // 256))


def _softmax_block_m(args):
    n_red = next_power_of_2(args["n_red"])
    if args["layout"] == "cols":
        # At least 8 consecutive outputs (a 32-byte sector of fp32); more while a whole column fits.
        return min(next_power_of_2(args["n_inner"]), max(8, min(64, 8192 // n_red)))
    if n_red > _SOFTMAX_ONE_PASS:
        return 1
    return _fill(args, min(next_power_of_2(args["n_rows"]), max(1, 2048 // n_red)))


def _softmax_block_k(args):
    n_red = next_power_of_2(args["n_red"])
    if n_red * args["BLOCK_M"] <= (_SOFTMAX_ONE_PASS if args["layout"] == "rows" else 8192):
        return n_red  # one pass
    return max(1, 4096 // args["BLOCK_M"])  # online: running max and sum, then a second sweep


def _softmax_warps(args):
    tile = args["BLOCK_M"] * args["BLOCK_K"]
    return 4 if tile <= 2048 else (8 if tile <= 4096 else 16)


HEURISTICS_CONFIGS = {
    "reduction": {"BLOCK_M": _reduction_block_m, "BLOCK_K": _reduction_block_k, "SPLITS": _reduction_splits,
                  "num_warps": _tile_warps},
    "softmax": {"BLOCK_M": _softmax_block_m, "BLOCK_K": _softmax_block_k, "num_warps": _softmax_warps},
}
