"""The cases of tools/gpu_gemm.py (its docstring says what each kind of call is): the products it benches, a
model's linear layers; how a case's call is made on fresh operands; the paths gems is forced onto; the (case,
path, config) jobs of its check and of its precompile."""

from __future__ import annotations

import os

# A smoke test of tools/gpu_gemm.py on the CPU: GEMM_DEVICE=cpu GEMM_SCALE=64 GEMS_VENDOR=interpreter (sizes / SCALE,
# rounded up to a multiple of 8; wall-clock times).
DEVICE = os.environ.get("GEMM_DEVICE", "cuda")
SCALE = int(os.environ.get("GEMM_SCALE", "1"))
# The cases: (M, K, N, kind, dtypes). The issue's table (H200, bf16: 0.61-0.83x), the backward products of
# Llama-2-7B at 2048 tokens and BERT-base at 4096, an M sweep over a 4096 -> 4096 projection (decode to
# long prefill, M not a multiple of a tile), Llama-3-8B's GQA k/v projection and vocabulary.
_ISSUE = [(2048, 4096, 4096), (2048, 4096, 11008), (2048, 11008, 4096), (2048, 4096, 32000), (4096, 768, 768),
          (4096, 768, 3072), (4096, 3072, 768), (8192, 1024, 4096), (2048, 4096, 1024), (512, 4096, 4096),
          (128, 4096, 11008), (2048, 2048, 5632)]
_BACKWARD = [(2048, 4096, 4096), (2048, 4096, 11008), (2048, 11008, 4096), (2048, 4096, 1024), (4096, 768, 3072),
             (4096, 3072, 768)]
_SWEEP = [1, 16, 128, 197, 512, 1000, 8192]
# CASES=train (or bert-train, llama-train): the products of the models harness's training steps (batch 4 x 512
# tokens), forward and both backward products: BERT-base's layers (with bias), the llama preset's (Llama-2-7B's).
_TRAIN = {"bert": [(2048, 768, 768, "fwd+b"), (2048, 768, 3072, "fwd+b"), (2048, 3072, 768, "fwd+b")],
          "llama": [(2048, 4096, 4096, "fwd"), (2048, 4096, 11008, "fwd"), (2048, 11008, 4096, "fwd"),
                    (2048, 4096, 1024, "fwd")]}


