"""triton.heuristics rules of the pooling family's image tiles (gems/ops/pooling/shared.py tile_config): key
"pooling", args rows, cols (the tile walk's rows and columns: columns are the written tensor's innermost dim),
itemsize and channels_last (columns are channels).

Columns take the pointwise family's block (heuristics/pointwise.py), rows the rest of it. A contiguous (NCHW)
walk reads its inputs at computed columns (a window's stride, a source index): Triton 3.6's coalescing pass
sees no contiguity on either tile dim there and then orders lanes along the rows first (argSort keeps dim 0
ahead on a tie; Triton 3.9 takes the last dim), so a tile of 32 rows gives each lane of a warp its own image
row, 32 sectors per load. At most 4 rows per tile keeps 8 or more lanes along a row under either order
(narrow rows, fewer than 32 columns, lie next to each other in memory: up to 128 elements' worth of them).
Warps: 2 elements per thread or more, up to 4 warps.
"""

from gems.runtime.launch import next_power_of_2

_NCHW_ROWS = 4
_NCHW_TILE = 128  # narrow rows: rows per tile up to this many elements


def _block(args):
    if args["rows"] * args["cols"] < (1 << 22):
        return 1024
    return max(512, 4096 // args["itemsize"])


def _block_c(args):
    return min(next_power_of_2(args["cols"]), _block(args))


def _block_r(args):
    rows = min(max(1, _block(args) // args["BLOCK_C"]), next_power_of_2(args["rows"]))
    if args["channels_last"]:
        return rows
    return min(rows, max(_NCHW_ROWS, _NCHW_TILE // args["BLOCK_C"]))


def _num_warps(args):
    return min(4, max(1, args["BLOCK_R"] * args["BLOCK_C"] // 64))


HEURISTICS_CONFIGS = {
    "pooling": {"BLOCK_C": _block_c, "BLOCK_R": _block_r, "num_warps": _num_warps},
}
