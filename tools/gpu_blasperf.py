"""Issue #16's blas speed on one NVIDIA GPU, ATen and gems side by side in one process (triton's do_bench,
L2 flushed before each call, median ms), plus the variants the next change chooses between.

    GEMS_VENDOR=nvidia PYTHONPATH=. python tools/gpu_blasperf.py [decode,fp32,bmm,mv]

decode: mm M x K x N for M in 1, 4, 16 (x 4096 x 4096; 1 x 4096 x 14336, 1 x 14336 x 4096) in fp16/bf16,
        W row-major (x @ W, "kn") and, in fp16, W^T (x @ W.t() as linear does, "nk"); GB/s and % of the
        copy ceiling. Variants: every skinny config (its own K split), then every split of the chosen one.
mv:     mv 4096 x 4096 and 14336 x 4096 fp16 (the GEMV kernel, unchanged), with each gemv config.
bmm:    bmm 32 x 1024 x 128 x 1024 fp16 (each gemm config) and bf16.
fp32:   mm 4096^3 and 8192^3 fp32 with TF32 off and on (ATen and gems follow the same flag), each gemm
        config at 4096^3; addmm and bmm 8192^3 with TF32 off.
"""

from __future__ import annotations

import sys
import time

import torch
import triton

import gems
from gems.ops.blas import gemm, skinny

START = time.time()
SECTIONS = (sys.argv[1] if len(sys.argv) > 1 else "decode,fp32,bmm,mv").split(",")
OPS = ["mm", "bmm", "addmm", "mv"]


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=5, rep=20, return_mode="median")


def both(call, *args):
    """(ATen ms, gems ms, largest |gems - ATen| / max |ATen|)."""
    aten_ms = bench(lambda: call(*args))
    want = call(*args).float()
    with gems.use_gems(include=OPS):
        got = call(*args).float()  # the first call tunes
        gems_ms = bench(lambda: call(*args))
    err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
    return aten_ms, gems_ms, err


def per_config(tuned, call, *args, configs=None):
    """ms of each config of ``tuned`` for the key ``call`` tuned (chosen config restored after)."""
    with gems.use_gems(include=OPS):
        tuned.chosen.clear()  # refilled from the autotuner's cache: this call's key alone
        call(*args)
        (key,) = tuned.chosen
        best = tuned.chosen[key]
        times = []
        for config in configs or tuned.autotuner.configs:
            tuned.chosen[key] = config
            try:
                times.append((config, bench(lambda: call(*args))))
            except Exception as exc:  # a config that does not fit this dtype
                times.append((config, f"x({type(exc).__name__})"))
        tuned.chosen[key] = best
    return best, times


def label(config) -> str:
    meta = "x".join(str(v) for k, v in config.kwargs.items() if k.startswith("BLOCK_"))
    return f"{meta}w{config.num_warps}s{config.num_stages}"


def show(times) -> str:
    return "  ".join(f"{label(c)}={ms:.4f}" if isinstance(ms, float) else f"{label(c)}={ms}" for c, ms in times)


def line(name, aten_ms, gems_ms, err, flops, nbytes, ceiling, extra=""):
    print(f"{name:<34} aten {aten_ms * 1e3:8.1f}us gems {gems_ms * 1e3:8.1f}us  x{aten_ms / gems_ms:5.2f}  "
          f"gems {flops / gems_ms / 1e9:7.1f} TFLOP/s {nbytes / gems_ms / 1e6:6.0f} GB/s "
          f"({100 * nbytes / gems_ms / 1e6 / ceiling:3.0f}% copy; aten {100 * nbytes / aten_ms / 1e6 / ceiling:3.0f}%)"
          f"  err {err:.1e} {extra}", flush=True)


