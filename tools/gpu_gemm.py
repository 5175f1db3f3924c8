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
products ("dx": g[M, N] @ W, "dW": g^T @ x, a = g.t()), the layouts F.linear hands to ATen. The cases and
the check's jobs: tools/gemm_cases.py. A smoke test on the CPU: GEMM_DEVICE=cpu GEMM_SCALE=64 GEMS_VENDOR=interpreter.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from gemm_cases import DEVICE, PATHS, SCALE, cases, check_jobs, make, operands_2d, precompile_jobs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gems

START = time.time()


# --------------------------------------------------------------------------- compile (CPU)

def compile_report(args) -> int:
    os.environ.pop("TRITON_INTERPRET", None)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from gems.runtime import selection

    backend = selection._current = selection.load_backend("nvidia")  # its configs, without its device
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
                    for split, even in (((1, True), (4, True)) if tma else ((1, True), (4, False))):
                        constexprs = {**config.kwargs, "HAS_BIAS": bias, "SCALED": False, "BIAS_ROW": bias,
                                      "INT64": False, "TMA": tma, "A_K_MAJOR": a_k, "B_K_MAJOR": b_k,
                                      "EVEN_K": even, "SPLIT_K": split, "stride_cn": 1, "stride_in": 1,
                                      "stride_ak" if a_k else "stride_am": 1, "stride_bk" if b_k else "stride_bn": 1}
                        signature = {p: ("constexpr" if p in constexprs else "*fp32" if p == "part_ptr" else
                                         f"*{dtype}" if p.endswith("_ptr") else "fp32" if p in ("alpha", "beta")
                                         else "i32") for p in fn.arg_names}
                        divisible = [i for i, p in enumerate(fn.arg_names) if signature[p] != "constexpr"
                                     and p not in ("alpha", "beta", "stride_im")]
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


# --------------------------------------------------------------------------- GPU: paths, precompile, check, bench


def _gems():
    """gems with mm and addmm registered, on the nvidia vendor; the module objects the forcing patches."""
    import gems
    from gems.ops.blas import gemm, persistent

    gems.enable(include=["mm", "addmm"])
    return gems, gemm, persistent


def force(persistent, path, routed):
    """Send single fp16/bf16 products to ``path`` (None: gems' own routing ``routed``); the native layer's
    recorded plans are dropped, as they replay the routing of the call they recorded."""
    from gems import native

    native.invalidate()
    if path is None:
        persistent.mode = routed
    elif path == "old":
        persistent.mode = lambda a, b, dtype: None
    else:
        def mode(a, b, dtype):
            if dtype not in persistent.DTYPES:
                return None
            ready = persistent._k_major(a, 1)[1] and persistent._k_major(b, 0)[1]
            return "tma" if path == "tma" and ready else "pointer"
        persistent.mode = mode


def _short_tuning(persistent, gemm):
    """Tune with 5 ms of warm-up and 20 ms of runs per config (Triton's default 25 and 100): same winners on
    clear margins, a fifth of the time."""
    from gems.runtime.tuning_timer import device_time

    bench = lambda fn, quantiles: device_time(fn, warmup=5, rep=20, quantiles=quantiles)  # noqa: E731
    for tuned in (gemm._gemm_kernel, persistent._tma, persistent._pointer):
        tuned.autotuner._do_bench = bench


def _force_config(tuned, configs, index):
    """Tune ``tuned`` over ``configs[index]`` alone (over all of them for None)."""
    tuned.autotuner.configs = list(configs) if index is None else [configs[index]]
    tuned.autotuner.cache.clear()
    tuned.chosen.clear()


