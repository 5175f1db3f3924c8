"""Timings for branch "scanperf" (tools/gpu_scanperf.sh; issue 15's speed targets for the scans and prod):
cummax, cummin, cumsum and prod at 32768x4096 over the last dim, fp16/bf16, ATen and gems side by side in
one process with the copy ceiling measured there too, plus the variants the run decides:

- cummax/cummin "two-scan": the kernel's two-scan form (keys, then positions, values read back) forced on
  fp16/bf16 (scanning.PACK_MAX_BITS = 0), against the default packed form (one int64 running max).
- the middle dim [32, 4096, 1024] (dim 1) of cummax, cummin and prod, for information.

Each gems result is checked (cummax/cummin: ATen's values and indices bit for bit; cumsum, prod: float64
within 1%) and must have been served by gems. Run on the GPU with GEMS_VENDOR=nvidia.
"""

import torch
import triton

import gems
import gems.ops.reduction.scanning as scanning

DTYPES = (torch.float16, torch.bfloat16)
TARGET = {"cummax": 85.0, "cummin": 85.0, "cumsum": 85.0, "prod": 90.0}


def bench(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")


def copy_ceiling():
    x = torch.empty(1 << 28, dtype=torch.float16, device="cuda")  # 512 MiB each way
    y = torch.empty_like(x)
    return 2 * x.numel() * 2 / bench(lambda: y.copy_(x)) / 1e6  # GB/s


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def call(op, x, dim):
    return {"cummax": torch.cummax, "cummin": torch.cummin, "cumsum": torch.cumsum, "prod": torch.prod}[op](x, dim)


def agree(op, x, dim, got, want):
    """cummax/cummin: ATen's values (bit for bit) and indices; cumsum/prod: the float64 result within 1%."""
    if op in ("cummax", "cummin"):
        return (torch.equal(got[0].view(torch.int16), want[0].view(torch.int16)) and torch.equal(got[1], want[1]))
    return torch.allclose(got.double(), call(op, x.double(), dim), rtol=1e-2, atol=1e-2, equal_nan=True)


def run(op, x, dim, label, ceiling):
    want = call(op, x, dim)
    aten = bench(lambda: call(op, x, dim))
    gems.reset_counts()
    with gems.use_gems(include=[op]):
        got = call(op, x, dim)
        served = sum(gems.call_counts()["gems"].values()) > 0
        ms = bench(lambda: call(op, x, dim))
    outs = got if isinstance(got, tuple) else (got,)
    pct = nbytes(x, *outs) / ms / 1e6 / ceiling * 100
    ok = "agrees" if agree(op, x, dim, got, want) else "DIFFERS"
    target = TARGET.get(op) if label == "" and x.dim() == 2 else None
    verdict = "" if target is None else (" ok" if pct >= target and ms <= aten else " MISS")
    shape = "x".join(map(str, x.shape))
    print(f"{op + label:<18}{str(x.dtype)[6:]:<10}{shape:<14}{ms:>9.4f}{aten:>9.4f}{aten / ms:>8.2f}{pct:>8.1f}"
          f"  {'' if target is None else f'>= {target:.0f}%'}{verdict}  {ok}{'' if served else ' NOT SERVED BY GEMS'}")


def main():
    torch.manual_seed(0)
    ceiling = copy_ceiling()
    print(f"copy ceiling {ceiling:.0f} GB/s; device {torch.cuda.get_device_name()}")
    print(f"{'op':<18}{'dtype':<10}{'shape':<14}{'gems ms':>9}{'ATen ms':>9}{'speedup':>8}{'% copy':>8}  target")
    for dtype in DTYPES:
        x = torch.randn(32768, 4096, device="cuda").to(dtype)
        near_one = (torch.sign(x) * (1 + x / 16)).to(dtype)  # products stay finite (as prod's samples)
        for op in ("cummax", "cummin", "cumsum"):
            run(op, x, -1, "", ceiling)
        run("prod", near_one, -1, "", ceiling)
        scanning.PACK_MAX_BITS, scanning._extreme_plans = 0, scanning.PlanCache()
        for op in ("cummax", "cummin"):
            run(op, x, -1, " two-scan", ceiling)
        scanning.PACK_MAX_BITS, scanning._extreme_plans = 16, scanning.PlanCache()
        m = torch.randn(32, 4096, 1024, device="cuda").to(dtype)
        for op in ("cummax", "cummin"):
            run(op, m, 1, " mid", ceiling)
        run("prod", (torch.sign(m) * (1 + m / 16)).to(dtype), 1, " mid", ceiling)
        del x, near_one, m


if __name__ == "__main__":
    main()
