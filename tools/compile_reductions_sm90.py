"""Compile the reduction kernels (gems/ops/reduction) for sm_90 with Triton's own compiler, on a machine
without a GPU: catches what the interpreter cannot (GPU-only lowering errors, libdevice calls, bf16 paths).
It runs nothing. Usage: GEMS_VENDOR=interpreter python tools/compile_reductions_sm90.py (a few minutes).

The interpreter vendor's activation (which turns TRITON_INTERPRET on) is skipped, so that the kernels are
defined as compilable JITFunctions.
"""
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import gems.runtime.backend._interpreter as _i

_i.activate = lambda: None  # compile for the GPU: leave the interpreter off
from gems.ops.reduction import arg_reduce, bincount, combine, isin, moments, scanning  # noqa: E402 (after the patch)

T = GPUTarget("cuda", 90, 32)


def check(name, kernel, ptrs, ints, consts, floats=()):
    sig = {}
    for p in kernel.params:
        n = p.name
        if n in ptrs:
            sig[n] = "*" + ptrs[n]
        elif n in consts:
            sig[n] = "constexpr"
        elif n in floats:
            sig[n] = "fp32"
        else:
            sig[n] = ints.get(n, "i32")
    try:
        triton.compile(ASTSource(kernel, signature=sig, constexprs=consts), target=T)
        print("ok  ", name)
    except Exception as e:
        print("FAIL", name, str(e)[:2000])


base = dict(COLS=False, INT64=False, BLOCK_M=1, BLOCK_K=1024)
for pre, op, post, x, accd, acc in ((4, 0, 3, "fp16", tl.float32, "fp32"), (4, 0, 3, "fp64", tl.float64, "fp64"),
                                    (5, 2, 0, "bf16", tl.int32, "i32"), (5, 2, 0, "i1", tl.int32, "i32"),
                                    (0, 4, 0, "fp16", tl.float32, "fp32"), (0, 4, 0, "i8", tl.int64, "i64"),
                                    (1, 0, 0, "fp16", tl.int64, "i64"), (2, 3, 0, "bf16", tl.float32, "fp32"),
                                    (0, 2, 0, "fp64", tl.float64, "fp64"), (0, 3, 0, "fp16", tl.float32, "fp32"),
                                    (0, 2, 0, "i8", tl.int64, "i64"), (0, 0, 0, "bf16-bool", tl.int64, "i64")):
    cast = {"fp16": tl.float16, "bf16": tl.bfloat16, "fp64": tl.float64, "i1": tl.int1, "i8": tl.int8,
            "bf16-bool": tl.int1}[x]
    x = "bf16" if x == "bf16-bool" else x
    for cols in (False, True):
        consts = dict(base, PRE=pre, OP=op, POST=post, CAST=cast, ACC=accd, COLS=cols, BLOCK_M=64 if cols else 1,
                      BLOCK_K=64 if cols else 1024, ONE_STEP=cols, HALVES=0 if cols else 3)
        check(f"combine pre={pre} op={op} post={post} {x}->{acc} cols={cols}", combine._combine_kernel,
              {"x_ptr": x, "y_ptr": x, "out_ptr": x, "out2_ptr": x},
              {"p_bits": "i64", "ident": "fp32" if acc[0] == "f" else "i64",
               "ident2": "fp32" if acc[0] == "f" else "i64"}, consts)
for is_max in (True, False):
    for x, val, pack in (("fp16", tl.float32, True), ("bf16", tl.float32, False), ("i8", tl.int32, True),
                         ("fp64", tl.float64, False), ("i1", tl.int32, True), ("i64", tl.int64, False)):
        for has in (False, True):
            consts = dict(base, IS_MAX=is_max, HAS_IDX_IN=has, WRITE_VAL=True, VAL=val, PACK=pack, ONE_STEP=not has,
                          HALVES=3)
            check(f"arg {x} max={is_max} idx_in={has} pack={pack}", arg_reduce._arg_kernel,
                  {"x_ptr": x, "idx_in_ptr": "i64", "val_ptr": x, "idx_ptr": "i64"},
                  {"ident": "fp32" if x.startswith("fp") or x == "bf16" else "i64" if x == "i64" else "i32"}, consts)
for x, acc in (("fp16", tl.float32), ("bf16", tl.float32), ("fp64", tl.float64)):
    for std in (True, False):
        for partial in (False, True):
            consts = dict(base, STD=std, WRITE_MEAN=True, PARTIAL=partial, ACC=acc, RESCUE_K=0 if partial else 256,
                          ONE_STEP=not partial)
            p = "fp32" if acc == tl.float32 else "fp64"
            check(f"moments {x} std={std} partial={partial}", moments._moments_kernel,
                  {"x_ptr": x, "a_ptr": p if partial else x, "b_ptr": p if partial else x, "c_ptr": p},
                  {"corr_bits": "i64"}, consts)
        consts = dict(base, STD=std, WRITE_MEAN=True, ACC=acc, COLS=True, BLOCK_M=64, BLOCK_K=8)
        p = "fp32" if acc == tl.float32 else "fp64"
        check(f"merge {x} std={std}", moments._merge_kernel,
              {"mean_ptr": p, "m2_ptr": p, "n_ptr": p, "a_ptr": x, "b_ptr": x}, {"corr_bits": "i64"}, consts)
for x, cmp in (("fp16", tl.float32), ("i8", tl.int32), ("fp64", tl.float64)):
    check(f"isin {x}", isin._isin_kernel, {"x_ptr": x, "t_ptr": x, "out_ptr": "i1"}, {},
          dict(INVERT=True, CMP=cmp, BLOCK_N=64, BLOCK_T=64))
for w, o in (("fp32", "fp32"), ("fp16", "fp64"), ("i32", "i64")):
    check(f"bincount {w}", bincount._bincount_kernel, {"x_ptr": "i32", "w_ptr": w, "out_ptr": o}, {},
          dict(HAS_W=True, BLOCK=512))
for is_max in (True, False):
    for x, v, pack, nan_bits, key in (("i16", "i16", True, 0x7C00, tl.int32), ("u8", "u8", True, 0, tl.int32),
                                      ("fp16", "fp16", False, 0, tl.int32), ("fp64", "fp64", False, 0, tl.int64),
                                      ("i64", "i64", False, 0, tl.int64)):
        for cols in (False, True):
            consts = dict(MAX=is_max, PACK=pack, NAN_BITS=nan_bits, SIGNED=x != "u8", KEY=key, COLS=cols, INT64=False,
                          MULTI_STEP=True, BLOCK_M=64 if cols else 1, BLOCK_K=64 if cols else 4096)
            check(f"cum_extreme {x} max={is_max} pack={pack} cols={cols}", scanning._cum_extreme_kernel,
                  {"x_ptr": x, "values_ptr": v, "indices_ptr": "i64"}, {"key_low": "i64"}, consts)
