"""Attention speed on an H100 (issue #16), run by tools/gpu_attnperf.sh: forward and backward at batch 4, 32 heads,
sequence 4096, head dims 128 and 64, causal and not, fp16/bf16, in TFLOP/s (median of triton's do_bench, L2 flushed).

Providers, on the same q, k, v (batch, heads, seq, dim) contiguous:
  aten-flash  aten::_scaled_dot_product_flash_attention[_backward], gems off: ATen's FlashAttention-2 kernel, the
              issue's yardstick (gems >= 90% of it)
  aten-sdpa   F.scaled_dot_product_attention, gems off: ATen's own backend choice (cuDNN on the H100)
  gems        aten::_scaled_dot_product_flash_attention[_backward] served by gems (autotuned over tune_configs.yaml)
and, forward only, gems' kernel launched with each candidate config (BLOCK_M x BLOCK_N, warps, stages), so that
one run decides tune_configs.yaml.

Kernel compiles run first in a pool of processes (Triton's disk cache keeps them); the autotuner's choices are made
in this process alone, so that no timing taken beside other processes is cached.
"""

import concurrent.futures
import functools
import multiprocessing
import os
import sys
import time

os.environ.setdefault("GEMS_VENDOR", "nvidia")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.runtime.autotuner import Autotuner  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import gems  # noqa: E402
from gems.ops.attention import flash, flash_backward  # noqa: E402

A = torch.ops.aten
B, H, S = 4, 32, 4096
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
# (BLOCK_M, BLOCK_N, num_warps, num_stages): the first six are tune_configs.yaml's list (2026-11-22), then candidates.
CONFIGS = [(128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 8, 4), (128, 64, 4, 3), (64, 64, 4, 3), (64, 32, 4, 2),
           (128, 128, 8, 2), (128, 64, 8, 2), (128, 32, 4, 3), (64, 128, 4, 3), (128, 128, 4, 3)]
SWEEP_DTYPES = ("fp16",)  # every config for these; the others get the autotuned path only
BWD_CASES = [("fp16", 128, False), ("fp16", 128, True), ("bf16", 128, False), ("bf16", 128, True),
             ("fp16", 64, False), ("fp16", 64, True)]
CASES = [(dt, d, c) for d in (128, 64) for dt in DTYPES for c in (False, True)]


def jit(kernel):
    """The kernel under its autotuner."""
    while isinstance(kernel, Autotuner):
        kernel = kernel.fn
    return kernel


@functools.cache
def inputs(dtype, d):
    torch.manual_seed(0)
    return tuple(torch.randn(B, H, S, d, dtype=DTYPES[dtype], device="cuda") for _ in range(3))


def raw_forward(q, k, v, causal, cfg):
    """gems' forward kernel with one config, its other arguments as the overload passes them."""
    bm, bn, warps, stages = cfg
    out = torch.empty((B, S, H, v.shape[3]), dtype=q.dtype, device=q.device).transpose(1, 2)
    lse = torch.empty((B, H, S), dtype=torch.float32, device=q.device)
    grid, args = flash.forward_launch(q, k, v, None, causal, None, out, lse)
    jit(flash._attn_fwd_kernel)[grid({"BLOCK_M": bm})](*args, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps,
                                                        num_stages=stages)
    return out


def pin(kernel, index):
    """Pin an autotuned kernel to its config ``index`` (no benchmarking, nothing cached on disk)."""
    every = kernel.__dict__.setdefault("all_configs", list(kernel.configs))  # a pool process runs several jobs
    kernel.configs = [every[index]]
    kernel.cache_results = False


def warm(job):
    """Compile one kernel specialization in a pool process (Triton's disk cache keeps it)."""
    kind, dtype, d, causal, which = job
    q, k, v = inputs(dtype, d)
    try:
        with gems.use_gems(include=["scaled_dot_product_attention"]):
            if kind == "raw":
                raw_forward(q, k, v, causal, which)
            elif kind == "tuned":  # the autotuner's own launch of tune_configs.yaml's entry ``which``
                pin(flash._attn_fwd_kernel, which)
                A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)
            else:  # "bwd": both backward kernels with their entry ``which``
                pin(flash._attn_fwd_kernel, 0)
                pin(flash_backward._bwd_dkdv_kernel, which)
                pin(flash_backward._bwd_dq_kernel, which)
                fwd = A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)
                A._scaled_dot_product_flash_attention_backward(torch.ones_like(fwd[0]), q, k, v, fwd[0], fwd[1],
                                                               fwd[2], fwd[3], S, S, 0.0, causal, fwd[6], fwd[7])
        torch.cuda.synchronize()
        return None
    except Exception as exc:  # noqa: BLE001 (a config that does not fit is a result)
        return f"{job}: {type(exc).__name__}: {str(exc)[:160]}"


