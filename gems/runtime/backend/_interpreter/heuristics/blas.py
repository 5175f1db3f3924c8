"""Rules of the blas family (gems/ops/blas/persistent.py) on the interpreter: which GEMM a product takes
("gemm_route", args M, N, K) and the K split of the persistent GEMM ("gemm_persistent").

The thresholds are far below the nvidia vendor's so that the quick conformance samples reach every
path in CI (samples_blas' "persistent-*" variants, more than 16 rows and columns, or skinny.py takes them):
24x100x20 (96,000 flops) takes the pointer mode with K split in two, 40x36x48 the pointer mode on four
tiles (its rows are not 16-byte aligned for TMA), 40x72x48 (276,480 flops) the TMA mode, 72x100x72 the pointer
mode on nine tiles whose last splits K in two (72x112x72 the same in TMA mode); products under
2^14 flops (13x19x11) stay on gemm.py's GEMM. Few-row products of 17-64 rows take skinny.py's kernel only with
K of at least 128 (samples_blas' "skinny-*" variants), so that the samples above keep their paths.
"""

from gems.runtime.launch import cdiv


def _plan(args):
    # Programs run one after another here: a split gains nothing, but with 3 or more K steps a one-tile product
    # splits in two, and a product of an odd number of tiles (3 or more) splits its last tile in two, so that
    # both forms of the split and their second pass run in CI. (WHOLE_TILES, SPLIT_K).
    tiles = cdiv(args["M"], args["BLOCK_M"]) * cdiv(args["N"], args["BLOCK_N"])
    if cdiv(args["K"], args["BLOCK_K"]) < 3 or (tiles > 1 and tiles % 2 == 0):
        return tiles, 1
    return tiles - 1, 2


HEURISTICS_CONFIGS = {
    "gemm_route": {"PERSISTENT_MIN_FLOPS": lambda args: 1 << 14, "TMA_MIN_FLOPS": lambda args: 1 << 17,
                   "SKINNY_MAX_ROWS": lambda args: 64 if args["K"] >= 128 else 16},
    "gemm_persistent": {"SPLIT_K": lambda args: _plan(args)[1], "WHOLE_TILES": lambda args: _plan(args)[0]},
}
