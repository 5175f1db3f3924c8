"""Rules of the attention family on the interpreter (args as in the nvidia vendor's heuristics/attention.py).

The backward's route (key "attention_backward_route"): head dims up to 16 take the one-pass path at any length,
larger ones the two-kernel path, so that the quick conformance samples run both (head dims 16 and 32; the
dropout samples 16 and 24).

The split-KV decode forward (gems/ops/attention/decode.py, key "attention_decode"):

Programs run one after another here, so a split gains nothing; it is kept (small, for few programs) so that
the quick conformance samples (a few hundred keys, head dim 16-32) run both forms in CI: fewer than
_FEW_PROGRAMS (batch, kv head) programs split the keys in up to 4 chunks of at least 4 blocks (N = 300: 4
chunks of 80 keys), more run unsplit. 16-key blocks so that each chunk walks several blocks, the unmasked
and the bounded loop.
"""

_FEW_PROGRAMS = 8
_BLOCK_N = 16


def _splits(args):
    if args["batch"] * args["kv_heads"] >= _FEW_PROGRAMS:
        return 1
    return max(1, min(4, args["N"] // (4 * _BLOCK_N)))


HEURISTICS_CONFIGS = {
    "attention_backward_route": {"ONE_PASS_MAX_KEYS": lambda args: 1 << 30 if args["HEAD_DIM"] <= 16 else 1},
    "attention_decode": {
        "BLOCK_N": lambda args: _BLOCK_N,
        "SPLITS": _splits,
        "num_warps": lambda args: 4,
        "num_stages": lambda args: 1,
    },
}
