"""Time gems' convolution forward tilings beside ATen (cuDNN) at ResNet-50 layer shapes, one GPU run.

The variants set the thresholds of gems/ops/conv/convolution.py (module constants, set here, never from
the environment inside gems):

    default   PER_IMAGE_MIN_PIXELS = 1024, POINTWISE_MIN_PIXELS = 512  (one-image tiles from 32x32 results,
              pointwise layers read x in place from 512 pixels)
    image512  PER_IMAGE_MIN_PIXELS = 512,  POINTWISE_MIN_PIXELS = 512  (the previous default: 28x28 per image)
    flat      both infinite: the flattened batch, x copied to NHWC (main before issue #16)

The default runs first (it autotunes over the vendor's "conv" configs); the other variants reuse the
config it chose (the tuning key does not hold the variant), so they compare kernels at one tile config.
Each result is checked against ATen's before it is timed. Times: triton.testing.do_bench, median ms,
L2 flushed (its default). Usage (GEMS_VENDOR=nvidia, from the repository root):

    python tools/conv_variants.py [--dtypes float16,bfloat16] [--rep 25]
    GEMS_VENDOR=interpreter python tools/conv_variants.py --smoke    (CPU: small shapes, correctness only)
"""

from __future__ import annotations

import argparse
import math
import time

import torch
import torch.nn.functional as F

# [N, C, H, W, K, kernel, stride, padding]: the three of tools/gpu_final.yaml first, then more ResNet-50 layers.
SHAPES = [
    (32, 64, 56, 56, 64, 3, 1, 1),
    (32, 256, 56, 56, 64, 1, 1, 0),
    (32, 256, 14, 14, 256, 3, 1, 1),
    (32, 64, 56, 56, 256, 1, 1, 0),
    (32, 128, 28, 28, 128, 3, 1, 1),
    (32, 512, 7, 7, 512, 3, 1, 1),
]
SMOKE_SHAPES = [(2, 20, 23, 23, 8, 1, 1, 0), (1, 16, 23, 23, 8, 3, 1, 1), (1, 16, 32, 32, 8, 3, 1, 1)]
VARIANTS = {  # name: (PER_IMAGE_MIN_PIXELS, POINTWISE_MIN_PIXELS)
    "default": (1024, 512),
    "image512": (512, 512),
    "flat": (math.inf, math.inf),
}
COPY_CEILING_GBPS = 2950  # H100 copy ceiling measured in the baseline run (/work/gpu/perf-f0cab9b.csv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="float16,bfloat16")
    parser.add_argument("--rep", type=int, default=25, help="do_bench's rep (ms per measurement)")
    parser.add_argument("--smoke", action="store_true", help="small shapes, correctness only (CPU interpreter)")
    args = parser.parse_args()
    import gems  # noqa: F401  (selects the vendor)
    from gems.ops.blas import tuning
    from gems.ops.conv import convolution as conv
    from gems.runtime import selection

    device = selection.current().device
    shapes = SMOKE_SHAPES if args.smoke else SHAPES
    print(f"{'shape N,C,H,W,K,k,s,p':30} {'dtype':8} {'aten_ms':>8} " +
          " ".join(f"{v + '_ms':>11}" for v in VARIANTS) + "  aten/default / aten/best  best's %copy  config(default)")
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    # The targets in every dtype first, then the other layers (the run may be cut off by its time limit).
    jobs = [(s, d) for s in shapes[:3] for d in dtypes] + [(s, d) for d in dtypes for s in shapes[3:]]
    for shape, dtype in jobs:
        n, c, h, w, k, r, stride, pad = shape
        out_pixels = ((h + 2 * pad - r) // stride + 1) * ((w + 2 * pad - r) // stride + 1)
        schemes = {}  # (PER_IMAGE, X_PIXELS) -> the first variant that runs it
        gen = torch.Generator(device="cpu").manual_seed(0)
        x = torch.randn(n, c, h, w, generator=gen).to(device, dtype)
        wt = (torch.randn(k, c, r, r, generator=gen) / math.sqrt(c * r * r)).to(device, dtype)
        b = torch.randn(k, generator=gen).to(device, dtype)
        ref = F.conv2d(x, wt, b, stride, pad)  # ATen (gems is not enabled in this script)
        times, config = {}, ""
        for name, (min_pixels, pointwise_min) in VARIANTS.items():
            in_place = out_pixels >= pointwise_min and (r, stride, pad) == (1, 1, 0) and c >= 16
            scheme = (in_place or out_pixels >= min_pixels, in_place)
            if scheme in schemes:  # the same kernel as an earlier variant at this shape
                times[name] = "=" + schemes[scheme]
                continue
            schemes[scheme] = name
            conv.PER_IMAGE_MIN_PIXELS, conv.POINTWISE_MIN_PIXELS = min_pixels, pointwise_min

            def run(x=x, wt=wt, b=b, stride=stride, pad=pad):
                return conv.convolution(x, wt, b, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1)
            started = time.perf_counter()
            out = run()
            err = (out.float() - ref.float()).abs().max().item() / max(ref.float().abs().max().item(), 1e-6)
            if name == "default":
                tuned = tuning._tuned_by_kernel.get(conv._conv_forward_kernel)
                cfg = tuned.best_config if tuned is not None else None
                config = (f"{cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']}x{cfg.kwargs['BLOCK_K']} "
                          f"w{cfg.num_warps} s{cfg.num_stages} (first call {time.perf_counter() - started:.1f}s)"
                          if cfg is not None else "?")
            if err > 2e-2:
                times[name] = f"BAD{err:.0e}"
                continue
            times[name] = None if args.smoke else _bench(run, args.rep)

        def aten_run(x=x, wt=wt, b=b, stride=stride, pad=pad):
            return F.conv2d(x, wt, b, stride, pad)
        aten = None if args.smoke else _bench(aten_run, args.rep)
        numbers = [t for t in times.values() if isinstance(t, float)]
        moved = sum(t.numel() * t.element_size() for t in (x, wt, b, ref))
        cols = " ".join(f"{_fmt(t):>11}" for t in times.values())
        dflt = times.get("default")
        ratio = (f"{aten / dflt:.2f}x/{aten / min(numbers):.2f}x" if numbers and aten and isinstance(dflt, float)
                 else "-")
        best = f"{moved / min(numbers) / 1e6 / COPY_CEILING_GBPS:.0%}" if numbers else ""
        print(f"{','.join(map(str, shape)):30} {str(dtype)[6:]:8} {_fmt(aten):>8} {cols}  {ratio:>11} {best:>5}  "
              f"{config}", flush=True)


def _bench(fn, rep: int) -> float:
    import triton.testing

    return triton.testing.do_bench(fn, warmup=5, rep=rep)


def _fmt(t) -> str:
    if t is None:
        return "ok"
    return t if isinstance(t, str) else f"{t:.4f}"


if __name__ == "__main__":
    main()
