"""Rules of the blas family (gems/ops/blas/persistent.py): which GEMM a product takes ("gemm_route", args
M, N, K: thresholds on its 2*M*N*K flops; A_K_MAJOR, B_K_MAJOR: the operands' layouts) and the K split of
the persistent GEMM, both modes ("gemm_persistent").

Measured on an H200 (bf16, cuBLAS / gems device time, torch 2.11, triton 3.6), each path forced on the linear
layers of Llama-7B, BERT-base and a 128K vocabulary head (tools/gpu_gemm.sh, 2026-11-26; 2026-11-28, a sweep of the
models suite's 22 worst products with every config and K split of either mode forced):
- TMA_MIN_FLOPS, 2^33 (8.6 GFLOP), and PERSISTENT_MIN_FLOPS: below. History: the TMA mode had no K split until
  2026-11-28 and took products from 2^35 flops (2^37 until 2026-11-27, when its calls took the Python path for the
  tensor descriptors' scratch, which the native layer now allocates per replay); the backward products came to the
  persistent GEMM only with a K past _LONG_K.
- SKINNY_MAX_ROWS, 64 (skinny.py's few-row product, tiles of 32 and 64 rows; it was 16): a decode batch's
  linear layers are memory-bound on the weight. Measured on an H200 (2026-11-27, runs of one process per route,
  cuBLAS in each, triton do_bench, bf16 linear x[M, K] @ W[N, K]^T on Llama-7B's layers, M = 24/32/48/64):
  ATen / gems 0.94-1.11 for 4096 -> 4096, 4096 -> 1024, 11008 -> 4096 and 4096 -> 32000 (persistent or
  gemm.py's GEMM: 0.68-0.97), but 0.79-0.82 for 4096 -> 11008 (persistent: 0.83-0.87); geomean over the 20
  shapes 0.938 (0.870 before). Llama decode at batch 32 (the models harness) went to 1.287x ATen.
"""

from gems.ops.blas.tuning import multiprocessors
from gems.runtime.launch import cdiv

# A K split leaves each program at least this many BLOCK_K steps (its pipeline stays full) ...
_MIN_STEPS = 8
# ... and at most this many partial sums per output (the second pass reads them all).
_MAX_SPLIT = 16
# At most this much K in one tensor-core sum (either mode): Hopper's MMA adds into its fp32 accumulator with
# truncation, an error that grows with every step. On an H200 (gems-perf --suite models, 2026-11-28) an LM head's
# grad_x = g @ W summed over a whole vocabulary in one run (gemm.py's GEMM; 512 x 32000 -> 4096 fp16, 512 x 128256
# -> 4096 bf16) missed the float64 oracle where cuBLAS met it; runs of 2048 K met it, and so did this split's runs of
# <= 16384.
_LONG_K = 16384
_FEW_OUTPUTS = 512 * 128 * 128


def _pow2(n):
    return 1 << (max(n, 1).bit_length() - 1)


