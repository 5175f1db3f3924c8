"""Issue #16 (round 3): a short check of blas speed on one NVIDIA GPU, ATen and gems side by side in one
process (triton's do_bench, L2 flushed before each call, median).

    GEMS_VENDOR=nvidia PYTHONPATH=. python tools/gpu_blasperf2.py [fp32,tf32,decode]

Compiling is what limits one GPU run, so it runs in two phases: first ``WORKERS`` processes (default 14)
compile every config this run will time into Triton's disk cache (each running its share once with the
config forced, no tuning, no timing); then this process tunes and times everything from that cache.

fp32    mm 4096^3 and 8192^3 without TF32 (FMA, IEEE): "plain" (a read as given: gemm.column_major off for
        the case, round 2's behaviour) vs now (a copied M-major by products.column_major, a Triton tile
        transpose), a already M-major ("a-km": the bound of any copy), addmm 4096^3; the error of ATen and
        gems against the float64 product. Then the column-major copy alone, torch's vs gems', and the ceiling.
tf32    mm 4096^3 and 8192^3 with TF32: b row-major ("kn": gems copies it K-major) and already K-major ("nk").
decode  fp16/bf16 x[M, 4096] @ W[4096, 4096] ("kn", skinny kernel) and F.linear(x[M, 4096], W[11008, 4096])
        ("nk"; M = 1 takes the GEMV kernel) for M = 1, 4, 16: GB/s and % of the copy ceiling.

Each line: ``case  aten us  gems us  xRATIO (aten/gems: above 1 gems is faster)  TFLOP/s  GB/s (% copy)``.
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
COMPILE_S = float(os.environ.get("COMPILE_S", "14"))
# A smoke test of this script on the CPU: BLAS_DEVICE=cpu BLAS_SCALE=128 GEMS_VENDOR=interpreter (sizes / SCALE).
DEVICE = os.environ.get("BLAS_DEVICE", "cuda")
SCALE = int(os.environ.get("BLAS_SCALE", "1"))
# The module switches a case may set (restored to these values before every case).
MODULES = {"gemm": gemm, "skinny": skinny}
DEFAULTS = {"gemm.column_major": gemm.column_major}
PLAIN = {"gemm.column_major": lambda t: t}  # no column-major copy: an fp32 IEEE product reads a as given


def size(n: int) -> int:
    return max(1, n // SCALE)


@dataclass
class Case:
    name: str
    section: str
    make: object  # () -> tuple of call arguments (tensors)
    call: object  # (*args) -> tensor, the torch-level call
    tuned: object  # the Tuned kernel whose config is reported
    tf32: bool = False
    flops: float = 0
    nbytes: float = 0
    dtype: torch.dtype = torch.float32
    flags: dict = field(default_factory=dict)  # switches (DEFAULTS' names) set while the case runs
    oracle: bool = False  # print the error of ATen and gems against the float64 product
    reference: object = None  # the ATen call, when it differs from ``call``
    split_args: dict | None = None  # skinny cases: N, K (the K split of a config is printed)
    spec: str = ""  # cases with the same spec compile the same kernels: compiled once


def mm_case(section, n, tf32, layout="kn", op="mm", flags=None, tag="", a_layout="mk"):
    def make():
        m = size(n)
        a = torch.randn(m, m, device=DEVICE) if a_layout == "mk" else torch.randn(m, m, device=DEVICE).t()
        b = torch.randn(m, m, device=DEVICE) if layout == "kn" else torch.randn(m, m, device=DEVICE).t()
        return (torch.randn(m, device=DEVICE), a, b) if op == "addmm" else (a, b)
    call = {"mm": torch.mm, "addmm": torch.addmm}[op]
    name = f"{op} fp32 {n}^3 {'a-km ' if a_layout == 'km' else ''}{layout} tf32={'on' if tf32 else 'off'}{tag}"
    # The kernel a case compiles: a TF32 kn product runs the nk kernel on its K-major copy of b; an FMA one
    # the km kernel on its M-major copy of a (the mk kernel when plain).
    spec = f"{op} {tf32} {'mk' if tf32 or flags == PLAIN else 'km'} {'nk' if tf32 else layout}"
    return Case(name, section, make, call, gemm._gemm_kernel, tf32, 2 * n**3, 3 * n * n * 4, flags=flags or {},
                oracle=not tf32, spec=spec)


def decode_case(dtype, m, layout):
    k, n = size(4096), size(4096 if layout == "kn" else 11008)

    def make():
        x = torch.randn(m, k, dtype=dtype, device=DEVICE)
        return x, (torch.randn(k, n, dtype=dtype, device=DEVICE) if layout == "kn" else
                   torch.randn(n, k, dtype=dtype, device=DEVICE))
    gemv = layout == "nk" and m == 1  # gemm.py sends one row read along K to the GEMV
    name = f"{'mm' if layout == 'kn' else 'linear'} {str(dtype)[6:]} {m}x{k}x{n} {layout}{' (gemv)' if gemv else ''}"
    case = Case(name, "decode", make, torch.mm if layout == "kn" else F.linear,
                gemm._gemv_kernel if gemv else skinny._skinny_kernel, False, 2 * m * n * k,
                (m * k + k * n + m * n) * dtype.itemsize, dtype, spec=name)
    if layout == "kn":
        case.split_args = {"N": n, "K": k}
    return case


def cases(sections):
    out = []
    if "fp32" in sections:
        for n in (4096, 8192):
            out += [mm_case("fp32", n, False, flags=PLAIN, tag=" plain"), mm_case("fp32", n, False)]
        out += [mm_case("fp32", 4096, False, a_layout="km"), mm_case("fp32", 4096, False, op="addmm")]
    if "tf32" in sections:
        out += [mm_case("tf32", n, True, layout) for n in (4096, 8192) for layout in ("kn", "nk")]
    if "decode" in sections:
        out += [decode_case(dtype, m, layout) for dtype in (torch.float16, torch.bfloat16)
                for layout in ("kn", "nk") for m in (1, 4, 16)]
    return out


def label(config, case=None, args=None) -> str:
    meta = "x".join(str(v) for k, v in config.kwargs.items() if k.startswith("BLOCK_"))
    out = f"{meta}w{config.num_warps}s{config.num_stages}"
    if case is not None and case.split_args and args is not None:
        out += f"/k{skinny._split({**case.split_args, **config.kwargs, 'a_ptr': args[0]})}"
    return out


def yaml_configs(tuned, dtype=None):
    """The tune list, as the tuner prunes it for ``dtype`` (shared memory) when given."""
    configs = list(tuned.autotuner.configs)
    prune = tuned.autotuner.early_config_prune
    if dtype is None or prune is None:
        return configs
    return prune(configs, {"a_ptr": torch.empty(1, dtype=dtype, device=DEVICE)})


def setup(case):
    torch.backends.cuda.matmul.allow_tf32 = case.tf32
    for name, value in {**DEFAULTS, **case.flags}.items():
        module, attr = name.split(".")
        setattr(MODULES[module], attr, value)


def run(case, args):
    setup(case)
    with gems.use_gems(include=OPS):
        return case.call(*args)


def jobs(all_cases):
    """(case, config) to compile: every tuned config of each case (under the case's switches)."""
    seen, out = set(), []
    for case in all_cases:
        for config in yaml_configs(case.tuned, case.dtype):
            if (case.spec, label(config)) not in seen:
                seen.add((case.spec, label(config)))
                out.append((case, config))
    return out


def forced(case, config):
    """Run the case once with ``config`` forced (autotuner bypassed)."""
    tuned = case.tuned
    saved = tuned.autotuner.configs
    tuned.autotuner.configs, tuned.chosen = [config], {}
    tuned.autotuner.cache.clear()
    gems.native.invalidate()  # a stored plan would replay another config's launch
    try:
        run(case, case.make())
    finally:
        tuned.autotuner.configs, tuned.chosen = saved, {}


def worker(index, count, sections):
    for case, config in jobs(cases(sections))[index::count]:
        try:
            forced(case, config)
        except Exception as exc:  # a config this dtype cannot run: the timing phase says so
            print(f"  compile {case.name} {label(config)}: {type(exc).__name__}", file=sys.stderr)
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


def relative(got, want) -> float:
    return ((got.double() - want).abs().max() / want.abs().max().clamp_min(1e-300)).item()


def measure(case, ceiling):
    args = case.make()
    gems.native.invalidate()  # plans replay the config they were recorded with
    setup(case)
    reference = case.reference or case.call
    aten_ms = bench(lambda: reference(*args))
    want = reference(*args)
    got = run(case, args)  # the first call tunes
    err = f"err {relative(got, want.double()):.0e}"
    if case.oracle:  # the float64 product: ATen's and gems' own errors
        exact = reference(*(t.double() for t in args))
        err = f"err64 aten {relative(want, exact):.1e} gems {relative(got, exact):.1e}"
    best = case.tuned.best_config
    setup(case)
    with gems.use_gems(include=OPS):
        gems_ms = bench(lambda: case.call(*args))
    rate = case.nbytes / gems_ms / 1e6
    print(f"{case.name:<38} aten {aten_ms * 1e3:8.1f}us gems {gems_ms * 1e3:8.1f}us x{aten_ms / gems_ms:5.2f} "
          f"{case.flops / gems_ms / 1e9:6.1f} TFLOP/s {rate:5.0f} GB/s ({100 * rate / ceiling:3.0f}% copy; aten "
          f"{100 * case.nbytes / aten_ms / 1e6 / ceiling:3.0f}%) {err} chose {label(best, case, args)}", flush=True)


def column_major_copy(ceiling):
    """The column-major copy alone (the FMA's M-major a, TF32's K-major b): torch's vs gems' (products.column_major)."""
    for n in (4096, 8192):
        b = torch.randn(1, size(n), size(n), device=DEVICE)
        assert torch.equal(gemm.column_major(b), b) and gemm.column_major(b).stride(1) == 1, "the copy is wrong"
        torch_ms = bench(lambda b=b: b.transpose(1, 2).contiguous().transpose(1, 2))
        gems_ms = bench(lambda b=b: gemm.column_major(b))
        ideal = 2 * b.numel() * 4 / ceiling / 1e6
        print(f"column-major copy {n}^2 fp32: torch {torch_ms * 1e3:.1f}us gems {gems_ms * 1e3:.1f}us; copy ceiling "
              f"{ideal * 1e3:.1f}us ({100 * ideal / gems_ms:.0f}% of it)", flush=True)


def main():
    sections = (sys.argv[1] if len(sys.argv) > 1 else "fp32,tf32,decode").split(",")
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
    print(f"compiled {len(jobs(cases(sections)))} configs in {time.time() - START:.0f}s by {WORKERS} workers; "
          f"{len(failures)} failed:" + "".join(f"\n{line}" for line in failures[:8]), flush=True)
    ceiling = copy_ceiling()
    device = torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE
    print(f"{device} torch {torch.__version__} triton {triton.__version__} copy ceiling {ceiling:.0f} GB/s", flush=True)
    section = None
    for case in cases(sections):
        if case.section != section:
            if section:
                print(f"-- {section} done at {time.time() - START:.0f}s", flush=True)
            if case.section == "tf32":
                try:
                    column_major_copy(ceiling)
                except Exception as exc:
                    print(f"column-major copy: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            section = case.section
        case.tuned.chosen.clear()
        try:
            measure(case, ceiling)
        except Exception as exc:
            print(f"{case.name}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
    print(f"-- {section} done at {time.time() - START:.0f}s", flush=True)
    setup(cases(sections)[0])
    torch.backends.cuda.matmul.allow_tf32 = False


if __name__ == "__main__":
    main()
