"""The timer ``triton.autotune`` compares configs with (gems/runtime/configs.py passes it as ``do_bench``).

Triton's default (``triton.testing.do_bench``) records a start event, calls the kernel from Python, records an
end event. When the host needs longer to launch the call (Python launcher, the restore hooks' copies) than the
device needs for the work already queued, the device sits idle between the events and the host's time is
measured instead. On an H200 the persistent GEMM's tuner saw 42-168 us for calls that take 12.8-17.7 us
(BERT-base's 2048 x 768 -> 768), so it ranked configs by noise and chose one 28% slower than the best.
This timer queues a spin kernel before each start event, twice as long as the host's launch, so the device
is still busy when the call arrives and the events time the device alone.
"""

from __future__ import annotations

import time

# Spin length per second of host launch time (cycles at about 2 GHz, an H100/H200 SM clock), doubled for margin.
_SPIN_CYCLES_PER_S = 2 * 2.0e9
_MAX_RUNS = 100


def device_time(fn, warmup=5, rep=20, quantiles=None, return_mode="mean"):
    """``triton.testing.do_bench``'s interface and meaning (L2 cache cleared before each run; milliseconds),
    with each run's host launch hidden behind a spin kernel. Devices whose torch module has no ``_sleep``
    (not CUDA) take Triton's own timer."""
    import torch
    import triton

    driver = triton.runtime.driver.active
    device = driver.get_device_interface()
    if not hasattr(device, "_sleep"):  # unreached on the interpreter: tuning needs several configs
        return triton.testing.do_bench(fn, warmup=warmup, rep=rep, quantiles=quantiles, return_mode=return_mode)
    fn()  # unreached on the interpreter: CUDA
    device.synchronize()
    started = time.perf_counter()
    fn()
    spin = int(_SPIN_CYCLES_PER_S * (time.perf_counter() - started)) + 20_000
    cache = driver.get_empty_cache_for_benchmark()
    runs = []
    for _ in range(max(1, warmup // 5)):
        fn()
    budget_ms = float(rep)
    while len(runs) < _MAX_RUNS and (len(runs) < 5 or sum(runs) < budget_ms):
        batch = [(device.Event(enable_timing=True), device.Event(enable_timing=True)) for _ in range(5)]
        for start, end in batch:
            driver.clear_cache(cache)
            device._sleep(spin)
            start.record()
            fn()
            end.record()
        device.synchronize()
        runs += [start.elapsed_time(end) for start, end in batch]
    times = torch.tensor(runs, dtype=torch.float64)
    if quantiles is not None:
        found = torch.quantile(times, torch.tensor(quantiles, dtype=torch.float64)).tolist()
        return found[0] if len(found) == 1 else found
    if return_mode == "all":
        return runs
    return getattr(torch, return_mode)(times).item()
