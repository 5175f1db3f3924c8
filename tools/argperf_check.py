"""Interpreter check of arg_reduce's three one-tile finishes (KEY16, PAIRS, the tile finish) against ATen on
CPU, with ties, -0.0/+0.0, NaNs of both signs, infs and all-inf rows, at odd shapes (masked lanes). The
conformance suite runs only the library's default finish; this runs each one.
Usage: GEMS_VENDOR=interpreter python tools/argperf_check.py   (about a minute)"""
import sys

import torch

sys.path.insert(0, ".")
import gems  # noqa: E402,F401 (selects the vendor from GEMS_VENDOR)
from gems.ops.reduction import arg_reduce as ar  # noqa: E402
from gems.ops.reduction.argmax import argmax  # noqa: E402
from gems.ops.reduction.argmin import argmin  # noqa: E402

SHAPES = (((5, 37), 1), ((3, 300), -1), ((4, 5, 6), 1), ((2, 7), 0), ((9,), 0), ((13, 17), 1))


def inputs(dtype, shape):
    x = (torch.randn(shape) * 3).to(dtype)
    x[x.abs() < 0.3] = 0
    if dtype.is_floating_point:
        flat = x.view(-1)
        flat[::7] = -0.0
        flat[3::11] = float("nan")
        flat[5::13] = float("-inf")
        flat[6::17] = -float("nan")
        flat[8::19] = float("inf")
        return [x, torch.full(shape, float("-inf"), dtype=dtype), torch.full(shape, float("inf"), dtype=dtype)]
    return [x]


def main():
    torch.manual_seed(0)
    bad = n = 0
    for key16, pairs in ((True, False), (False, True), (False, False)):
        ar.KEY16, ar.PAIRS = key16, pairs
        ar._plans.clear()
        for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.int32):
            for shape, dim in SHAPES:
                for x in inputs(dtype, shape):
                    for mine, theirs in ((argmax, torch.argmax), (argmin, torch.argmin)):
                        n += 1
                        if not torch.equal(mine(x, dim), theirs(x, dim)):
                            bad += 1
                            print(f"WRONG KEY16={key16} PAIRS={pairs} {dtype} {shape} dim {dim} {mine.__name__}")
    print(f"{n} cases, {bad} wrong")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
