"""triton.heuristics rules per operator key: {key: {constexpr name: function(kernel args) -> value}}."""

import triton


def _pointwise_block(args):
    # Small tensors: one 1024-element block per program keeps several programs per SM busy.
    # Large tensors: bigger blocks amortize index math; measured on an H100 (see reports/nvidia).
    return 1024 if args["n_elements"] < (1 << 22) else 2048


def _pointwise_warps(args):
    return 4 if args["n_elements"] < (1 << 22) else 8


def _row_block(args):
    return triton.next_power_of_2(args["n_cols"])


HEURISTICS_CONFIGS = {
    "pointwise": {"BLOCK": _pointwise_block, "num_warps": _pointwise_warps},
    "reduction": {"BLOCK": lambda args: min(triton.next_power_of_2(args["n_cols"]), 4096),
                  "num_warps": lambda args: 4 if args["n_cols"] <= 1024 else 8},
    "softmax": {"BLOCK_N": _row_block,
                "num_warps": lambda args: 4 if args["n_cols"] <= 2048 else (8 if args["n_cols"] <= 8192 else 16)},
}
