"""triton.heuristics rules of the pooling family's image tiles: key "pooling" (args as in the nvidia vendor's
heuristics/pooling.py). The interpreter runs programs one after another (about 1 ms each): tiles as large as
the work allows, 2^16 elements at most."""

from gems.runtime.launch import next_power_of_2

_TILE_ELEMENTS = 1 << 16


def _block_c(args):
    return min(next_power_of_2(args["cols"]), _TILE_ELEMENTS)


def _block_r(args):
    return max(1, min(next_power_of_2(args["rows"]), _TILE_ELEMENTS // args["BLOCK_C"]))


HEURISTICS_CONFIGS = {
    "pooling": {"BLOCK_C": _block_c, "BLOCK_R": _block_r, "num_warps": lambda args: 1},
}
