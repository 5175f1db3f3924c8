"""triton.heuristics rules per operator key: {key: {constexpr name: function(kernel args) -> value}}."""

from gems.runtime.launch import next_power_of_2


def _pointwise_block(args):
    # Small tensors: one 1024-element block per program keeps several programs per SM busy.
    # Large tensors: bigger blocks amortize index math; measured on an H100 (see reports/nvidia).
    return 1024 if args["n_elements"] < (1 << 22) else 2048


def _pointwise_warps(args):
    return 4 if args["n_elements"] < (1 << 22) else 8


# ---- reductions and softmax (gems/ops/reduction.py, gems/ops/softmax.py) ----
# The input is viewed as (n_outer, n_red, n_inner) through its strides. args: "layout" ("rows": the
# reduced elements are the contiguous ones, "cols": n_inner consecutive outputs are contiguous), "n_outer",
# "n_red" (elements combined per output), "n_inner", "n_rows" (outputs = n_outer * n_inner). Rules run in
# order; each sees the values chosen before it. BLOCK_M: outputs per program; BLOCK_K: reduced elements
# per loop step; SPLITS: programs sharing one output (a second pass adds their partial results).
# Not yet measured on a GPU: the values follow from register budgets and 32-byte memory sectors.

# Elements one program loads per loop step: 16 fp32 registers per thread at 8 warps.
_REDUCTION_TILE = 4096
# A softmax row up to this length stays in registers (one read, one write); longer rows loop twice.
_SOFTMAX_ONE_PASS = 8192


@functools.cache
def _sm_count():
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


# Plain arithmetic: triton.cdiv and triton.next_power_of_2 are slow to call from Python (triton 3.6).
def _np2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _cdiv(a, b):
    return -(-a // b)


def _reduction_block_m(args):
    if args["layout"] == "cols":
        # 64 consecutive outputs: 128-256 contiguous bytes per reduced element.
        return min(_np2(args["n_inner"]), 64)
    return min(_np2(args["n_rows"]), max(1, _REDUCTION_TILE // min(_np2(args["n_red"]), _REDUCTION_TILE)))


def _reduction_block_k(args):
    return min(_np2(args["n_red"]), max(1, _REDUCTION_TILE // args["BLOCK_M"]))


def _reduction_splits(args):
    """Split the reduced dim when the outputs alone give too few programs to fill the GPU."""
    if args["layout"] == "cols":
        programs = args["n_outer"] * _cdiv(args["n_inner"], args["BLOCK_M"])
    else:
        programs = _cdiv(args["n_rows"], args["BLOCK_M"])
    target = 4 * _sm_count()
    if programs >= target // 2:
        return 1
    steps = _cdiv(args["n_red"], args["BLOCK_K"])
    # At least 4 loop steps per program, so the second pass stays small next to the first.
    return max(1, min(_cdiv(target, programs), steps // 4, 4096))


def _tile_warps(args):
    return max(1, min(8, args["BLOCK_M"] * args["BLOCK_K"] // 256))


def _softmax_block_m(args):
    n_red = _np2(args["n_red"])
    if args["layout"] == "cols":
        # At least 8 consecutive outputs (a 32-byte sector of fp32); more while a whole column fits.
        return min(_np2(args["n_inner"]), max(8, min(64, _SOFTMAX_ONE_PASS // n_red)))
    if n_red > _SOFTMAX_ONE_PASS:
        return 1
    return min(_np2(args["n_rows"]), max(1, 2048 // n_red))


def _softmax_block_k(args):
    n_red = _np2(args["n_red"])
    if n_red * args["BLOCK_M"] <= max(_SOFTMAX_ONE_PASS, 2048):
        return n_red  # one pass
    return max(1, 4096 // args["BLOCK_M"])  # online: running max and sum, then a second sweep


def _softmax_warps(args):
    tile = args["BLOCK_M"] * args["BLOCK_K"]
    return 4 if tile <= 2048 else (8 if tile <= 4096 else 16)


HEURISTICS_CONFIGS = {
    "pointwise": {"BLOCK": _pointwise_block, "num_warps": _pointwise_warps},
    "reduction": {"BLOCK_M": _reduction_block_m, "BLOCK_K": _reduction_block_k, "SPLITS": _reduction_splits,
                  "num_warps": _tile_warps},
    "softmax": {"BLOCK_M": _softmax_block_m, "BLOCK_K": _softmax_block_k, "num_warps": _softmax_warps},
}
