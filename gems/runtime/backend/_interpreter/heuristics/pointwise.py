"""triton.heuristics rules of the pointwise family: key "pointwise". The interpreter runs programs one
after another in Python (about 1 ms each), so blocks are as large as the work allows."""

from gems.runtime.launch import next_power_of_2


def _flat_block(args):
    return min(next_power_of_2(args["n_elements"]), 1 << 16)


HEURISTICS_CONFIGS = {
    "pointwise": {"BLOCK": _flat_block, "num_warps": lambda args: 1},
}
