"""triton.heuristics rules of the copy family (gems/ops/copy/shared.py):

- key "copy_flat" (copies between two tensors of one dense layout: contiguous, channels_last into channels_last):
  BLOCK and num_warps; args n_elements and itemsize (bytes of the wider dtype);
- key "copy" (the tiled kernel, any other pair of layouts): BLOCK_M, BLOCK_N and num_warps; args size_m, size_n
  (the tile's two dimensions, size_n the one the destination walks with stride 1), itemsize and transposed (the
  source walks size_m with stride 1: a tile is read down its columns and written along its rows).

Not yet measured on a GPU (2026-11-26): the flat rule is the pointwise family's measured one (heuristics/
pointwise.py: 0.99x ATen for a 64M fp32 copy on an H200), kept apart so that copies can be tuned alone; tiles
take the same 32 bytes per thread with 4 warps, and 64x64 for transposes (each side coalesced, 16 KB of fp32
staged through shared memory).
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


def _flat_block(args):
    return 1024 if args["n_elements"] < (1 << 22) else max(512, _ROW_BYTES // args["itemsize"])


HEURISTICS_CONFIGS = {
    "copy_flat": {"BLOCK": _flat_block, "num_warps": lambda args: 4},
    "copy": {"BLOCK_M": _block_m, "BLOCK_N": _block_n, "num_warps": lambda args: 4},
}