def copy_ceiling() -> float:
    x = torch.empty(2**28, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    return 2 * x.numel() / bench(lambda: y.copy_(x)) / 1e6


def decode(ceiling):
    shapes = [(1, 4096, 4096), (4, 4096, 4096), (16, 4096, 4096), (1, 4096, 14336), (1, 14336, 4096)]
    cases = [(d, s, "kn") for d in (torch.float16, torch.bfloat16) for s in shapes]
    cases += [(torch.float16, (1, 4096, 4096), "nk"), (torch.float16, (16, 4096, 4096), "nk")]  # 1 compile set
    kernel = skinny._skinny_kernel
    for dtype, (m, k, n), layout in cases:
        a = torch.randn(m, k, dtype=dtype, device="cuda")
        b = torch.randn(k, n, dtype=dtype, device="cuda") if layout == "kn" else \
            torch.randn(n, k, dtype=dtype, device="cuda").t()
        aten_ms, gems_ms, err = both(torch.mm, a, b)
        best, times = per_config(kernel, torch.mm, a, b)
        name = f"mm {str(dtype)[6:]} {m}x{k}x{n} {layout}"
        nbytes = (a.numel() + b.numel() + m * n) * a.element_size()
        line(name, aten_ms, gems_ms, err, 2 * m * n * k, nbytes, ceiling, f"chose {label(best)}")
        print(f"   configs: {show(times)}")
        splits = []
        rule = kernel.rules["SPLIT_K"]
        with gems.use_gems(include=OPS):
            for split in (1, 2, 4, 8, 16, 32):
                kernel.rules["SPLIT_K"] = lambda args, s=split: s
                splits.append(f"{split}={bench(lambda a=a, b=b: torch.mm(a, b)) * 1e3:.1f}us")
            kernel.rules["SPLIT_K"] = rule
            heuristic = rule({"N": n if m <= n else m, "K": k, "a_ptr": a, **best.kwargs})
        print(f"   splits of {label(best)} (heuristic {heuristic}): {' '.join(splits)}", flush=True)


def mv(ceiling):
    for m, k in ((4096, 4096), (14336, 4096)):
        a = torch.randn(m, k, dtype=torch.float16, device="cuda")
        x = torch.randn(k, dtype=torch.float16, device="cuda")
        aten_ms, gems_ms, err = both(torch.mv, a, x)
        best, times = per_config(gemm._gemv_kernel, torch.mv, a, x)
        line(f"mv float16 {m}x{k}", aten_ms, gems_ms, err, 2 * m * k, (m * k + m + k) * 2, ceiling,
             f"chose {label(best)}")
        print(f"   configs: {show(times)}", flush=True)


def bmm(ceiling):
    for dtype in (torch.float16, torch.bfloat16):
        a = torch.randn(32, 1024, 128, dtype=dtype, device="cuda")
        b = torch.randn(32, 128, 1024, dtype=dtype, device="cuda")
        aten_ms, gems_ms, err = both(torch.bmm, a, b)
        nbytes = (a.numel() + b.numel() + 32 * 1024 * 1024) * a.element_size()
        if dtype == torch.float16:
            best, times = per_config(gemm._gemm_kernel, torch.bmm, a, b)
            line(f"bmm {str(dtype)[6:]} 32x1024x128x1024", aten_ms, gems_ms, err, 2 * 32 * 1024 * 1024 * 128,
                 nbytes, ceiling, f"chose {label(best)}")
            print(f"   configs: {show(times)}", flush=True)
        else:
            line(f"bmm {str(dtype)[6:]} 32x1024x128x1024", aten_ms, gems_ms, err, 2 * 32 * 1024 * 1024 * 128,
                 nbytes, ceiling)


def fp32(ceiling):
    flags = torch.backends.cuda.matmul
    for tf32 in (False, True):
        flags.allow_tf32 = tf32
        for n in (4096, 8192):
            a, b = (torch.randn(n, n, device="cuda") for _ in range(2))
            aten_ms, gems_ms, err = both(torch.mm, a, b)
            extra = ""
            if n == 4096:
                best, times = per_config(gemm._gemm_kernel, torch.mm, a, b)
                extra = f"chose {label(best)}\n   configs: {show(times)}"
            line(f"mm float32 {n}^3 tf32={'on' if tf32 else 'off'}", aten_ms, gems_ms, err, 2 * n**3,
                 3 * n * n * 4, ceiling, extra)
    flags.allow_tf32 = False
    n = 8192
    a, b, bias = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda"), torch.randn(n, device="cuda")
    aten_ms, gems_ms, err = both(torch.addmm, bias, a, b)
    line("addmm float32 8192^3 tf32=off", aten_ms, gems_ms, err, 2 * n**3, 3 * n * n * 4, ceiling)
    aten_ms, gems_ms, err = both(torch.bmm, a[None], b[None])
    line("bmm float32 1x8192^3 tf32=off", aten_ms, gems_ms, err, 2 * n**3, 3 * n * n * 4, ceiling)


def main():
    torch.manual_seed(0)
    ceiling = copy_ceiling()
    print(f"{torch.cuda.get_device_name()}  torch {torch.__version__} triton {triton.__version__}  "
          f"copy ceiling {ceiling:.0f} GB/s (read + write of 256 MiB)", flush=True)
    for section in SECTIONS:
        {"decode": decode, "mv": mv, "bmm": bmm, "fp32": fp32}[section](ceiling)
        print(f"-- {section} done at {time.time() - START:.0f}s", flush=True)


if __name__ == "__main__":
    main()
