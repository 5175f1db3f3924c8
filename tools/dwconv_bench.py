"""Device time of depthwise 3x3 convolutions, ATen (cuDNN / its depthwise kernels) beside gems' direct kernels
(gems/ops/conv/depthwise.py), forward and backward (grad input + grad weight, no bias, as after a BatchNorm).

    python tools/dwconv_bench.py            (NVIDIA GPU; run by tools/gpu_dwconv.sh)
    python tools/dwconv_bench.py --warm I/M (one call of every M-th case from I: compiles into Triton's cache)

Shapes: batch 32, MobileNetV2/ResNet-like (32ch 112x112, 144ch 56x56, 256ch 28x28, 960ch 7x7), stride 1 and 2;
fp16 everywhere, bf16 and fp32 at stride 1, fp16 channels-last at two shapes. Each rep: L2 flushed (a 256 MiB
write), then one call between CUDA events; all reps are enqueued behind a GPU sleep, so the events time the
device alone (gems' calls replay natively, but a Python call would not show either). Median of REPS.
Then the tile variants of depthwise.py (fp16, stride 1, NCHW), to choose its constants in one run.
"""

from __future__ import annotations

import functools
import statistics
import sys

import torch

import gems
from gems import native
from gems.ops.conv import depthwise

aten = torch.ops.aten
N, REPS = 32, 10
SHAPES = [(32, 112), (144, 56), (256, 28), (960, 7)]
VARIANTS = {"tile2048/p128": (2048, 128, 64), "tile1024/p128": (1024, 128, 64), "tile4096/p128": (4096, 128, 64),
            "tile2048/p256": (2048, 256, 64), "tile4096/p64": (4096, 64, 128)}


def cases():
    for c, hw in SHAPES:
        for stride in (1, 2):
            yield c, hw, stride, torch.float16, False
    for dt in (torch.bfloat16, torch.float32):
        for c, hw in SHAPES:
            yield c, hw, 1, dt, False
    for c, hw in SHAPES[1:3]:
        yield c, hw, 1, torch.float16, True


def _cycles_per_ms() -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    start.record()
    torch.cuda._sleep(20_000_000)
    end.record()
    torch.cuda.synchronize()
    return 20_000_000 / start.elapsed_time(end)


def device_ms(fn, cycles, flush) -> float:
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(REPS)]
    torch.cuda.synchronize()
    torch.cuda._sleep(int((5 + REPS * 0.6) * cycles))
    for start, end in events:
        flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def make(c, hw, stride, dt, cl):
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(N, c, hw, hw, generator=gen).to("cuda", dt)
    if cl:
        x = x.to(memory_format=torch.channels_last)
    w = (torch.randn(c, 1, 3, 3, generator=gen) / 3).to("cuda", dt)
    o = (hw - 1) // stride + 1
    dy = torch.randn(N, c, o, o, generator=gen).to("cuda", dt)
    if cl:
        dy = dy.to(memory_format=torch.channels_last)
    geo = ([stride] * 2, [1, 1], [1, 1], False, [0, 0], c)
    fwd = functools.partial(aten.convolution, x, w, None, *geo)
    bwd = functools.partial(aten.convolution_backward, dy, x, w, None, *geo, [True, True, False])
    return fwd, bwd


def _err(got, want) -> float:
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    return max(((g.float() - w.float()).abs().max() / w.float().abs().max().clamp_min(1e-6)).item()
               for g, w in zip(got, want) if w is not None)


def gems_ms(fn, overload, cycles, flush):
    native.invalidate()
    with gems.use_gems(include=[overload]):
        fn(), fn()
        ms = device_ms(fn, cycles, flush)
        got = fn()
    return ms, got


def warm_up(part: int, parts: int) -> None:
    """Compile this process's share (every parts-th item from part) of the cases and the variants."""
    items = [(None, case) for case in cases()]
    items += [(v, (c, hw, 1, torch.float16, False)) for v in list(VARIANTS)[1:] for c, hw in SHAPES]
    for variant, case in items[part::parts]:
        if variant is not None:
            depthwise.TILE, depthwise.NCHW_BLOCK_P, depthwise.CHANNELS_LAST_BLOCK_C = VARIANTS[variant]
        fwd, bwd = make(*case)
        native.invalidate()
        with gems.use_gems(include=["convolution", "convolution_backward"]):
            fwd(), bwd()
    torch.cuda.synchronize()
    print(f"warm ok {part}/{parts}: {len(items[part::parts])} items")


def main() -> int:
    cycles = _cycles_per_ms()
    flush = torch.empty(2**28, dtype=torch.int8, device="cuda")
    bad = False
    print(f"{'case':30} {'aten fwd':>9} {'gems fwd':>9} {'x':>5}   {'aten bwd':>9} {'gems bwd':>9} {'x':>5}  err")
    for c, hw, stride, dt, cl in cases():
        fwd, bwd = make(c, hw, stride, dt, cl)
        row, err = [], 0.0
        for fn, overload in ((fwd, "convolution"), (bwd, "convolution_backward")):
            want = fn()
            a = device_ms(fn, cycles, flush)
            g, got = gems_ms(fn, overload, cycles, flush)
            err = max(err, _err(got, want))
            row.append(f"{a:9.4f} {g:9.4f} {a / g:5.2f}")
        tol = 2e-2 if dt != torch.float32 else 2e-3  # ATen's fp32 may use TF32 (cuDNN's default)
        bad |= err > tol
        name = f"{c}ch {hw}x{hw} s{stride} {str(dt)[6:]}{' cl' if cl else ''}"
        print(f"{name:30} {row[0]}   {row[1]}  {err:.1e}{'' if err <= tol else ' BAD'}", flush=True)
    print("variants (fp16, stride 1, NCHW): TILE/NCHW_BLOCK_P/CHANNELS_LAST_BLOCK_C, gems fwd / bwd ms")
    for name, (tile, block_p, block_c) in VARIANTS.items():
        depthwise.TILE, depthwise.NCHW_BLOCK_P, depthwise.CHANNELS_LAST_BLOCK_C = tile, block_p, block_c
        cols = []
        for c, hw in SHAPES:
            fwd, bwd = make(c, hw, 1, torch.float16, False)
            cols.append(f"{c}/{hw} {gems_ms(fwd, 'convolution', cycles, flush)[0]:.4f} "
                        f"{gems_ms(bwd, 'convolution_backward', cycles, flush)[0]:.4f}")
        print(f"  {name:14} " + "  ".join(cols), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--warm":
        warm_up(*map(int, sys.argv[2].split("/")))
        sys.exit(0)
    sys.exit(main())
