"""Issue #25: gems' GEMMs against cuBLAS on the linear layers models run (tools/gpu_gemm.sh runs it on a GPU).

    python tools/gpu_gemm.py compile [--all]    CPU, no GPU: compile persistent.py's kernel for sm_90 per yaml
                                                config, print registers, spills, shared memory, wgmma/TMA counts
    python tools/gpu_gemm.py precompile         GPU: WORKERS processes fill Triton's cache for every case
    python tools/gpu_gemm.py check              GPU: the new paths, forced, on odd shapes and layouts vs float64
    python tools/gpu_gemm.py bench              GPU: ATen vs gems per case, table last

Bench providers (medians of triton.testing.do_bench, L2 flushed before each call): "aten" (cuBLAS), "gems"
(gems as routed), and gems forced onto one path: "old" (gemm.py's per-shape tuned GEMM), "ptr" (the
persistent pointer-mode kernel), "tma" (the persistent TMA kernel). Each case: a linear layer's product
x[M, K] @ W[N, K]^T ("fwd": mm with b = W.t(); "fwd+b": addmm with a bias row), or its backward
products ("dx": g[M, N] @ W, "dW": g^T @ x, a = g.t()), the layouts F.linear hands to ATen.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gems

START = time.time()
SHAPES_NOTE = "M x K -> N"
# The cases: (M, K, N, kind, dtypes). The issue's table (H200, bf16: 0.61-0.83x), the backward products of
# Llama-2-7B at 2048 tokens and BERT-base at 4096, an M sweep over a 4096 -> 4096 projection (decode to
# long prefill, M not a multiple of a tile), Llama-3-8B's GQA k/v projection and vocabulary.
_ISSUE = [(2048, 4096, 4096), (2048, 4096, 11008), (2048, 11008, 4096), (2048, 4096, 32000), (4096, 768, 768),
          (4096, 768, 3072), (4096, 3072, 768), (8192, 1024, 4096), (2048, 4096, 1024), (512, 4096, 4096),
          (128, 4096, 11008), (2048, 2048, 5632)]
_BACKWARD = [(2048, 4096, 4096), (2048, 4096, 11008), (2048, 11008, 4096), (2048, 4096, 1024), (4096, 768, 3072),
             (4096, 3072, 768)]
_SWEEP = [1, 16, 128, 197, 512, 1000, 8192]


def cases(which: str):
    import torch

    bf16, fp16, fp32 = torch.bfloat16, torch.float16, torch.float32
    out = [(m, k, n, kind, bf16) for m, k, n in _ISSUE for kind in ("fwd", "fwd+b")]
    out += [(m, k, n, kind, bf16) for m, k, n in _BACKWARD for kind in ("dx", "dW")]
    out += [(m, 4096, 4096, "fwd", bf16) for m in _SWEEP]
    out += [(2048, 4096, 128256, "fwd", bf16), (1000, 4096, 1024, "fwd", bf16), (197 * 32, 768, 3072, "fwd+b", bf16)]
    out += [(m, k, n, "fwd", fp16) for m, k, n in _ISSUE]
    out += [(2048, 4096, 4096, "fwd", fp32), (4096, 768, 3072, "fwd", fp32)]
    if which == "quick":
        out = [c for c in out if c[4] is bf16 and c[3] in ("fwd", "dW") and c[0] >= 512][:8]
    seen, unique = set(), []
    for c in out:
        if c not in seen:
            seen.add(c)
            unique.append(c)
    return unique


def make(case, device="cuda"):
    """(call, args) of a case: the torch-level call a model makes, on fresh random operands."""
    import torch
    import torch.nn.functional as F

    m, k, n, kind, dtype = case
    r = lambda *s: torch.randn(*s, dtype=dtype, device=device)  # noqa: E731
    if kind == "fwd":
        return F.linear, (r(m, k), r(n, k))
    if kind == "fwd+b":
        return F.linear, (r(m, k), r(n, k), r(n))
    if kind == "dx":
        return torch.mm, (r(m, n), r(n, k))
    return (lambda g, x: torch.mm(g.t(), x)), (r(m, n), r(m, k))


# --------------------------------------------------------------------------- compile (CPU)

def compile_report(args) -> int:
    os.environ.pop("TRITON_INTERPRET", None)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from gems.runtime import selection

    backend = selection.select("nvidia", explicit=False)
    from gems.ops.blas import persistent

    fn = persistent._persistent_kernel
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    layouts = {"fwd+b": (True, True, True), "fwd": (True, True, False), "dx": (True, False, False),
               "dW": (False, False, False)}
    failures = 0
    for key, tma in (("gemm_tma", True), ("gemm_persistent", False)):
        for config in backend.tune_configs(key):
            for dtype in (("bf16", "fp16") if args.all else ("bf16",)):
                for name, (a_k, b_k, bias) in layouts.items():
                    if not args.all and name != "fwd+b" and config is not backend.tune_configs(key)[0]:
                        continue
                    for split, even in (((1, True),) if tma else ((1, True), (4, False))):
                        constexprs = {**config.kwargs, "HAS_BIAS": bias, "SCALED": False, "BIAS_ROW": bias,
                                      "INT64": False, "TMA": tma, "A_K_MAJOR": a_k, "B_K_MAJOR": b_k,
                                      "EVEN_K": even, "SPLIT_K": split, "stride_cn": 1, "stride_in": 1,
                                      "stride_ak" if a_k else "stride_am": 1, "stride_bk" if b_k else "stride_bn": 1}
                        signature = {p: ("constexpr" if p in constexprs else "*fp32" if p == "part_ptr" else
                                         f"*{dtype}" if p.endswith("_ptr") else "fp32" if p in ("alpha", "beta")
                                         else "i32") for p in fn.arg_names}
                        divisible = [i for i, p in enumerate(fn.arg_names) if signature[p] != "constexpr"
                                     and p not in ("alpha", "beta", "shape_class", "stride_im")]
                        attrs = {(i,): [["tt.divisibility", 16]] for i in divisible}
                        label = (f"{key:15s} {dtype} {name:5s} {_config_label(config)}"
                                 f"{f' split{split}' if split > 1 else ''}")
                        started = time.time()
                        try:
                            compiled = triton.compile(ASTSource(fn, signature, constexprs, attrs),
                                                      target=GPUTarget("cuda", args.arch, 32),
                                                      options={"num_warps": config.num_warps,
                                                               "num_stages": config.num_stages})
                        except Exception as exc:  # a config that does not compile is the finding
                            failures += 1
                            print(f"{label}: FAILED {type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
                            continue
                        print(f"{label}: {time.time() - started:4.1f}s {_resources(compiled, ptxas, args.arch)}",
                              flush=True)
    return 1 if failures else 0


def _config_label(config) -> str:
    kw = config.kwargs
    return (f"{kw['BLOCK_M']}x{kw['BLOCK_N']}x{kw['BLOCK_K']} s{kw.get('SCHEDULE', '-')} "
            f"w{config.num_warps}/{config.num_stages}")


def _resources(compiled, ptxas: Path, arch: int) -> str:
    ptx = compiled.asm["ptx"]
    md = compiled.metadata
    path = Path("/tmp") / f"gpu_gemm_{os.getpid()}.ptx"
    path.write_text(ptx)
    report = subprocess.run([str(ptxas), f"-arch=sm_{arch}a", "-v", str(path), "-o", os.devnull],
                            capture_output=True, text=True)
    text = report.stdout + report.stderr
    regs = re.search(r"Used (\d+) registers", text)
    spill = re.search(r"(\d+) bytes spill stores", text)
    counts = {name: len(re.findall(pattern, ptx)) for name, pattern in
              (("wgmma", r"wgmma\.mma_async"), ("tma", r"cp\.async\.bulk\.tensor"), ("cp.async", r"cp\.async\.cg"),
               ("setmaxnreg", r"setmaxnreg"))}
    return (f"warps {md.num_warps} regs {regs.group(1) if regs else '?'} spills {spill.group(1) if spill else '?'} "
            f"smem {md.shared // 1024}K scratch {md.global_scratch_size} "
            + " ".join(f"{k} {v}" for k, v in counts.items()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("compile")
    p.add_argument("--arch", type=int, default=90)
    p.add_argument("--all", action="store_true", help="every config x dtype x layout (default: a sample)")
    args = parser.parse_args(argv)
    return {"compile": compile_report}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
