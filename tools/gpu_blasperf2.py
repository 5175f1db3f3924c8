"""Issue #16 (second round): blas speed on one NVIDIA GPU, ATen and gems side by side in one process
(triton's do_bench, L2 flushed before each call, median), plus the configs the next change chooses between.

    GEMS_VENDOR=nvidia PYTHONPATH=. python tools/gpu_blasperf2.py [fp32,tf32,decode,bmm]

Compiling is what limits one GPU run, so it runs in two phases: first ``WORKERS`` processes (default 14)
compile every config this run will time (gems' own tune list and the candidates below) into Triton's disk
cache, each running its share once with the config forced (no autotuning, no timing); then this process
autotunes and times everything, loading the compiled kernels from that cache.

fp32    (TF32 off: the FMA path) mm 4096^3 and 8192^3, addmm (bias vector) and bmm 1x8192^3; every
        candidate FMA tile at mm 4096^3 and 8192^3.
tf32    (TF32 allowed) mm 4096^3 and 8192^3 with b row-major ("kn") and b stored K-major ("nk": the
        layout Hopper's TF32 wgmma reads without a transpose); every candidate tile at both sizes.
decode  fp16/bf16 x[M, 4096] @ W[4096, 4096] (W row-major, "kn") and F.linear(x[M, 4096], W[11008, 4096])
        ("nk", W read along K) for M = 1, 4, 16; GB/s and % of the copy ceiling; skinny-kernel candidates
        (tile, warps, stages, forced K split) for fp16 M = 1; the GEMV kernel for M = 1 fp16 as well.
bmm     bmm 32 x 1024 x 128 x 1024 fp16 (each candidate tile) and bf16.

Each line: ``case  aten us  gems us  xRATIO (aten/gems: above 1 gems is faster)  TFLOP/s  GB/s (% copy)``;
then ``cands:`` the candidate times in us, best first (``*``: the config is in tune_configs.yaml; ``/kS``: K
forced into S splits; ``=x``: it failed, e.g. OutOfResources).

What the run decides: (1) the FMA tiles to keep/put in the gemm list (a candidate beating the chosen one at
both 4096^3 and 8192^3), addmm's cost over mm; (2) whether gemm._TF32_K_MAJOR stays on ("kn" vs "kn nocopy"
lines) and the TF32 tiles; (3) the skinny tiles and K split rule (split 1 rows beating the split ones mean
skinny._split should favour fewer, wider-K programs), skinny vs the GEMV kernel for one fp16 row
("gemv-path" lines); (4) the bmm 32x1024x128x1024 tile.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
import triton

import gems
import gems.native
from gems.ops.blas import gemm, skinny

START = time.time()
OPS = ["mm", "bmm", "addmm", "mv"]
WORKERS = int(os.environ.get("WORKERS", "14"))
COMPILE_S = float(os.environ.get("COMPILE_S", "40"))
# A smoke test of this script on the CPU: BLAS_DEVICE=cpu BLAS_SCALE=128 GEMS_VENDOR=interpreter (sizes / SCALE).
DEVICE = os.environ.get("BLAS_DEVICE", "cuda")
SCALE = int(os.environ.get("BLAS_SCALE", "1"))


def size(n: int) -> int:
    return max(1, n // SCALE)


def cfg(bm, bn, bk, warps, stages, group=8):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group},
                         num_warps=warps, num_stages=stages)


def scfg(bn, bk, warps, stages):
    return triton.Config({"BLOCK_N": bn, "BLOCK_K": bk}, num_warps=warps, num_stages=stages)


# FMA tiles (fp32 without TF32): outputs per thread = BM*BN / (32*warps); BLOCK_K short (8-32).
FMA = [cfg(128, 128, 16, 8, 5), cfg(128, 128, 16, 8, 3), cfg(128, 128, 8, 8, 4), cfg(128, 128, 32, 8, 3),
       cfg(128, 256, 16, 8, 3), cfg(256, 128, 16, 8, 3), cfg(128, 256, 32, 8, 3), cfg(256, 128, 32, 8, 3),
       cfg(128, 128, 16, 4, 4), cfg(128, 64, 16, 4, 4), cfg(64, 128, 16, 4, 4)]
# TF32 tiles: fp32 operands are 4 bytes, so K = 32 (128-byte rows) and 3-4 stages fit 228 KB.
TF32 = [cfg(128, 128, 32, 8, 3), cfg(128, 128, 32, 8, 4), cfg(128, 256, 32, 8, 3), cfg(256, 128, 32, 8, 3),
        cfg(128, 256, 32, 8, 4), cfg(128, 128, 64, 8, 3), cfg(128, 128, 32, 4, 4), cfg(128, 64, 32, 4, 4)]
BMM = [cfg(128, 128, 128, 8, 2), cfg(128, 128, 128, 8, 1), cfg(128, 128, 64, 8, 3), cfg(128, 256, 64, 8, 3),
       cfg(256, 128, 64, 8, 3), cfg(64, 128, 128, 4, 2), cfg(128, 64, 128, 4, 2), cfg(64, 256, 128, 8, 2)]
# Skinny (tile, K split) for x @ W, W row-major [4096, 4096]: 4096 columns.
SKINNY_KN = [(scfg(128, 64, 4, 4), 4), (scfg(128, 64, 4, 4), 8), (scfg(128, 64, 4, 4), 16),
             (scfg(64, 128, 4, 4), 2), (scfg(64, 128, 4, 4), 4), (scfg(64, 128, 4, 4), 8),
             (scfg(256, 64, 8, 4), 4), (scfg(256, 64, 8, 4), 8), (scfg(32, 256, 4, 3), 1),
             (scfg(32, 256, 4, 3), 2), (scfg(32, 128, 4, 6), 2), (scfg(64, 64, 4, 8), 4)]
# Skinny for linear (W [11008, 4096] read along K): 11008 columns.
SKINNY_NK = [(scfg(64, 256, 4, 3), 1), (scfg(64, 256, 4, 3), 2), (scfg(128, 128, 4, 3), 1),
             (scfg(128, 128, 4, 3), 2), (scfg(128, 128, 4, 4), 4), (scfg(32, 256, 4, 4), 1),
             (scfg(32, 512, 4, 3), 1), (scfg(64, 128, 4, 4), 2), (scfg(128, 256, 8, 3), 2)]


@dataclass
class Case:
    name: str
    section: str
    make: object  # () -> tuple of call arguments (tensors)
    call: object  # (*args) -> tensor, the torch-level call
    tuned: object = None  # the Tuned kernel whose configs are compared
    candidates: list = field(default_factory=list)  # [(triton.Config, forced SPLIT_K or None)]
    tf32: bool = False
    flops: float = 0
    nbytes: float = 0
    spec: str = ""  # cases with the same spec compile the same kernels: compiled once
    include: tuple = tuple(OPS)
    dtype: torch.dtype = torch.float32
    flags: dict = field(default_factory=dict)  # gems.ops.blas.gemm attributes set while the case runs


def mm_case(section, n, tf32, layout="kn", cands=(), spec=None, op="mm", copy=True):
    def make(layout=layout, op=op, n=n):
        n = size(n)
        a = torch.randn(n, n, device=DEVICE)
        b = torch.randn(n, n, device=DEVICE) if layout == "kn" else torch.randn(n, n, device=DEVICE).t()
        if op == "bmm":
            return a[None], b[None]
        if op == "addmm":
            return torch.randn(n, device=DEVICE), a, b
        return a, b
    call = {"mm": torch.mm, "bmm": torch.bmm, "addmm": torch.addmm}[op]
    return Case(f"{op} fp32 {n}^3 {layout} tf32={'on' if tf32 else 'off'}{'' if copy else ' nocopy'}", section,
                make, call, gemm._gemm_kernel, [(c, None) for c in cands], tf32, 2 * n**3, 3 * n * n * 4,
                spec or f"{op}{tf32}{layout}", flags={"_TF32_K_MAJOR": copy})


def decode_case(dtype, m, layout, cands=(), gemv=False):
    k, n = size(4096), size(4096 if layout == "kn" else 11008)

    def make():
        x = torch.randn(m, k, dtype=dtype, device=DEVICE)
        w = torch.randn(k, n, dtype=dtype, device=DEVICE) if layout == "kn" else \
            torch.randn(n, k, dtype=dtype, device=DEVICE)
        return x, w
    if gemv:  # the GEMV kernel instead of skinny for one row: y = W^T x (kn) or W x (nk)
        def call(x, w, layout=layout):
            y = torch.empty(w.shape[1] if layout == "kn" else w.shape[0], dtype=x.dtype, device=x.device)
            return gemm.gemv(w.t() if layout == "kn" else w, x[0], y)[None]
        ref = torch.mm if layout == "kn" else F.linear
        name = f"gemv-path {str(dtype)[6:]} {m}x{k}x{n} {layout}"
        case = Case(name, "decode", make, call, gemm._gemv_kernel, [], False, 2 * m * n * k,
                    (m * k + k * n + m * n) * 2, f"gemv{dtype}{layout}", dtype=dtype)
        case.reference = ref
        return case
    call = torch.mm if layout == "kn" else F.linear
    name = f"{'mm' if layout == 'kn' else 'linear'} {str(dtype)[6:]} {m}x{k}x{n} {layout}"
    case = Case(name, "decode", make, call, skinny._skinny_kernel, list(cands), False, 2 * m * n * k,
                (m * k + k * n + m * n) * dtype.itemsize, f"skinny{dtype}{layout}{m}", dtype=dtype)
    case.split_args = {"N": n, "K": k}  # the default K split of the chosen tile is printed
    return case


def bmm_case(dtype, cands=()):
    def make():
        return (torch.randn(32, size(1024), size(128), dtype=dtype, device=DEVICE),
                torch.randn(32, size(128), size(1024), dtype=dtype, device=DEVICE))
    return Case(f"bmm {str(dtype)[6:]} 32x1024x128x1024", "bmm", make, torch.bmm, gemm._gemm_kernel,
                [(c, None) for c in cands], False, 2 * 32 * 1024 * 1024 * 128,
                (2 * 32 * 1024 * 128 + 32 * 1024 * 1024) * dtype.itemsize, f"bmm{dtype}", dtype=dtype)


def cases(sections):
    out = []
    if "fp32" in sections:
        out += [mm_case("fp32", 4096, False, cands=FMA, spec="fp32"), mm_case("fp32", 8192, False, cands=FMA,
                                                                               spec="fp32"),
                mm_case("fp32", 4096, False, op="addmm"), mm_case("fp32", 8192, False, op="addmm"),
                mm_case("fp32", 8192, False, op="bmm", spec="fp32")]
    if "tf32" in sections:
        # "kn" copies b K-major first (gemm._TF32_K_MAJOR), which makes it the "nk" kernel; "nocopy" does not.
        out += [mm_case("tf32", n, True, "kn", TF32, spec="tf32k") for n in (4096, 8192)]
        out += [mm_case("tf32", n, True, "kn", TF32, spec="tf32n", copy=False) for n in (4096, 8192)]
        out += [mm_case("tf32", n, True, "nk", spec="tf32k") for n in (4096, 8192)]
    if "decode" in sections:
        for dtype in (torch.float16, torch.bfloat16):
            for layout in ("kn", "nk"):
                for m in (1, 4, 16):
                    first = dtype == torch.float16 and m == 1
                    out.append(decode_case(dtype, m, layout, (SKINNY_KN if layout == "kn" else SKINNY_NK)
                                           if first else ()))
        out += [decode_case(torch.float16, 1, layout, gemv=True) for layout in ("kn", "nk")]
    if "bmm" in sections:
        out += [bmm_case(torch.float16, BMM), bmm_case(torch.bfloat16)]
    return [c for c in out if c.section in sections]


def label(config, split=None) -> str:
    meta = "x".join(str(v) for k, v in config.kwargs.items() if k.startswith("BLOCK_"))
    return f"{meta}w{config.num_warps}s{config.num_stages}" + (f"/k{split}" if split else "")


def yaml_configs(tuned, dtype=None):
    """The tune list, as the tuner prunes it for ``dtype`` (shared memory) when given."""
    configs = list(tuned.autotuner.configs)
    prune = tuned.autotuner.early_config_prune
    if dtype is None or prune is None:
        return configs
    return prune(configs, {"a_ptr": torch.empty(1, dtype=dtype, device=DEVICE)})


def jobs(all_cases):
    """(case, config, split) to compile: each case's candidates and its tune list, once per spec."""
    seen, out = set(), []
    for case in all_cases:
        for config, split in [*case.candidates, *((c, None) for c in yaml_configs(case.tuned, case.dtype))]:
            tag = (case.spec, label(config, split), case.tf32)
            if tag not in seen:
                seen.add(tag)
                out.append((case, config, split))
    return out


