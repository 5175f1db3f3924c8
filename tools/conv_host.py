"""Host time per call and device time of gems' convolutions beside ATen (cuDNN), and which path served them:
the check that a warm conv call is replayed by the native layer (issue #16: a call that ran gems' Python
path cost 115-150 us of host time, more than the 3x3 kernels take, and gems-perf timed that instead).

    python tools/conv_host.py            (NVIDIA GPU; run by tools/gpu_convperf2.sh)

Per case (batch 32, fp16): forward 3x3 64->64 56x56, its backward to input and weight (db not asked for,
as after a BatchNorm), and a 3x3 depthwise forward and backward at 256 channels 28x28. Each provider is
called twice first (the first call of a signature autotunes, the second records the native plan), then:
  host_us  microseconds of host time per call, enqueued behind a sleeping GPU (the device never waits)
  dev_ms   device time per call, 100 calls back to back behind the same sleep (L2 warm)
  path     for gems: steady calls replayed natively / run in Python (must be all replayed), and the
           largest error of a replayed result relative to ATen's largest element (fp16: below 1e-2)
Exits 1 if a warm gems call ran in Python, ATen served it, or a replayed result is off.
"""

from __future__ import annotations

import functools
import sys
import time

import torch

import gems
from gems import native
from gems.runtime import registration

aten = torch.ops.aten
N = 32
CASES = [  # name, overload, x shape, w shape, groups, backward
    ("fwd 3x3 64-64/56", "convolution", (N, 64, 56, 56), (64, 64, 3, 3), 1, False),
    ("bwd 3x3 64-64/56", "convolution_backward", (N, 64, 56, 56), (64, 64, 3, 3), 1, True),
    ("fwd dw3x3 256/28", "convolution", (N, 256, 28, 28), (256, 1, 3, 3), 256, False),
    ("bwd dw3x3 256/28", "convolution_backward", (N, 256, 28, 28), (256, 1, 3, 3), 256, True),
]


def _sleep_ms(ms: float, cycles_per_ms: float) -> None:
    torch.cuda._sleep(int(ms * cycles_per_ms))


def _cycles_per_ms() -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    start.record()
    torch.cuda._sleep(20_000_000)
    end.record()
    torch.cuda.synchronize()
    return 20_000_000 / start.elapsed_time(end)


def measure(fn, cycles: float, n: int = 100) -> tuple[float, float]:
    """(host us per call, device ms per call): n calls enqueued behind a sleep that outlasts enqueueing."""
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    _sleep_ms(5.0 + n * 0.5, cycles)  # 0.5 ms per call covers even a slow Python path
    start.record()
    begun = time.perf_counter()
    for _ in range(n):
        fn()
    host_us = (time.perf_counter() - begun) * 1e6 / n
    end.record()
    torch.cuda.synchronize()
    return host_us, start.elapsed_time(end) / n


def _rel_err(got, want) -> float:
    want = want.float()
    return ((got.float() - want).abs().max() / want.abs().max().clamp_min(1e-6)).item()


def main() -> int:
    cycles = _cycles_per_ms()
    failed = False
    for name, overload, xs, ws, groups, backward in CASES:
        gen = torch.Generator(device="cpu").manual_seed(0)
        x = torch.randn(xs, generator=gen).to("cuda", torch.float16)
        w = (torch.randn(ws, generator=gen) / (ws[1] * 9) ** 0.5).to("cuda", torch.float16)
        geo = ([1, 1], [1, 1], [1, 1], False, [0, 0], groups)
        dy = torch.randn(xs[0], ws[0], *xs[2:], generator=gen).to("cuda", torch.float16)
        if backward:
            fn = functools.partial(aten.convolution_backward, dy, x, w, None, *geo, [True, True, False])
        else:
            fn = functools.partial(aten.convolution, x, w, None, *geo)
        want = fn()
        host, dev = measure(fn, cycles)
        print(f"{name:18} aten  host {host:6.1f} us  dev {dev:.4f} ms", flush=True)
        native.invalidate()
        with gems.use_gems(include=[overload]):
            fn(), fn()
            native.reset_counts()
            calls = registration.gems_calls.cell(overload)
            before = calls[0]
            host_g, dev_g = measure(fn, cycles)
            replayed, python = native.call_counts().get(overload, 0), calls[0] - before
            got = fn()  # a replay
        pairs = zip(got, want) if backward else [(got, want)]
        err = max(_rel_err(a, b) for a, b in pairs if b is not None)
        ok = replayed > 0 and python == 0 and err < 1e-2
        failed |= not ok
        print(f"{name:18} gems  host {host_g:6.1f} us  dev {dev_g:.4f} ms  ({dev / dev_g:.2f}x ATen's device time)"
              f"  path: replayed {replayed} python {python}  err {err:.1e}{'' if ok else '  FAILED'}", flush=True)
    print("native layer", gems.native_status())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