def _plan(args):
    # (WHOLE_TILES, SPLIT_K), powers of two for SPLIT_K (few compiled variants). A K past _LONG_K splits every tile
    # into runs of at most _LONG_K. Tiles filling under half the multiprocessors split K until the programs about
    # fill the device. A product of one wave or more whose last wave is at most half full ("tail") computes its
    # full waves whole and splits the tail's tiles so that the last wave fills the device too (data-parallel
    # waves, then a split tail, as stream-K hybrids do): 144 tiles on 132 multiprocessors take 1 + 1/8 waves of
    # time instead of 2. Every run keeps at least _MIN_STEPS BLOCK_K steps.
    tiles = cdiv(args["M"], args["BLOCK_M"]) * cdiv(args["N"], args["BLOCK_N"])
    units = multiprocessors(args["a_ptr"].device)
    steps = cdiv(args["K"], args["BLOCK_K"])
    runs = cdiv(args["K"], _LONG_K)
    if runs > 1 or 2 * tiles < units:
        fill = _pow2(min(units // tiles, steps // _MIN_STEPS, _MAX_SPLIT)) if 2 * tiles < units else 1
        return 0, min(max(fill, 1 << (runs - 1).bit_length()), _MAX_SPLIT)
    tail = tiles % units
    if tiles > units and 0 < 2 * tail <= units:
        split = _pow2(min(units // tail, steps // _MIN_STEPS, _MAX_SPLIT))
        if split > 1:
            return tiles - tail, split
    return tiles, 1


def _persistent_min_flops(args):
    # The forward layout (x @ W^T) from 2^30 flops (~2 us of tensor-core time; smaller products are launch-bound and
    # gemm.py's GEMM serves them). A backward product (g @ W, g^T @ x) only with fewer than _FEW_OUTPUTS outputs (512
    # tiles of 128 x 128, about 4 waves of an H100's or H200's 132 multiprocessors) and a K of at least 2048, where
    # the K split fills the device (few tiles, or a last wave at most half full) and, past _LONG_K, shortens the
    # sums; with more outputs gemm.py's GEMM (0.92-0.97 of cuBLAS there, the persistent modes 0.86-0.95). H200, bf16,
    # cuBLAS / gems, gemm.py -> the split persistent GEMM (2026-11-28, do_bench medians; a sweep with every config
    # and split forced, then an A/B of the tail split): grad_x 128 x 14336 -> 4096 0.58 -> 0.96 (pointer, 4 runs),
    # 197 x 32000 -> 4096 0.57 -> 0.88 (TMA, 4), 512 x 3072 -> 768 0.62 -> 0.73 (pointer, 2), 6304 x 3072 -> 768
    # 0.68 -> 0.70 (TMA); grad_W 768 x 6304 -> 768 0.62 -> 0.79 (TMA, 2), BERT's 768 x 8192 -> 3072 0.68 -> 0.84 and
    # 3072 x 8192 -> 768 0.67 -> 0.83 (TMA, the tail split; without it 0.67), 768 x 6304 -> 3072 0.68 -> 0.80; but
    # 4096 x 2048 -> 4096 (16M outputs) 0.95 on gemm.py, 0.93 TMA, and 2048 x 11008 -> 4096 (8M) 0.97 / 0.95.
    # Before, only a K past _LONG_K came here (an LM head's grad_x over a vocabulary: gemm.py's one sum missed the
    # float64 oracle where cuBLAS met it).
    if args["A_K_MAJOR"] and args["B_K_MAJOR"]:
        return 1 << 30
    return 1 << 30 if args["K"] >= 2048 and args["M"] * args["N"] < _FEW_OUTPUTS else 1 << 62


def _tma_min_flops(args):
    # From 2^33 flops (8.6 GFLOP) in every layout the persistent GEMM takes: the TMA mode splits K as the pointer
    # mode does, and beat or tied it there. H200, bf16 F.linear, best config of each mode, TMA / pointer (a sweep,
    # 2026-11-28): 197 x 4096 -> 14336 0.82 / 0.78, 2048 x 3072 -> 768 + bias 0.81 / 0.75, 2048 x 768 -> 3072 + bias
    # 0.82 / 0.79, 512 x 4096 -> 4096 0.88 / 0.88, 512 x 14336 -> 4096 0.94 / 0.83; below it the pointer mode (1000 x
    # 3072 -> 768, 2^32.1: 0.67 / 0.69). One loss above it: 128 x 4096 -> 11008 (2^33.4), 0.89 / 0.93.
    return 1 << 33


HEURISTICS_CONFIGS = {
    "gemm_route": {"PERSISTENT_MIN_FLOPS": _persistent_min_flops, "TMA_MIN_FLOPS": _tma_min_flops,
                   "SKINNY_MAX_ROWS": lambda args: 64},
    "gemm_persistent": {"SPLIT_K": lambda args: _plan(args)[1], "WHOLE_TILES": lambda args: _plan(args)[0]},
}
