"""Rules of the blas family (gems/ops/blas/persistent.py): which GEMM a product takes ("gemm_route", args
M, N, K: thresholds on its 2*M*N*K flops; A_K_MAJOR, B_K_MAJOR: the operands' layouts) and the K split of
the persistent pointer-mode GEMM ("gemm_persistent").

Measured on an H200 (tools/gpu_gemm.sh, bf16, cuBLAS / gems device time, 2026-11-26, torch 2.11, triton
3.6), each path forced on the linear layers of Llama-7B, BERT-base and a 128K vocabulary head:
- TMA_MIN_FLOPS, 2^35 (34 GFLOP): the TMA mode has no K split, so it loses where a product's output tiles
  are fewer than the multiprocessors. Measured on an H200 (runs/ A/B, 2026-11-27, bf16 F.linear, both modes
  forced and replayed natively, back-to-back wall time per call, cuBLAS / gems pointer -> TMA): 2048x4096 ->
  4096 0.90 -> 0.95, -> 11008 0.77 -> 0.84, 2048x11008 -> 4096 0.88 -> 0.96, -> 32000 0.84 -> 0.93,
  1024x4096 -> 4096 0.90 -> 0.94, 8192x1024 -> 4096 0.84 -> 0.86; below 2^35 the pointer mode wins or ties
  (2048x4096 -> 1024 0.88 vs 0.56, 512x4096 -> 4096 0.65 vs 0.56, 4096x768 -> 3072 0.84 vs 0.85). Until
  2026-11-27 the TMA mode's calls took the Python path (its tensor descriptors live in launcher-allocated
  scratch; the native layer now allocates it per replay) and the threshold was 2^37.
- PERSISTENT_MIN_FLOPS, 2^30 (~2 us of tensor-core time): below it a product is launch-bound and gemm.py's
  GEMM (tuned per shape) serves it. Only for the forward layout (both operands K-major): on the backward
  products (g @ W, g^T @ x) gemm.py's GEMM was the faster in 10 of 12 shapes (e.g. 2048x4096 -> 4096:
  0.96 vs 0.87 and 0.88), so those come here only with a K past _LONG_K, to be split into shorter sums.
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
# At most this much K in one tensor-core sum: Hopper's MMA adds into its fp32 accumulator with truncation, an
# error that grows with every step. On an H200 (gems-perf --suite models, 2026-11-28) an LM head's grad_x = g @ W
# summed over a whole vocabulary in one run (gemm.py's GEMM; 512 x 32000 -> 4096 fp16, 512 x 128256 -> 4096 bf16)
# missed the float64 oracle where cuBLAS met it; runs of 2048 K met it, and so did this split's runs of <= 16384.
_LONG_K = 16384
_FEW_OUTPUTS = 64 * 128 * 256


def _split(args):
    # Tiles that fill at least half the multiprocessors run unsplit; fewer split K until the programs about fill
    # the device; and a K past _LONG_K splits into runs of at most _LONG_K (powers of two: few compiled variants).
    tiles = cdiv(args["M"], args["BLOCK_M"]) * cdiv(args["N"], args["BLOCK_N"])
    units = multiprocessors(args["a_ptr"].device)
    fill = 1
    if 2 * tiles < units:
        fill = min(units // tiles, cdiv(args["K"], args["BLOCK_K"]) // _MIN_STEPS, _MAX_SPLIT)
        fill = 1 << (max(fill, 1).bit_length() - 1)
    runs = cdiv(args["K"], _LONG_K)
    return min(max(fill, 1 << (runs - 1).bit_length()), _MAX_SPLIT)


def _persistent_min_flops(args):
    # The forward layout (x @ W^T). A backward product only with a K past _LONG_K and at most _FEW_OUTPUTS outputs
    # (64 tiles of 128 x 256, under half an H100's or H200's multiprocessors), where the K split above both fills
    # the device and shortens the sums. H200, gems-perf models shapes, 2026-11-28, cuBLAS / gems before -> after:
    # grad_x of 128 x 32000 -> 4096 bf16 0.52 -> 1.01, 128 x 128256 0.46 -> 0.97, 197 x 128256 0.50 -> 0.63,
    # 512 x 32000 fp16 mismatch -> 0.88, 512 x 128256 bf16 mismatch -> 0.84 (bf16 512 x 32000 1.00 -> 0.88). With
    # more outputs gemm.py's GEMM stays: 0.90-1.00 there, the split persistent kernel 0.82-0.85, both accurate.
    if args["A_K_MAJOR"] and args["B_K_MAJOR"]:
        return 1 << 30
    return 1 << 30 if args["K"] >= _LONG_K and args["M"] * args["N"] <= _FEW_OUTPUTS else 1 << 62


def _tma_min_flops(args):
    # The TMA mode has no K split: the backward products it would take (K past _LONG_K) stay in pointer mode.
    return 1 << 35 if args["A_K_MAJOR"] and args["B_K_MAJOR"] else 1 << 62


HEURISTICS_CONFIGS = {
    "gemm_route": {"PERSISTENT_MIN_FLOPS": _persistent_min_flops, "TMA_MIN_FLOPS": _tma_min_flops,
                   "SKINNY_MAX_ROWS": lambda args: 64},
    "gemm_persistent": {"SPLIT_K": _split},
}