def warm_all():
    n_fwd, n_bwd = len(flash._attn_fwd_kernel.configs), len(flash_backward._bwd_dkdv_kernel.configs)
    jobs = [("bwd", dt, d, c, i) for dt, d, c in BWD_CASES for i in range(n_bwd)]
    jobs += [("raw", dt, d, c, cfg) for dt, d, c in CASES if dt in SWEEP_DTYPES for cfg in CONFIGS]
    jobs += [("tuned", dt, d, c, i) for dt, d, c in CASES for i in range(n_fwd)]
    start = time.time()
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(14, os.cpu_count() or 4), mp_context=ctx) as pool:
        failures = [r for r in pool.map(warm, jobs) if r]
    print(f"compiled {len(jobs)} specializations in {time.time() - start:.1f}s; {len(failures)} failed", flush=True)
    for failure in failures:
        print("  compile/launch failed:", failure)


def bench(fn):
    return do_bench(fn, warmup=10, rep=60, return_mode="median")


def tflops(ms, d, causal, factor=1.0):
    return factor * 4 * B * H * S * S * d / (2 if causal else 1) / (ms * 1e-3) / 1e12


def forward_case(dt, d, causal):
    q, k, v = inputs(dt, d)
    ref = A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)[0]
    t_flash = bench(lambda: A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal))
    t_sdpa = bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
    with gems.use_gems(include=["scaled_dot_product_attention"]):
        got = A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)[0]
        t_gems = bench(lambda: A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal))
        best = flash._attn_fwd_kernel.best_config
    err = (got.float() - ref.float()).abs().max().item()
    print(f"fwd {dt} d{d} causal={int(causal)}: aten-flash {tflops(t_flash, d, causal):6.1f}  aten-sdpa "
          f"{tflops(t_sdpa, d, causal):6.1f}  gems {tflops(t_gems, d, causal):6.1f}  gems/flash "
          f"{t_flash / t_gems:.3f}  gems/sdpa {t_sdpa / t_gems:.3f}  max|gems-flash| {err:.2e}  "
          f"autotune: {best.kwargs} w{best.num_warps} s{best.num_stages}", flush=True)
    if dt not in SWEEP_DTYPES:
        return
    results = []
    for cfg in CONFIGS:
        try:
            results.append((bench(functools.partial(raw_forward, q, k, v, causal, cfg)), cfg))
        except Exception as exc:  # noqa: BLE001 (out of shared memory: reported, not fatal)
            print(f"    cfg {cfg}: {type(exc).__name__}")
    results.sort()
    print("    configs, best first (BLOCK_M, BLOCK_N, warps, stages):TFLOP/s  " + "  ".join(
        f"{cfg}:{tflops(ms, d, causal):.0f}" for ms, cfg in results))


def backward_case(dt, d, causal):
    q, k, v = inputs(dt, d)
    fwd = A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)
    grad = torch.randn_like(fwd[0])

    def call(f):
        return A._scaled_dot_product_flash_attention_backward(grad, q, k, v, f[0], f[1], f[2], f[3], S, S, 0.0,
                                                              causal, f[6], f[7])

    ref = call(fwd)
    t_flash = bench(lambda: call(fwd))
    with gems.use_gems(include=["scaled_dot_product_attention"]):
        mine = A._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)
        got = call(mine)
        t_gems = bench(lambda: call(mine))
    err = max((g.float() - r.float()).abs().max().item() for g, r in zip(got, ref))
    print(f"bwd {dt} d{d} causal={int(causal)}: aten-flash {tflops(t_flash, d, causal, 2.5):6.1f}  gems "
          f"{tflops(t_gems, d, causal, 2.5):6.1f}  gems/flash {t_flash / t_gems:.3f}  max|d(gems-flash)| "
          f"{err:.2e}  dkdv {flash_backward._bwd_dkdv_kernel.best_config.kwargs} dq "
          f"{flash_backward._bwd_dq_kernel.best_config.kwargs}", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    print("ATen's SDPA choice for the target (1 flash, 2 efficient, 3 cudnn):",
          [int(torch._fused_sdp_choice(*inputs("fp16", 128), None, 0.0, c)) for c in (False, True)])
    warm_all()
    print("\nFORWARD (TFLOP/s; gems/flash: gems vs ATen's flash path, target >= 0.90; gems/sdpa: vs ATen's choice)")
    for case in CASES:
        forward_case(*case)
    print("\nBACKWARD (dq, dk, dv from the forward's out and lse; TFLOP/s at 2.5x the forward's flops)")
    for case in BWD_CASES:
        backward_case(*case)
