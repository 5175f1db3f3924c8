"""triton.heuristics rules of the pointwise family (gems/codegen/pointwise.py, gems/ops/pointwise/,
the creation fill kernels): key "pointwise", args n_elements and itemsize."""


def _pointwise_block(args):
    # Small tensors: 1024-element blocks keep several programs per SM busy (their time is host time).
    # Large tensors: 32 bytes per thread of the common dtype (8 fp32, 16 fp16 values). At 64M elements
    # on an H200 (do_bench medians against ATen, 2026-11-22) it beat the other block/warp pairs tried:
    # fp32 copy 0.99x, floor_divide 1.13x (0.88x at 16 values per thread); fp16 gelu 0.96x (0.90x at 8).
    if args["n_elements"] < (1 << 22):
        return 1024
    return max(512, 4096 // args["itemsize"])


def _pointwise_warps(args):
    return 4


HEURISTICS_CONFIGS = {
    "pointwise": {"BLOCK": _pointwise_block, "num_warps": _pointwise_warps},
}
