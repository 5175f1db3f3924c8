"""Rules of the attention family: the split-KV decode forward (gems/ops/attention/decode.py, key "attention_decode";
args batch, kv_heads, rows = query rows per kv head (group * M, at most 64), N = the key length's next power of
two, HEAD_DIM, q_ptr).

One program reads a BLOCK_N x head-dim tile of K and one of V per step (fp16/bf16: 16 KB each at 64 x 128 or
128 x 64), num_stages of them in flight, and keeps a 16-64 row fp32 accumulator: 4 warps. The keys are split
until the programs give about _PROGRAMS_PER_SM per multiprocessor (latency of the K/V stream hidden by other
programs, as flash-decoding does), each chunk at least _MIN_CHUNK keys (two BLOCK_N steps of pipelined
loads; fewer would make the combine's partial rows a visible share of the traffic). Llama-style GQA on an
H100 (132 multiprocessors), 8 kv heads: batch 1 at 512 / 2048 / 8192 keys splits 4 / 16 / 32 ways (32 / 128
/ 256 programs), batch 32 splits 2 ways. NOT YET MEASURED on a GPU (perf/shapes.yaml
scaled_dot_product_attention, the "decode" rows).

The backward's route (gems/ops/attention/flash_backward.py, key "attention_backward_route"; args batch, heads,
kv_heads, M, N, HEAD_DIM, DROPOUT): ONE_PASS_MAX_KEYS, the longest key sequence whose dQ the dK/dV kernel adds
atomically (5 products per tile, the dropout mask drawn once) instead of a dQ kernel's recomputing S, P and dP
(7 products, the mask drawn twice). Head dim 64 and less only: measured on an H200 (2026-11-27, torch 2.11,
triton 3.6, bf16, runs/attn_bwd_bench.py: device time per call, best config per kernel, two kernels vs one pass,
cuDNN in brackets): BERT-base 4 x 12 x 512 x 64 with its padding mask 55.7 vs 50.0 us (53.8), with dropout 0.1
133.6 vs 126.0 (65.8); at head dim 128 the atomics cost more than the recomputation: Llama's 4 x 16/8 x 512
causal 72.9 vs 88.6 (78.9), 1 x 32/8 x 2048 causal 397.7 vs 505.9 (264.9). Not with dropout: with this route
the GPU's quick conformance (d891d30, an H200) failed its four fp16/bf16 dropout cases (head dim 16, 13 or 24
queries over 24 keys: partial tiles), their messages lost to the run's time limit; the same cases pass on the
interpreter, with CUDA's fp16/bf16 rounding of P and dS emulated too, on both paths and every config. The
two-kernel path with dropout passed there before; one pass saved only 6% on BERT (126.0 vs 133.6 us).
"""

from gems.ops.blas.tuning import multiprocessors
from gems.runtime.launch import cdiv

# Programs per multiprocessor the split aims for.
_PROGRAMS_PER_SM = 2
# Keys per chunk at least (N by its power of two: a chunk can come out half this for N just past one).
_MIN_CHUNK = 128
# Chunks per row at most: the combine reads them all (a 64 x 128 fp32 tile per row).
_MAX_SPLITS = 64


def _splits(args):
    programs = args["batch"] * args["kv_heads"]
    want = cdiv(_PROGRAMS_PER_SM * multiprocessors(args["q_ptr"].device), programs)
    split = max(1, min(want, args["N"] // _MIN_CHUNK, _MAX_SPLITS))
    return 1 << (split.bit_length() - 1)  # a power of two: few compiled variants


HEURISTICS_CONFIGS = {
    # 1 (the smallest value a rule may give: a single key) is in effect the two-kernel path.
    "attention_backward_route": {
        "ONE_PASS_MAX_KEYS": lambda args: 1 << 30 if args["HEAD_DIM"] <= 64 and not args["DROPOUT"] else 1},
    "attention_decode": {
        "BLOCK_N": lambda args: 64 if args["HEAD_DIM"] > 64 else 128,
        "SPLITS": _splits,
        "num_warps": lambda args: 4,
        "num_stages": lambda args: 3,
    },
}