def precompile(args) -> int:
    """Fill Triton's disk cache: WORKERS processes run their share of :func:`gemm_cases.precompile_jobs` once
    each, one config forced (no tuning, no timing)."""
    jobs = precompile_jobs()
    workers = int(os.environ.get("WORKERS", "8"))
    if args.worker is None:
        print(f"precompile: {len(jobs)} kernel variants on {workers} workers", flush=True)
        procs = [subprocess.Popen([sys.executable, __file__, "precompile", "--worker", str(w)]) for w in range(workers)]
        return max(p.wait() for p in procs)
    import torch

    gems, gemm, persistent = _gems()
    routed = persistent.mode
    tuned = {"old": gemm._gemm_kernel, "ptr": persistent._pointer, "tma": persistent._tma}
    full = {name: list(t.autotuner.configs) for name, t in tuned.items()}
    failures = 0
    for case, path, index in jobs[int(args.worker)::workers]:
        if path != "small":
            _force_config(tuned[path], full[path], index)
            force(persistent, path, routed)
        call, operands = make(case)
        try:
            call(*operands)
            if DEVICE == "cuda":
                torch.cuda.synchronize()
        except Exception as exc:  # reported, the others go on
            failures += 1
            print(f"precompile {case} {path} config {index}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
    return 1 if failures else 0


def check(args) -> int:
    """The persistent paths forced (:func:`check_jobs`) against the float64 product (relative error limits:
    bf16 1e-2, fp16 2e-3), then linear's gradients through them (the backward runs on autograd's device
    thread, where the TMA path sets Triton's allocator again)."""
    import torch
    import torch.nn.functional as F

    gems, gemm, persistent = _gems()
    _short_tuning(persistent, gemm)
    routed = persistent.mode
    tuned = {"ptr": persistent._pointer, "tma": persistent._tma}
    full = {name: list(t.autotuner.configs) for name, t in tuned.items()}
    limits = {torch.bfloat16: 1e-2, torch.float16: 2e-3}
    bad = runs = 0

    def judge(what, got, want, dtype):
        nonlocal bad, runs
        runs += 1
        err = ((got.double() - want).norm() / want.norm()).item()
        if not err <= limits[dtype]:  # NaN fails too
            bad += 1
            print(f"check {what}: rel err {err:.2e}", flush=True)

    for case, path, index in check_jobs():
        _force_config(tuned[path], full[path], index)
        force(persistent, path, routed)
        call, operands = make(case)
        with gems.aten_only():
            want = call(*(t.double() for t in operands))
        label = f"{path} {_config_label(full[path][index])} {case}"
        judge(label, call(*operands), want, case[4])
    for path in ("ptr", "tma"):
        _force_config(tuned[path], full[path], 0)
        force(persistent, path, routed)
        for dtype in limits:
            tokens, width, hidden = (1000, 768, 3072) if SCALE == 1 else (40, 72, 48)
            x, w, go = (torch.randn(*s, dtype=dtype, device=DEVICE) for s in
                        ((tokens, width), (hidden, width), (tokens, hidden)))
            x.requires_grad_()
            w.requires_grad_()
            F.linear(x, w).backward(go)
            judge(f"{path} {dtype} linear grad x", x.grad, go.double() @ w.double(), dtype)
            judge(f"{path} {dtype} linear grad W", w.grad, go.double().t() @ x.double(), dtype)
    force(persistent, None, routed)
    print(f"check: {bad} of {runs} products wrong (forced pointer and TMA paths)", flush=True)
    return 1 if bad else 0


def bench(args) -> int:
    import torch
    import triton

    gems, gemm, persistent = _gems()
    _short_tuning(persistent, gemm)
    routed = persistent.mode
    out_dir = Path(os.environ.get("OUT", "runs/gemm"))
    out_dir.mkdir(parents=True, exist_ok=True)
    rows, log = [], open(out_dir / "bench.jsonl", "a")
    deadline = START + float(os.environ.get("BENCH_S", "1e9")) - 25

    def timed(fn):
        if DEVICE == "cpu":  # the smoke test
            started = time.perf_counter()
            fn()
            return (time.perf_counter() - started) * 1e3
        return triton.testing.do_bench(fn, warmup=5, rep=int(os.environ.get("REP_MS", "30")), return_mode="median")

    for case in cases(os.environ.get("CASES", "all")):
        if time.time() > deadline:
            print(f"bench: time limit, {case} and later cases not run", flush=True)
            break
        m, k, n, kind, dtype = case
        call, operands = make(case)
        run = functools.partial(call, *operands)
        flops = 2 * m * n * k
        gems.disable()
        ref = run().float()
        row = {"case": case, "aten": timed(run)}
        gems.enable(include=["mm", "addmm"])
        paths = [None] + ([] if min(m, n) <= 16 or dtype is torch.float32 else list(PATHS))
        for path in paths:
            force(persistent, path, routed)
            try:
                got = run().float()
                err = ((got - ref).norm() / ref.norm()).item()
                row[path or "gems"] = timed(run)
                row[f"{path or 'gems'} err"] = err
                if path is None:
                    how = routed(*operands_2d(case, operands), dtype) if min(m, n) > 16 else None
                    row["route"] = how or ("skinny/gemv" if min(m, n) <= 16 else "old")
            except Exception as exc:  # reported in the table
                row[path or "gems"] = None
                row[f"{path or 'gems'} error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
        force(persistent, None, routed)
        gems.disable()
        row["aten2"] = timed(run)
        gems.enable(include=["mm", "addmm"])
        row["configs"] = {name: _config_label(t.best_config) if t.best_config else "-" for name, t in
                          (("old", gemm._gemm_kernel), ("ptr", persistent._pointer), ("tma", persistent._tma))}
        row["tflops"] = flops / (row["gems"] * 1e9) if row.get("gems") else None
        log.write(json.dumps({**row, "case": list(map(str, case))}) + "\n")
        log.flush()
        rows.append(row)
        print(_line(row), flush=True)
    _table(rows)
    return 0


def _line(row) -> str:
    m, k, n, kind, dtype = row["case"]
    aten = min(row["aten"], row["aten2"])
    cells = [f"{kind:5s} {m:>5d}x{k:<5d}->{n:<6d} {str(dtype)[6:]:8s} aten {aten:7.3f}"]
    for name in ("gems",) + PATHS:
        t = row.get(name)
        flag = "!" if (row.get(f"{name} err") or 0) > 2e-2 or f"{name} error" in row else " "
        cells.append(f"{name} {aten / t:5.2f}{flag}" if t else f"{name}   -  {flag}")
    cells.append(f"{row.get('tflops') or 0:4.0f}TF {row.get('route', '')}")
    return " ".join(cells)


def _table(rows) -> None:
    """The summary: geomean of aten/gems per path over the 16-bit cases, the worst case, the aten spread."""
    import math

    print("\n# ratio = cuBLAS ms / gems ms (above 1: gems faster); '!' = wrong result or error; aten = min of two")
    for name in ("gems",) + PATHS:
        ratios = [min(r["aten"], r["aten2"]) / r[name] for r in rows if r.get(name) and "float32" not in
                  str(r["case"][4])]
        if ratios:
            worst = min(ratios)
            print(f"{name:5s}: geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f} over {len(ratios)} "
                  f"16-bit cases, min {worst:.2f}, under 0.85: {sum(x < 0.85 for x in ratios)}")
    spread = [abs(r["aten"] - r["aten2"]) / min(r["aten"], r["aten2"]) for r in rows]
    if spread:
        print(f"aten timed twice per case: median spread {sorted(spread)[len(spread) // 2]:.1%}, max {max(spread):.1%}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("compile")
    p.add_argument("--arch", type=int, default=90)
    p.add_argument("--all", action="store_true", help="every config x dtype x layout (default: a sample)")
    p = sub.add_parser("precompile")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    sub.add_parser("check")
    sub.add_parser("bench")
    args = parser.parse_args(argv)
    return {"compile": compile_report, "precompile": precompile, "check": check, "bench": bench}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
