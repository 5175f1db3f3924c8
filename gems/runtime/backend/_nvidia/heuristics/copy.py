"""triton.heuristics rules of the copy family (gems/ops/copy/shared.py: copy_, _to_copy, clone and the other
copies whose layouts differ): key "copy", args size_m, size_n (the tile's two dimensions, size_n the one the
destination walks with stride 1), itemsize (bytes of the wider dtype) and transposed (the source walks size_m
with stride 1: a tile is read down its columns and written along its rows).

Not yet measured on a GPU (2026-11-24): the values follow the pointwise family's measured 32 bytes per thread
with 4 warps, and a 64x64 tile for transposes (each side coalesced, 16 KB of fp32 staged through shared memory).
"""

from gems.runtime.launch import next_power_of_2

_ROW_BYTES = 4096  # bytes per program along the destination's rows (the pointwise family's large-tensor block)
_TRANSPOSE_TILE = 64


def _elements(args):
    return max(1024, _ROW_BYTES // args["itemsize"])


def _block_n(args):
    cap = _TRANSPOSE_TILE if args["transposed"] else _elements(args)
    return min(next_power_of_2(args["size_n"]), cap)


def _block_m(args):
    per_program = _TRANSPOSE_TILE * _TRANSPOSE_TILE if args["transposed"] else _elements(args)
    return max(1, min(next_power_of_2(args["size_m"]), per_program // _block_n(args)))


HEURISTICS_CONFIGS = {
    "copy": {"BLOCK_M": _block_m, "BLOCK_N": _block_n, "num_warps": lambda args: 4},
}