def forced(case, config, split):
    """Run the case once with ``config`` (and K split) forced, autotuner bypassed."""
    tuned = case.tuned
    saved, rule = tuned.autotuner.configs, tuned.rules.get("SPLIT_K")
    tuned.autotuner.configs, tuned.chosen = [config], {}
    tuned.autotuner.cache.clear()
    gems.native.invalidate()  # a stored plan would replay another config's launch
    if split:
        tuned.rules["SPLIT_K"] = lambda args, s=split: s
    try:
        run(case, case.make())
    finally:
        tuned.autotuner.configs, tuned.chosen = saved, {}
        if rule is not None:
            tuned.rules["SPLIT_K"] = rule


def run(case, args):
    setup(case)
    with gems.use_gems(include=case.include):
        return case.call(*args)


def setup(case):
    torch.backends.cuda.matmul.allow_tf32 = case.tf32
    for name, value in case.flags.items():
        setattr(gemm, name, value)


def worker(index, count, sections):
    todo = jobs(cases(sections))[index::count]
    for case, config, split in todo:
        try:
            forced(case, config, split)
        except Exception as exc:  # a config this dtype cannot run: the timing phase says so
            print(f"  compile {case.name} {label(config, split)}: {type(exc).__name__}", file=sys.stderr)
        if time.time() - START > COMPILE_S:
            break


