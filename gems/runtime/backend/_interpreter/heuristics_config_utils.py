"""triton.heuristics rules per operator key: {key: {constexpr name: function(kernel args) -> value}}.

The interpreter runs programs one after another in Python (about 1 ms each), so blocks are as large
as the work allows: few programs, each a big numpy operation. The rules of a family can live in
heuristics/<family>.py instead (heuristics/pointwise.py); a key is defined in one file only.
"""

from gems.runtime.launch import cdiv, next_power_of_2

# ---- reductions and softmax: args and rule names as in the nvidia vendor's file ----
# Elements per program per loop step: one numpy operation each, so large.
_REDUCTION_TILE = 1 << 14
# Softmax rows up to this length run in one pass; longer ones (few, in the quick samples) loop.
_SOFTMAX_ONE_PASS = 1 << 12


def _reduction_block_m(args):
    if args["layout"] == "cols":
        return min(next_power_of_2(args["n_inner"]), 1 << 8)
    block_k = min(next_power_of_2(args["n_red"]), 1 << 12)
    return min(next_power_of_2(args["n_rows"]), max(1, _REDUCTION_TILE // block_k))


def _reduction_block_k(args):
    return min(next_power_of_2(args["n_red"]), 1 << 12, max(1, _REDUCTION_TILE // args["BLOCK_M"]))


def _reduction_splits(args):
    # Programs run one after another here, so splitting gains nothing; it is kept (a few programs,
    # only for long reductions) so that the two-pass path runs on every vendor's CI.
    if args["layout"] == "cols":
        programs = args["n_outer"] * cdiv(args["n_inner"], args["BLOCK_M"])
    else:
        programs = cdiv(args["n_rows"], args["BLOCK_M"])
    steps = cdiv(args["n_red"], args["BLOCK_K"])
    return min(4, steps) if programs <= 2 and steps > 2 else 1


def _softmax_block_m(args):
    n_red = min(next_power_of_2(args["n_red"]), _SOFTMAX_ONE_PASS)
    if args["layout"] == "cols":
        return min(next_power_of_2(args["n_inner"]), max(1, _REDUCTION_TILE // n_red))
    return min(next_power_of_2(args["n_rows"]), max(1, _REDUCTION_TILE // n_red))


def _softmax_block_k(args):
    n_red = next_power_of_2(args["n_red"])
    return n_red if n_red <= _SOFTMAX_ONE_PASS else _SOFTMAX_ONE_PASS // 2


HEURISTICS_CONFIGS = {
    "reduction": {"BLOCK_M": _reduction_block_m, "BLOCK_K": _reduction_block_k, "SPLITS": _reduction_splits,
                  "num_warps": lambda args: 1},
    "softmax": {"BLOCK_M": _softmax_block_m, "BLOCK_K": _softmax_block_k, "num_warps": lambda args: 1},
}
