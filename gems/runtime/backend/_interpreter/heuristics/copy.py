"""triton.heuristics rules of the copy family: keys "copy_flat" and "copy" (args as in the nvidia vendor's
heuristics/copy.py).
The interpreter runs programs one after another (about 1 ms each): tiles as large as the work allows."""

from gems.runtime.launch import next_power_of_2

_TILE_ELEMENTS = 1 << 16


def _block_n(args):
    return min(next_power_of_2(args["size_n"]), _TILE_ELEMENTS)


def _block_m(args):
    return max(1, min(next_power_of_2(args["size_m"]), _TILE_ELEMENTS // _block_n(args)))


HEURISTICS_CONFIGS = {
    "copy_flat": {"BLOCK": lambda args: min(next_power_of_2(args["n_elements"]), _TILE_ELEMENTS),
                  "num_warps": lambda args: 1},
    "copy": {"BLOCK_M": _block_m, "BLOCK_N": _block_n, "num_warps": lambda args: 1},
}
