"""Rules of the blas family (gems/ops/blas/persistent.py): which GEMM a product takes ("gemm_route", args
M, N, K: thresholds on its 2*M*N*K flops) and the K split of the persistent pointer-mode GEMM
("gemm_persistent").

TMA_MIN_FLOPS, 2^35 (34 GFLOP, ~50 us at the ~650 TFLOP/s an H100 reaches in bf16): the TMA mode's calls
stay on the Python path (its tensor descriptors live in launcher-allocated scratch, which the native
layer cannot replay), ~30-50 us of host time per call; above this the device work hides that host time
even when calls run back to back. PERSISTENT_MIN_FLOPS, 2^30 (~2 us of tensor-core time): below it a
product is launch-bound and gemm.py's GEMM (tuned per shape) serves it. NOT MEASURED yet on a GPU
(tools/gpu_gemm.sh times each path on the models' shapes).
"""

from gems.ops.blas.tuning import multiprocessors
from gems.runtime.launch import cdiv

# A K split leaves each program at least this many BLOCK_K steps (its pipeline stays full) ...
_MIN_STEPS = 8
# ... and at most this many partial sums per output (the second pass reads them all).
_MAX_SPLIT = 16


def _split(args):
    # Tiles that fill at least half the multiprocessors run unsplit; fewer split K until the programs
    # about fill the device (power of two: few compiled variants).
    tiles = cdiv(args["M"], args["BLOCK_M"]) * cdiv(args["N"], args["BLOCK_N"])
    units = multiprocessors(args["a_ptr"].device)
    if 2 * tiles >= units:
        return 1
    split = min(units // tiles, cdiv(args["K"], args["BLOCK_K"]) // _MIN_STEPS, _MAX_SPLIT)
    return 1 << (max(split, 1).bit_length() - 1)


HEURISTICS_CONFIGS = {
    "gemm_route": {"PERSISTENT_MIN_FLOPS": lambda args: 1 << 30, "TMA_MIN_FLOPS": lambda args: 1 << 35},
    "gemm_persistent": {"SPLIT_K": _split},
}
