"""Rules of the split-KV decode forward (gems/ops/attention/decode.py, key "attention_decode"; args as in the
nvidia vendor's heuristics/attention.py) on the interpreter.

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
    "attention_decode": {
        "BLOCK_N": lambda args: _BLOCK_N,
        "SPLITS": _splits,
        "num_warps": lambda args: 4,
        "num_stages": lambda args: 1,
    },
}
