"""triton.heuristics rules per operator key: {key: {constexpr name: function(kernel args) -> value}}.

The interpreter runs programs one after another in Python (about 1 ms each), so blocks are as large
as the work allows: few programs, each a big numpy operation.
"""

import triton


def _flat_block(args):
    return min(triton.next_power_of_2(args["n_elements"]), 1 << 16)


HEURISTICS_CONFIGS = {
    "pointwise": {"BLOCK": _flat_block, "num_warps": lambda args: 1},
    "reduction": {"BLOCK": lambda args: min(triton.next_power_of_2(args["n_cols"]), 1 << 14),
                  "num_warps": lambda args: 1},
    "softmax": {"BLOCK_N": lambda args: triton.next_power_of_2(args["n_cols"]), "num_warps": lambda args: 1},
}
