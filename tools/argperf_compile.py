"""Compile arg_reduce's row kernel for sm_90 without a GPU and print its registers and SASS instruction mix
for each finish (tile: fp32 halving then the first position; key16: 16-bit integer keys; pairs: halvings
that carry positions) at 32768x4096 (BLOCK_M 1, BLOCK_K 4096).
Usage: GEMS_VENDOR=interpreter python tools/argperf_compile.py [warps...]   (runs nothing)"""
import collections
import os
import re
import subprocess
import sys
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import gems.runtime.backend._interpreter as _i

_i.activate = lambda: None  # compile for the GPU: leave the interpreter off
from gems.ops.reduction import arg_reduce  # noqa: E402 (after the patch)


def build(x, key16, pairs, warps, is_max=True, block_m=1, block_k=4096):
    consts = dict(IS_MAX=is_max, HAS_IDX_IN=False, WRITE_VAL=False, VAL=tl.float32, PACK=True, COLS=False,
                  INT64=False, BLOCK_M=block_m, BLOCK_K=block_k, ONE_STEP=True, HALVES=2 if x == "fp32" else 3,
                  KEY16=key16, PAIRS=pairs)
    # The runtime values of a contiguous (32768, 4096) argmax over dim 1: ints equal to 1 become constants
    # and multiples of 16 (and the pointers) carry divisibility 16, as Triton's launcher specializes them.
    values = dict(n_rows=32768, n_inner=1, n_red=block_k, red_per_split=block_k, stride_xo=block_k,
                  stride_xn=0, stride_xk=1, stride_oo=1, stride_on=0, stride_os=0)
    consts.update({n: 1 for n, v in values.items() if v == 1})
    sig, attrs = {}, {}
    for i, p in enumerate(arg_reduce._arg_kernel.params):
        n = p.name
        sig[n] = ("constexpr" if n in consts else {"x_ptr": "*" + x, "val_ptr": "*" + x, "idx_in_ptr": "*i64",
                  "idx_ptr": "*i64", "ident": "fp32"}.get(n, "i32"))
        if n.endswith("_ptr") or (n in values and values[n] % 16 == 0 and values[n] != 1):
            attrs[(i,)] = [["tt.divisibility", 16]]
    k = triton.compile(ASTSource(arg_reduce._arg_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps))
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        sass = subprocess.run([_nvdisasm(), "-c", f.name], capture_output=True, text=True).stdout
    op = r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)"
    ops = collections.Counter(m.group(1).split(".")[0] for m in re.finditer(op, sass))
    return _regs(k), sum(ops.values()), ops


def _regs(k):
    cubin = k.asm["cubin"]
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([_nvdisasm().replace("nvdisasm", "cuobjdump"), "-res-usage", f.name],
                             capture_output=True, text=True).stdout
    m = re.search(r"REG:(\d+)", out)
    return int(m.group(1)) if m else -1


def _nvdisasm():
    import triton.backends.nvidia as nv

    return os.path.join(os.path.dirname(nv.__file__), "bin", "nvdisasm")


for warps in [int(w) for w in sys.argv[1:]] or [8, 4]:
    for x, key16, pairs in (("fp16", 0, False), ("fp16", 0, True), ("i16", 0x7C00, False), ("bf16", 0, False),
                            ("bf16", 0, True), ("i16", 0x7F80, False), ("fp32", 0, False), ("fp32", 0, True)):
        regs, total, ops = build(x, key16, pairs, warps)
        top = " ".join(f"{k}:{ops[k]}" for k in ("LDG", "SHFL", "BAR", "STS", "LDS", "FMNMX", "VIMNMX", "SEL", "FSEL"))
        print(f"{x} key16={key16:#x} pairs={pairs:d} w{warps}: {regs} regs, {total} SASS instrs | {top}")