def bench(fn) -> float:
    if DEVICE == "cpu":
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    return triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median")


def copy_ceiling() -> float:
    x = torch.empty(2**28 // SCALE**2, dtype=torch.uint8, device=DEVICE)
    y = torch.empty_like(x)
    return 2 * x.numel() / bench(lambda: y.copy_(x)) / 1e6


def measure(case, ceiling):
    args = case.make()
    gems.native.invalidate()  # plans replay the config they were recorded with
    setup(case)
    reference = getattr(case, "reference", case.call)
    aten_ms = bench(lambda: reference(*args))
    want = reference(*args).float()
    got = run(case, args).float()  # the first call autotunes
    err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
    best = case.tuned.best_config
    chose = label(best)
    if hasattr(case, "split_args"):
        chose += f"/k{skinny._split({**case.split_args, **best.kwargs, 'a_ptr': args[0]})}"
    with gems.use_gems(include=case.include):
        gems_ms = bench(lambda: case.call(*args))
    rate = case.nbytes / gems_ms / 1e6
    print(f"{case.name:<36} aten {aten_ms * 1e3:8.1f}us gems {gems_ms * 1e3:8.1f}us x{aten_ms / gems_ms:5.2f} "
          f"{case.flops / gems_ms / 1e9:6.1f} TFLOP/s {rate:5.0f} GB/s ({100 * rate / ceiling:3.0f}% copy; aten "
          f"{100 * case.nbytes / aten_ms / 1e6 / ceiling:3.0f}%) err {err:.0e} chose {chose}", flush=True)
    if not case.candidates:
        return
    times = []
    (key,) = [k for k in case.tuned.chosen]  # this case's key alone (chosen reset per case below)
    rule = case.tuned.rules.get("SPLIT_K")
    with gems.use_gems(include=case.include):
        for config, split in case.candidates:
            case.tuned.chosen[key] = config
            gems.native.invalidate()
            if split:
                case.tuned.rules["SPLIT_K"] = lambda a, s=split: s
            try:
                times.append((bench(lambda: case.call(*args)), label(config, split)))
            except Exception as exc:
                times.append((float("inf"), f"{label(config, split)}:{type(exc).__name__}"))
            if rule is not None:
                case.tuned.rules["SPLIT_K"] = rule
        case.tuned.chosen[key] = best
        gems.native.invalidate()
    listed = {label(c) for c in yaml_configs(case.tuned)}
    print("   cands: " + "  ".join(f"{name}{'*' if name.split('/')[0] in listed else ''}="
                                   f"{'x' if ms == float('inf') else f'{ms * 1e3:.1f}'}"
                                   for ms, name in sorted(times)), flush=True)


def main():
    sections = (sys.argv[1] if len(sys.argv) > 1 else "fp32,tf32,decode,bmm").split(",")
    if len(sys.argv) > 2 and sys.argv[2] == "--compile":
        worker(int(sys.argv[3]), int(sys.argv[4]), sections)
        return
    torch.manual_seed(0)
    with gems.use_gems(include=OPS):  # builds the native layer once, before the workers load it
        pass
    logs = os.environ.get("OUT", "runs/blasperf2")
    os.makedirs(logs, exist_ok=True)
    procs = []
    for i in range(WORKERS):  # each worker's stderr to a file: a full pipe would stall it
        with open(f"{logs}/compile-{i}.log", "w") as err:
            procs.append(subprocess.Popen([sys.executable, __file__, ",".join(sections), "--compile", str(i),
                                           str(WORKERS)], stdout=subprocess.DEVNULL, stderr=err))
    for proc in procs:
        try:
            proc.wait(timeout=max(1.0, COMPILE_S + 15 - (time.time() - START)))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    failures = [line for i in range(WORKERS) for line in open(f"{logs}/compile-{i}.log").read().splitlines()
                if line.startswith("  compile")]
    print(f"compiled in {time.time() - START:.0f}s by {WORKERS} workers; {len(failures)} configs failed to run:"
          + "".join(f"\n{line}" for line in failures[:12]), flush=True)
    ceiling = copy_ceiling()
    device = torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE
    print(f"{device} torch {torch.__version__} triton {triton.__version__} copy ceiling {ceiling:.0f} GB/s", flush=True)
    section = None
    for case in cases(sections):
        if case.section != section:
            if section:
                print(f"-- {section} done at {time.time() - START:.0f}s", flush=True)
            section = case.section
        case.tuned.chosen.clear()
        try:
            measure(case, ceiling)
        except Exception as exc:
            print(f"{case.name}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
    print(f"-- {section} done at {time.time() - START:.0f}s", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False


if __name__ == "__main__":
    main()
