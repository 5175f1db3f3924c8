"""Why do gems' conv2d timings differ 2x between processes (issue #16)? One fresh process of the probe.

tools/gpu_convperf2.sh starts several of these (``--role warm``: one per shape, in parallel, to compile and
fill Triton's caches; then ``--role probe --proc k``: fresh processes one after another) and finally
``--role summary``, which reads their JSON (runs/convperf2/probe-*.json) and prints the verdict table.

Per (shape, dtype), each probe process:
 (a) autotunes afresh (Triton's on-disk autotune cache switched off for this process) and prints the chosen
     config and the autotuner's own median per config; then ranks every config by its device time
     (``dev_f`` below, the config forced through gems.ops.blas.tuning's chosen table);
 (b) prints the compiled kernel the plain launches use: hash, registers, spills, shared memory;
 (c) prints data_ptr % 2 MiB of x and y (process k first allocates k * 3 MiB + k * 4 KiB of padding, so
     addresses differ between processes) and times x at a +128 B offset;
 (d) times each provider five ways:
       db_f   triton.testing.do_bench(warmup=10, rep=50): L2 flushed, gems-perf's timer
       db_nf  CUDA events around each call, back to back, no flush
       dev_f  the same as db_f but with the queue filled first (torch.cuda._sleep), so host time cannot show:
              device time with the L2 flushed ("ok" when the sleep outlasted the host's enqueueing)
       dev_nf queue filled first, events around 100 back-to-back calls: device time per call, warm L2
       host   microseconds of host time per call (calls enqueued behind a sleeping GPU)
     providers: aten (F.conv2d, gems off), direct (gems' convolution() called from Python, as
     tools/conv_variants.py did), dispatch (F.conv2d with gems registered: what gems-perf times; "plan"
     tells whether the native layer replays it from C++), and tcopy (dispatch with
     implicit_gemm.NHWC_COPY_KERNEL: the NHWC copy by a Triton kernel, so that the call can be recorded);
     and, in process 0 only, GROUP_M=1 (no grid swizzle) for the 3x3 fp16 shapes, and the NHWC copy alone
     ("nhwc copy": ATen's permuted copy vs gems' copy kernel at each BLOCK x num_warps);
 (e) alternates aten and dispatch for 4 rounds on the first shape, db_f and dev_f, one line per round.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

# [N, C, H, W, K, kernel, stride, padding]: the two unstable 3x3 targets, then the stable 1x1 (control).
SHAPES = [(32, 64, 56, 56, 64, 3, 1, 1), (32, 256, 14, 14, 256, 3, 1, 1), (32, 256, 56, 56, 64, 1, 1, 0)]
KEYS = [(0, "float16"), (0, "bfloat16"), (1, "float16"), (1, "bfloat16"), (2, "float16")]
DTYPE_TEXT = {"float16": "f16", "bfloat16": "bf16"}
OUT_DIR = Path("runs/convperf2")
MIB = 1 << 20
DEVICE = "cuda"  # the device timed (CUDA events and torch.cuda._sleep: an NVIDIA GPU)


def cfg_text(c) -> str:
    k = c.kwargs
    return f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']}w{c.num_warps}s{c.num_stages}g{k['GROUP_M']}"


def shape_text(i: int) -> str:
    n, c, h, w, k, r, s, p = SHAPES[i]
    return f"{c}-{k}/{r}x{r}/{h}"


def make_inputs(i: int, dtype: torch.dtype):
    n, c, h, w, k, r, stride, pad = SHAPES[i]
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(n, c, h, w, generator=gen).to(DEVICE, dtype)
    wt = (torch.randn(k, c, r, r, generator=gen) / math.sqrt(c * r * r)).to(DEVICE, dtype)
    b = torch.randn(k, generator=gen).to(DEVICE, dtype)
    return x, wt, b, stride, pad


# ------------------------------------------------------------------------------------------- timers


class Timers:
    def __init__(self):
        import triton

        self.cache = triton.runtime.driver.active.get_empty_cache_for_benchmark()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        start.record()
        torch.cuda._sleep(20_000_000)
        end.record()
        torch.cuda.synchronize()
        self.cycles_per_ms = 20_000_000 / start.elapsed_time(end)
        self.flush_ms = self.dev(self.cache.zero_, flush=False, n=20)[0]

    def sleep(self, ms: float) -> None:
        torch.cuda._sleep(int(ms * self.cycles_per_ms))

    def host_us(self, fn, n: int = 30) -> float:
        fn()
        torch.cuda.synchronize()
        self.sleep(30)
        start = time.perf_counter()
        for _ in range(n):
            fn()
        took = (time.perf_counter() - start) * 1e6 / n
        torch.cuda.synchronize()
        return took

    def dev(self, fn, flush: bool, n: int = 50, host_us: float = 400.0):
        """(median ms, covered): events around each call behind a sleep long enough for the host to enqueue
        every call first, so the device never waits for the host."""
        fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        mark = torch.cuda.Event(enable_timing=True)
        first = torch.cuda.Event(enable_timing=True)
        sleep_ms = 2.0 + 2.0 * n * (host_us + 20) / 1e3
        mark.record()
        self.sleep(sleep_ms)
        first.record()
        begun = time.perf_counter()
        for i in range(n):
            if flush:
                self.cache.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        enqueue_ms = (time.perf_counter() - begun) * 1e3
        torch.cuda.synchronize()
        slept = mark.elapsed_time(first)
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)), enqueue_ms < slept

    def dev_nf(self, fn, n: int = 100, host_us: float = 400.0) -> float:
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.sleep(2.0 + 1.5 * n * (host_us + 20) / 1e3)
        start.record()
        for _ in range(n):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / n

    @staticmethod
    def db_f(fn):
        from triton.testing import do_bench

        times = do_bench(fn, warmup=10, rep=50, return_mode="all")
        q = statistics.quantiles(times, n=5)
        return statistics.median(times), q[0], q[-1]

    @staticmethod
    def db_nf(fn, n: int = 100) -> float:
        fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))

    def all(self, fn) -> dict:
        host = self.host_us(fn)
        med, p20, p80 = self.db_f(fn)
        dev_f, covered = self.dev(fn, flush=True, host_us=host)
        return {"db_f": med, "db_f_p20": p20, "db_f_p80": p80, "db_nf": self.db_nf(fn), "dev_f": dev_f,
                "covered": covered, "dev_nf": self.dev_nf(fn, host_us=host), "host_us": host}


def line(proc, key, provider, t) -> str:
    return (f"p{proc} {key:16} {provider:9} db_f {t['db_f']:.4f} [{t['db_f_p20']:.4f}-{t['db_f_p80']:.4f}] "
            f"db_nf {t['db_nf']:.4f} dev_f {t['dev_f']:.4f}{'' if t['covered'] else '(drained)'} "
            f"dev_nf {t['dev_nf']:.4f} host {t['host_us']:.0f}us" + (f" {t['note']}" if t.get("note") else ""))


# ------------------------------------------------------------------------------------------- roles


def warm(index: int) -> None:
    """Compile and autotune one (shape, dtype) (Triton's disk caches filled for the probe processes)."""
    import gems  # noqa: F401
    from gems.ops.blas import tuning
    from gems.ops.conv import convolution as conv

    i, dt = KEYS[index]
    x, wt, b, stride, pad = make_inputs(i, getattr(torch, dt))
    started = time.perf_counter()
    conv.convolution(x, wt, b, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1)
    conv.convolution(x, wt, b, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1)
    torch.cuda.synchronize()
    tuned = tuning._tuned_by_kernel[conv._conv_forward_kernel]
    timings = getattr(conv._conv_forward_kernel, "configs_timings", None) or {}
    ranked = sorted(timings.items(), key=lambda e: _ms(e[1]))
    print(f"warm {shape_text(i)} {DTYPE_TEXT.get(dt, dt)}: {cfg_text(tuned.best_config)} in "
          f"{time.perf_counter() - started:.1f}s (concurrent tuning: "
          + " ".join(f"{cfg_text(c)}={_ms(t):.4f}" for c, t in ranked) + ")", flush=True)


def _ms(t) -> float:
    return t[0] if isinstance(t, (list, tuple)) else float(t)


def probe_key(proc: int, i: int, dt: str, timers: Timers, group_m: bool, out: dict) -> None:
    """Everything the probe measures at one (shape, dtype); see the module docstring."""
    import triton

    import gems
    from gems import native
    from gems.ops.blas import tuning
    from gems.ops.conv import convolution as conv
    from gems.ops.conv import implicit_gemm
    from gems.runtime import registration

    autotuner = conv._conv_forward_kernel
    dtype = getattr(torch, dt)
    key = f"{shape_text(i)} {DTYPE_TEXT.get(dt, dt)}"
    x, wt, b, stride, pad = make_inputs(i, dtype)
    args = ([stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1)

    def direct(x=x):
        return conv.convolution(x, wt, b, *args)

    def aten():
        return F.conv2d(x, wt, b, stride, pad)

    started = time.perf_counter()
    tuned = tuning._tuned_by_kernel.get(autotuner)
    known = set(tuned.chosen) if tuned else set()
    y = direct()
    torch.cuda.synchronize()
    tune_s = time.perf_counter() - started
    tuned = tuning._tuned_by_kernel[autotuner]
    (tkey,) = [k for k in tuned.chosen if k not in known]
    chosen = tuned.chosen[tkey]
    timings = dict(getattr(autotuner, "configs_timings", None) or {})
    plain, used = tuned._plain, []

    def spy(gx, gy, gz, nw, ns, a, launch=plain._launch):
        used.append((plain._prepare(*a)[0], nw, ns))
        return launch(gx, gy, gz, nw, ns, a)
    plain._launch = spy
    try:
        direct()  # the first plain launch: compiles (or loads) the chosen config's kernel
    finally:
        del plain._launch
    torch.cuda.synchronize()
    ref = aten().float()
    err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
    meta = []
    for k in used[-1:]:
        ck = plain._kernels[k]
        meta.append({"hash": str(ck.hash)[:10], "regs": getattr(ck, "n_regs", None),
                     "spills": getattr(ck, "n_spills", None), "shared": getattr(ck.metadata, "shared", None)})
    rec = {"config": cfg_text(chosen), "tune_s": tune_s, "err": err,
           "autotune": {cfg_text(c): _ms(t) for c, t in timings.items()}, "kernel": meta,
           "x_mod2M": x.data_ptr() % (2 * MIB), "y_mod2M": y.data_ptr() % (2 * MIB), "providers": {}}
    print(f"p{proc} {key:16} config {rec['config']} (tuned {tune_s:.1f}s, err {err:.1e}) kernel {meta} "
          f"x%2M {rec['x_mod2M']} y%2M {rec['y_mod2M']}", flush=True)
    print(f"p{proc} {key:16} autotune " + " ".join(
        f"{c}={t:.4f}" for c, t in sorted(rec["autotune"].items(), key=lambda e: e[1])), flush=True)
    del y

    # (d) the providers
    for name, fn in (("aten", aten), ("direct", direct)):
        t = rec["providers"][name] = timers.all(fn)
        print(line(proc, key, name, t), flush=True)
    for name, copy_kernel in (("dispatch", False), ("tcopy", True)):
        implicit_gemm.NHWC_COPY_KERNEL = copy_kernel
        native.invalidate()
        try:
            with gems.use_gems(include=["convolution"]):
                calls = registration.gems_calls.cell("convolution")
                aten()
                aten()  # the second call of a signature records its plan (the first was not tuned yet)
                native.reset_counts()
                before = calls[0]
                t = timers.all(aten)
                replayed = native.call_counts().get("convolution", 0)
                in_python = calls[0] - before
                plans = native.plan_counts().get("convolution", 0)
            t["note"] = f"plans {plans} replayed {replayed} python {in_python}"
            if replayed + in_python == 0:
                t["note"] += " ATEN RAN (not gems)"
        finally:
            implicit_gemm.NHWC_COPY_KERNEL = False
        rec["providers"][name] = t
        print(line(proc, key, name, t), flush=True)

    # (c) x at a +128 B offset (16-byte aligned: the same compiled kernel); the first shape (x copied to NHWC
    # inside the call) and the 1x1 one (x read in place)
    if (i, dt) == KEYS[0] or SHAPES[i][5] == 1:
        shift = 128 // x.element_size()
        base = torch.empty(x.numel() + shift, dtype=dtype, device=DEVICE)
        x_off = base[shift:].view(x.shape)
        x_off.copy_(x)
        t = rec["providers"]["direct+128B"] = timers.all(lambda: direct(x_off))
        print(line(proc, key, "direct+128B", t), flush=True)

    # (a) every config's device time (forced through the tuned table), and GROUP_M=1 (process 0, 3x3)
    ranking = {}
    for c in autotuner.configs:
        tuned.chosen[tkey] = c
        try:
            direct()
            ranking[cfg_text(c)] = timers.dev(direct, flush=True, n=30)[0]
        except Exception as exc:  # a config that does not fit: say so, go on
            ranking[cfg_text(c)] = float("nan")
            print(f"p{proc} {key:16} {cfg_text(c)} failed: {type(exc).__name__}", flush=True)
    if group_m and SHAPES[i][5] == 3 and dt == "float16":
        flat = triton.Config({**chosen.kwargs, "GROUP_M": 1}, num_warps=chosen.num_warps,
                             num_stages=chosen.num_stages)
        tuned.chosen[tkey] = flat
        direct()
        t = rec["providers"]["group_m1"] = timers.all(direct)
        print(line(proc, key, "groupm1", t), flush=True)
    tuned.chosen[tkey] = chosen
    rec["ranking"] = ranking
    print(f"p{proc} {key:16} dev_f by config " + " ".join(
        f"{c}={t:.4f}" for c, t in sorted(ranking.items(), key=lambda e: e[1])), flush=True)
    out["keys"][key] = rec

    # (e) clocks / drift: alternate ATen and gems (dispatch) on the first shape
    if (i, dt) == KEYS[0]:
        for r in range(4):
            a = (timers.db_f(aten)[0], timers.dev(aten, flush=True, n=30)[0])
            with gems.use_gems(include=["convolution"]):  # F.conv2d now reaches gems
                g = (timers.db_f(aten)[0], timers.dev(aten, flush=True, n=30)[0])
            out["rounds"].append({"aten": a, "gems": g})
            print(f"p{proc} round {r}: aten db_f {a[0]:.4f} dev_f {a[1]:.4f} | gems db_f {g[0]:.4f} "
                  f"dev_f {g[1]:.4f}", flush=True)


def copy_bench(proc: int, timers: Timers) -> dict:
    """Device time (L2 flushed) of the NCHW -> NHWC copy at the 3x3 shapes, fp16: ATen's permuted copy and
    gems' _nhwc_copy_kernel at each (BLOCK, num_warps); each checked against ATen's."""
    from gems.ops.conv import implicit_gemm
    from gems.runtime.launch import cdiv

    results = {}
    for i in (0, 1):
        x5 = make_inputs(i, torch.float16)[0].unsqueeze(2)
        n, c = x5.shape[:2]
        pixels = x5[0, 0].numel()
        ref = x5.permute(0, 2, 3, 4, 1).contiguous()
        dst = torch.empty_like(ref)
        times = {"aten": timers.dev(lambda x5=x5: x5.permute(0, 2, 3, 4, 1).contiguous(), flush=True, n=30)[0]}
        for block in (32, 64, 128):
            for warps in (4, 8):
                def run(x5=x5, dst=dst, n=n, c=c, pixels=pixels, block=block, warps=warps):
                    implicit_gemm._nhwc_copy((cdiv(pixels, block), cdiv(c, block), n), x5, dst, c, pixels,
                                             x5.stride(0), x5.stride(1), False, block, num_warps=warps)
                dst.zero_()
                run()
                ok = torch.equal(dst, ref)
                times[f"b{block}w{warps}"] = timers.dev(run, flush=True, n=30)[0] if ok else float("nan")
        gbps = {k: 2 * ref.numel() * ref.element_size() / (t * 1e6) for k, t in times.items()}
        print(f"p{proc} nhwc copy {shape_text(i)} f16 (us, GB/s): " + " ".join(
            f"{k}={t * 1e3:.1f}/{gbps[k]:.0f}" for k, t in times.items()), flush=True)
        results[shape_text(i)] = times
    return results


def probe(proc: int, group_m: bool) -> None:
    import gems  # noqa: F401  (selects the vendor)
    from gems import native
    from gems.ops.conv import convolution as conv

    padding = torch.empty((proc * 3 * MIB + proc * 4096,), dtype=torch.uint8, device=DEVICE)  # noqa: F841
    autotuner = conv._conv_forward_kernel
    autotuner.cache_results = False  # (a): every process tunes afresh, as a first gems-perf run does
    timers = Timers()
    out = {"proc": proc, "flush_ms": timers.flush_ms, "keys": {}, "rounds": []}
    print(f"p{proc} flush {timers.flush_ms:.4f} ms, sleep {timers.cycles_per_ms / 1e3:.0f} cycles/us", flush=True)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for i, dt in KEYS:
        probe_key(proc, i, dt, timers, group_m, out)
        if group_m and (i, dt) == KEYS[0]:  # process 0: the copy kernel's tiles (tcopy's GPU cost)
            out["nhwc_copy"] = copy_bench(proc, timers)
        (OUT_DIR / f"probe-{proc}.json").write_text(json.dumps(out, indent=1))  # kept if the budget cuts us
    print(f"p{proc} native layer {native.status()}", flush=True)


def summary() -> None:
    """One line per (shape, provider): each process's db_f / dev_f / host, and the spread of each."""
    runs = [json.loads(p.read_text()) for p in sorted(OUT_DIR.glob("probe-*.json"))]
    if not runs:
        print("summary: no probe results")
        return
    print(f"summary over {len(runs)} processes (ms; spread = max/min over processes); flush "
          + " ".join(f"{r['flush_ms']:.3f}" for r in runs))
    for key in runs[0]["keys"]:
        recs = [r["keys"][key] for r in runs if key in r["keys"]]
        print(f"{key:16} configs " + " ".join(r["config"] for r in recs) + "  best by dev_f "
              + " ".join(min(r["ranking"], key=lambda c: r["ranking"][c]) for r in recs)
              + "  kernels " + " ".join(str(sorted({(m['hash'], m['regs'], m['spills']) for m in r['kernel']}))
                                        for r in recs))
        for prov in recs[0]["providers"]:
            ts = [r["providers"][prov] for r in recs if prov in r["providers"]]
            cols = []
            for field in ("db_f", "dev_f", "dev_nf", "host_us"):
                vals = [t[field] for t in ts]
                fmt = "{:.0f}" if field == "host_us" else "{:.4f}"
                cols.append(f"{field} " + "/".join(fmt.format(v) for v in vals) + f" ({max(vals) / min(vals):.2f})")
            print(f"  {prov:12} " + "  ".join(cols))
    print("read: db_f spread >> dev_f spread, with db_f ~ host_us/1e3 - flush -> the timer sees host time "
          "(gems-perf's number is the Python call, not the kernel); configs differing + dev_f spread -> "
          "(a) autotune; kernels differing -> (b); dev_f tracking x%2M/y%2M or +128B -> (c); groupm1 "
          "faster -> grid order; rounds drifting for aten too -> clocks.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=("warm", "probe", "summary"), required=True)
    parser.add_argument("--index", type=int, default=0, help="warm: which of KEYS")
    parser.add_argument("--proc", type=int, default=0, help="probe: process number")
    args = parser.parse_args()
    if args.role == "summary":
        summary()
    elif args.role == "warm":
        warm(args.index)
    else:
        probe(args.proc, group_m=args.proc == 0)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
