"""Launching the blas family's autotuned kernels (gemm.py, grouped_mm.py) at the cost of a plain launch.

Triton's autotuner picks a config on the first call of each tuning key (benchmarking the vendor's
``tune_configs.yaml`` list, or reading the result Triton cached on disk), and that call runs through it.
Every later call of the key launches the chosen config's compiled kernel through a plain
:class:`~gems.runtime.launch.Launcher` with a concrete grid: no autotuner, heuristics and argument
binding in Python on each call (they cost more host time than a decode-sized GEMV or a small bmm takes
on the GPU, where a launch through the autotuner waited for the host), and the native layer can record
the call and replay it from C++. The config is a function of the tuning key, which the native layer's
call signature covers (shapes, strides, dtypes); a kernel argument read from global state (fp32
``PRECISION``, from ``torch.backends.cuda.matmul.allow_tf32``) is in the tuning key, and the caller
keeps such calls off the native layer (:func:`keep_in_python`).

While tuning, Triton saves each tensor named in ``restore_value`` before a benchmark run and copies it
back after (``copy_``), which ATen refuses for a tensor whose elements share memory (an expanded
view). Under the interpreter nothing is benchmarked, so :class:`Tuned` checks that copy itself before
tuning, on every vendor: such a call fails on the CPU as it would on the GPU.
"""

from __future__ import annotations

import functools

import torch
import triton
from triton.runtime.autotuner import Autotuner, Heuristics

from gems.runtime import registration
from gems.runtime.launch import Launcher


class Tuned:
    """``Tuned(autotuner).launch(grid, *args)``: ``grid`` a function of the config's META (and heuristic
    values) giving the program counts; ``args`` every kernel argument before the tuned ones. ``scratch``:
    tensor arguments left out of the tuning key (a workspace whose presence depends on the config)."""

    def __init__(self, autotuner, scratch=()):
        self.autotuner = autotuner
        self.scratch = frozenset(scratch)
        inner = autotuner.fn
        self.rules = inner.values if isinstance(inner, Heuristics) else {}
        while isinstance(inner, (Autotuner, Heuristics)):
            inner = inner.fn
        self.names = inner.arg_names
        self.__name__ = inner.__name__
        self.chosen = {}  # tuning key -> triton.Config
        self.best_config = None  # the config of the latest launch
        self._tuning = Launcher(autotuner)
        self._plain = Launcher(inner)

    def key(self, named: dict) -> tuple:
        """The tuning key as Triton's autotuner forms it: the named key arguments, then the tensors' dtypes."""
        return (*(named[k] for k in self.autotuner.keys),
                *(str(v.dtype) for k, v in named.items() if isinstance(v, torch.Tensor) and k not in self.scratch))

    def meta(self, config, named: dict) -> dict:
        """The config's META plus the kernel's heuristic values for it."""
        meta = dict(config.kwargs)
        for name, rule in self.rules.items():
            meta[name] = rule({**named, **meta})
        return meta

    def launch(self, grid, *args):
        """Launch; returns the META (heuristics included) the kernel ran with."""
        named = dict(zip(self.names, args))
        key = self.key(named)
        config = self.chosen.get(key)
        if config is None or not _plain_options(config):
            if config is None:
                for name in self.autotuner.restore_value:
                    _check_restorable(self.__name__, name, named[name])
                if registration.recording is not None:  # the next call of this signature launches plainly
                    registration.recording.deferred = "tuning"
            self._tuning(grid, *args)
            config = self.chosen[key] = self.autotuner.best_config
            self.best_config = config
            return self.meta(config, named)
        meta = self.meta(config, named)
        self._plain(grid(meta), *args, *(meta[name] for name in self.names[len(args):]),
                    num_warps=config.num_warps, num_stages=config.num_stages)
        self.best_config = config
        return meta


def _plain_options(config) -> bool:
    """Whether a Launcher can run the config (it passes num_warps and num_stages only)."""
    return config.num_ctas == 1 and config.maxnreg is None and config.pre_hook is None


def _check_restorable(kernel: str, name: str, t: torch.Tensor) -> None:
    if torch._debug_has_internal_overlap(t) == 1:  # 1: overlapping for sure (2: unknown, as copy_ treats it)
        raise RuntimeError(f"{kernel}: {name} is restored between tuning runs, but it is a view whose elements "
                           f"share memory (strides {t.stride()}), which copy_ refuses: more than one element of "
                           f"the written-to tensor refers to a single memory location")


def keep_in_python(why: str) -> None:
    """Keep this call off the native layer's plans (its launch depends on something the call signature
    does not cover)."""
    if registration.recording is not None:
        registration.recording.refused = why


def _tile_bytes(config, itemsize: int) -> int:
    meta = config.kwargs
    return config.num_stages * (meta["BLOCK_M"] + meta["BLOCK_N"]) * meta["BLOCK_K"] * itemsize


def fitting_configs(configs, named_args, **kwargs):
    """The GEMM configs whose operand tiles, over all pipeline stages, fit the device's shared memory
    (the smallest one if none does): an fp32 or fp64 product needs twice or four times an fp16 one's,
    and compiling a config only to see it refused costs seconds each."""
    itemsize = named_args["a_ptr"].element_size()
    limit = shared_memory(named_args["a_ptr"].device)
    fits = [c for c in configs if _tile_bytes(c, itemsize) <= limit]
    return fits or [min(configs, key=lambda c: _tile_bytes(c, itemsize))]


@functools.cache
def shared_memory(device: torch.device) -> int:
    """Shared memory per block on ``device``, in bytes (for pruning tile configs)."""
    try:
        return triton.runtime.driver.active.utils.get_device_properties(device.index or 0)["max_shared_mem"]
    except Exception:  # a driver that cannot say: keep every config
        return 1 << 62


@functools.cache
def multiprocessors(device: torch.device) -> int:
    """The device's multiprocessors (programs running at once, roughly); 1 where the driver cannot say
    (the interpreter, which runs programs one after another, so small GEMVs still take the split path there)."""
    try:
        return triton.runtime.driver.active.utils.get_device_properties(device.index or 0)["multiprocessor_count"]
    except Exception:
        return 1


_tuned_by_kernel: dict = {}


def launch_tuned(autotuner, grid, *args):
    """``Tuned(autotuner).launch(grid, *args)`` with one :class:`Tuned` per kernel, made on first use (its
    chosen configs kept): for other families' autotuned kernels (gems/ops/conv/)."""
    tuned = _tuned_by_kernel.get(autotuner)
    if tuned is None:
        tuned = _tuned_by_kernel[autotuner] = Tuned(autotuner)
    return tuned.launch(grid, *args)