def cases(which: str):
    import torch

    bf16, fp16, fp32 = torch.bfloat16, torch.float16, torch.float32
    if which.endswith("train"):
        models = [which[:-6]] if which != "train" else list(_TRAIN)
        layers = [layer for model in models for layer in _TRAIN[model]]
        return [(m, k, n, kind, bf16) for m, k, n, fwd in layers for kind in (fwd, "dx", "dW")]
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
        if SCALE > 1:
            c = (*(-(-max(d // SCALE, 1) // 8) * 8 if d > 16 else d for d in c[:3]), *c[3:])
        if c not in seen:
            seen.add(c)
            unique.append(c)
    return unique


def make(case, device=DEVICE):
    """(call, args) of a case on fresh random operands: the torch-level call a model makes (fwd, fwd+b, dx, dW),
    or, for the check, addmm with a full self and alpha/beta ("addmm"), in place ("addmm_"), and mm into a
    column-major out= filled with NaN ("out-strided")."""
    import torch
    import torch.nn.functional as F

    m, k, n, kind, dtype = case
    r = lambda *s: torch.randn(*s, dtype=dtype, device=device)  # noqa: E731
    calls = {
        "fwd": (F.linear, lambda: (r(m, k), r(n, k))),
        "fwd+b": (F.linear, lambda: (r(m, k), r(n, k), r(n))),
        "dx": (torch.mm, lambda: (r(m, n), r(n, k))),
        "dW": (lambda g, x: torch.mm(g.t(), x), lambda: (r(m, n), r(m, k))),
        "addmm": (lambda s, x, w: torch.addmm(s, x, w.t(), beta=2.0, alpha=0.5), lambda: (r(m, n), r(m, k), r(n, k))),
        "addmm_": (lambda s, x, w: s.clone().addmm_(x, w.t()), lambda: (r(m, n), r(m, k), r(n, k))),
        "out-strided": (lambda x, w: torch.mm(x, w.t(), out=torch.full((w.shape[0], x.shape[0]), float("nan"),
                                                                       dtype=x.dtype, device=x.device).t()),
                        lambda: (r(m, k), r(n, k))),
    }
    call, operands = calls[kind]
    return call, operands()


PATHS = ("old", "ptr", "tma")  # gems forced onto gemm.py's GEMM, persistent pointer mode, persistent TMA mode

# The check's products: every config of both persistent lists on a few (the configs' compiled schedules differ),
# then every call kind on odd shapes with the tuned config. (33, 4104, 520): K split in pointer mode; (2048,
# 4100, 264): rows TMA cannot read (the forced TMA path takes pointer loads).
_CHECK_CONFIGS = [(1000, 768, 3072, "fwd+b"), (1000, 768, 3072, "dW"), (33, 4104, 520, "fwd")]
_CHECK_SHAPES = [(197, 4096, 1000), (33, 4104, 520), (2048, 4100, 264)]
_CHECK_KINDS = {"bfloat16": ("fwd", "fwd+b", "dx", "dW", "addmm", "addmm_", "out-strided"), "float16": ("fwd+b", "dW")}


def check_jobs():
    """(case, path, config index) of the check: no tuning (its compiles stay few)."""
    import torch

    from gems.runtime import selection

    count = {"ptr": len(selection.current().tune_configs("gemm_persistent")),
             "tma": len(selection.current().tune_configs("gemm_tma"))}
    scaled = [(197, 72, 40), (33, 104, 56), (40, 100, 48)]
    jobs = [((m, k, n, kind, torch.bfloat16), path, index) for path in ("ptr", "tma") for index in range(count[path])
            for m, k, n, kind in (_CHECK_CONFIGS if SCALE == 1 else [(*scaled[0], "fwd+b")])]
    jobs += [((m, k, n, kind, dtype), path, 0) for path in ("ptr", "tma")
             for dtype in (torch.bfloat16, torch.float16) for m, k, n in (_CHECK_SHAPES if SCALE == 1 else scaled)
             for kind in _CHECK_KINDS[str(dtype)[6:]]]
    return jobs


def precompile_jobs():
    """(case, path, config index) for every config the check and the bench run, one per compiled variant
    (roughly: dtype, layout, divisibility by 16; duplicates only cost a cache hit)."""
    import torch

    from gems.runtime import selection

    backend = selection.current()
    count = {path: len(backend.tune_configs(key)) for path, key in
             (("old", "gemm"), ("ptr", "gemm_persistent"), ("tma", "gemm_tma"))}
    wanted = check_jobs()
    for case in cases(os.environ.get("CASES", "all")):
        m, k, n, kind, dtype = case
        if min(m, n) <= 16:  # skinny.py's or the GEMV: tuned whole in one job
            wanted.append((case, "small", None))
            continue
        paths = ("old",) if dtype is torch.float32 else PATHS
        wanted += [(case, path, index) for path in paths for index in range(count[path])]
    jobs, seen = [], set()
    for case, path, index in wanted:
        m, k, n, kind, dtype = case
        sig = (path, index, kind, str(dtype), m % 16 == 0, n % 16 == 0, k % 16 == 0)
        if path != "tma":  # EVEN_K, and the K split (pointer mode) of products with few tiles
            sig += (k % 64 == 0, k % 32 == 0, m * n < 66 * 128 * 128)
        if sig not in seen:
            seen.add(sig)
            jobs.append((case, path, index))
    return jobs


def operands_2d(case, operands):
    """(a, b) of the product a case's call makes, as gemm.py sees them."""
    m, k, n, kind, dtype = case
    if kind in ("fwd", "fwd+b"):
        return operands[0], operands[1].t()
    if kind == "dx":
        return operands[0], operands[1]
    return operands[0].t(), operands[1]
