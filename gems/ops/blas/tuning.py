"""Launching gems' autotuned kernels (blas, conv, attention) at the cost of a plain launch.

The tuning key is a *shape class*: each integer key argument by its next power of two (M = 1000 and
M = 1024 share one class), the tensors' dtypes and the other key values exactly. Triton's autotuner picks
a config on the first call of a class (benchmarking the vendor's ``tune_configs.yaml`` list), and that
call runs through it; the choice is remembered in the gems cache (``$GEMS_CACHE_DIR/tuning``, per kernel
source, config list, device and triton version), so another process does not tune the class again. A
decode loop whose key length grows every step tunes once per power of two, not once per length.
Every later call of the class launches the chosen config's compiled kernel through a plain
:class:`~gems.runtime.launch.Launcher` with a concrete grid: no autotuner, heuristics and argument
binding in Python on each call (they cost more host time than a decode-sized GEMV or a small bmm takes
on the GPU, where a launch through the autotuner waited for the host), and the native layer can record
the call and replay it from C++. The config is a function of the class, which the native layer's
call signature covers (shapes, strides, dtypes; its size-generic plans stay within a power-of-two bucket
of their varying size), and so is fp32 ``PRECISION`` (``torch.backends.cuda.matmul.allow_tf32``), which
the native layer's key reads too. A kernel with a single config (the interpreter vendor's) is never tuned.

While a CUDA graph is being captured nothing is tuned (benchmarking launches and synchronizes): a class
with no tuned config runs a config tuned for another class, or one that fits, whose kernel is already
compiled for the call (compiling during capture is an error), and gems says so once per kernel.

While tuning, Triton saves each tensor named in ``restore_value`` before a benchmark run and copies it
back after (``copy_``), which ATen refuses for a tensor whose elements share memory (an expanded
view). Under the interpreter nothing is benchmarked, so :class:`Tuned` checks that copy itself before
tuning, on every vendor: such a call fails on the CPU as it would on the GPU.

In a process that compiles for another to time (gems-perf's precompile workers, which share the GPU with each
other), :func:`compile_only` turns tuning into compiling: a class that would be tuned runs every config once,
untimed, and the choice is kept nowhere (neither here nor in the gems cache nor in Triton's autotune cache), so
the timing process tunes it itself, on a quiet GPU, from compiled kernels.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import warnings
from pathlib import Path

import torch
import triton
from triton.runtime.autotuner import Autotuner, Heuristics

from gems.runtime import registration, selection
from gems.runtime.launch import Launcher, next_power_of_2

_compile_only = False  # compile_only(): tuning compiles every config and chooses nothing


def compile_only(on: bool = True) -> None:
    """From now on in this process, a shape class that would be tuned runs every fitting config once, untimed
    (compiling it), then serves the call with the first that ran; nothing is chosen or remembered. For a
    process whose work is filling Triton's cache for another one (gems-perf's precompile workers): timings
    taken while other processes use the same GPU would pick, and persist, the wrong configs."""
    global _compile_only
    _compile_only = on


def _run_once(kernel_call, quantiles):  # unreached on the interpreter: called where a class is tuned
    """An autotuner's benchmark in compile-only mode: the config compiles and runs once; every config ties."""
    kernel_call()
    return [0.0] * len(quantiles)


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
        self._inner = inner
        self.chosen = {}  # shape class -> triton.Config
        self.best_config = None  # the config of the latest launch
        self._tuning = Launcher(autotuner)
        self._plain = Launcher(inner)
        self._memory = None  # the gems cache's choices for this kernel: {repr(shape class): config index}
        self._warned_capture = False

    def key(self, named: dict) -> tuple:
        """The shape class: the key arguments as Triton's autotuner forms its key, each integer by its next
        power of two, then the tensors' dtypes."""
        return (*(_size_class(named[k]) for k in self.autotuner.keys),
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
        # Every call, tuned or not: whether the class is tuned in this process must not decide the error.
        for name in self.autotuner.restore_value:
            _check_restorable(self.__name__, name, named[name])
        key = self.key(named)
        config = self.chosen.get(key) or self._known(key, named)
        if config is None and _capturing():  # unreached on the interpreter: CUDA graph capture
            config = self._untuned_during_capture(key, named, args)
        if config is None or not _plain_options(config):  # unreached on the interpreter: one config each, never tuned
            if _compile_only:
                return self._compile_every_config(grid, args, named)
            if config is None and registration.recording is not None:  # the next call of this signature is plain
                registration.recording.deferred = "tuning"
            self._tuning(grid, *args)
            config = self.autotuner.best_config
            if key not in self.chosen:
                self.chosen[key] = config
                self._remember(key, config, named)
            self.best_config = config
            meta = self.meta(config, named)
            if _plain_options(config):  # the plain launcher runs this class from now on: the kernel tuning compiled
                self._plain.adopt((*args, *(meta[name] for name in self.names[len(args):])),
                                  config.num_warps, config.num_stages)
            return meta
        meta = self.meta(config, named)
        self._plain(grid(meta), *args, *(meta[name] for name in self.names[len(args):]),
                    num_warps=config.num_warps, num_stages=config.num_stages)
        self.best_config = config
        return meta

    def _compile_every_config(self, grid, args, named) -> dict:  # unreached on the interpreter: one config each
        """compile_only(): Triton's autotuner runs every fitting config once with :func:`_run_once` as its
        benchmark and its disk cache off; its in-memory choice is dropped after, and nothing is kept here."""
        tuner = self.autotuner
        saved_bench, saved_cache, known = tuner.__dict__.get("do_bench"), tuner.cache_results, set(tuner.cache)
        tuner.do_bench, tuner.cache_results = _run_once, False  # instance attributes over Triton's defaults
        try:
            self._tuning(grid, *args)
        finally:
            tuner.cache_results = saved_cache
            if saved_bench is None:
                del tuner.do_bench
            else:
                tuner.do_bench = saved_bench
            for key in set(tuner.cache) - known:
                del tuner.cache[key]
        self.best_config = tuner.best_config
        return self.meta(tuner.best_config, named)

    def _known(self, key, named):
        """The config of a class without tuning: the only one, or the one the gems cache remembers."""
        configs = self.autotuner.configs
        if len(configs) == 1:
            config = configs[0]
        else:  # unreached on the interpreter: one config per kernel
            if self._memory is None:
                self._memory = _read_memory(self._memory_path(named))
            index = self._memory.get(repr(key))
            config = configs[index] if isinstance(index, int) and 0 <= index < len(configs) else None
        if config is not None:
            self.chosen[key] = config
        return config

    def _untuned_during_capture(self, key, named, args):  # unreached on the interpreter: CUDA graph capture
        """Nothing is benchmarked during capture: a config tuned for another class, else one that fits, whose
        kernel is compiled for these arguments (a compile during capture is an error), else the first that fits;
        said once per kernel."""
        self.autotuner.nargs = named
        try:
            fitting = self.autotuner.prune_configs({})
        finally:
            self.autotuner.nargs = None

        def compiled(config):
            meta = self.meta(config, named)
            full = (*args, *(meta[name] for name in self.names[len(args):]))
            return self._plain.compiled_for(full, config.num_warps, config.num_stages)

        candidates = [*dict.fromkeys(c for c in self.chosen.values() if _plain_options(c)), *fitting]
        config = next((c for c in candidates if compiled(c)), fitting[0])
        if not self._warned_capture:
            self._warned_capture = True
            warnings.warn(f"gems: {self.__name__} has no tuned config for shape class {key} while a CUDA graph is "
                          f"being captured; it runs {config} untuned (call it once before capturing to tune it)",
                          RuntimeWarning, stacklevel=3)
        return config

    def _memory_path(self, named) -> Path:  # unreached on the interpreter: one config per kernel
        inner = self._inner
        source = getattr(inner, "src", None) or inspect.getsource(getattr(inner, "fn", inner))
        device = next(v.device for v in named.values() if isinstance(v, torch.Tensor))
        identity = "\0".join([source, *map(str, self.autotuner.configs), _device_name(device), triton.__version__,
                              selection.current().name])
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        return _cache_dir() / "tuning" / f"{self.__name__}-{digest}.json"

    def _remember(self, key, config, named) -> None:  # unreached on the interpreter: one config per kernel
        """Keep the class's choice in the gems cache (merged with what other processes wrote)."""
        configs = self.autotuner.configs
        index = next((i for i, c in enumerate(configs) if c is config), None)
        if index is None or len(configs) == 1:
            return
        path = self._memory_path(named)
        memory = _read_memory(path)
        memory[repr(key)] = index
        self._memory = memory
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps(memory, indent=0, sort_keys=True))
            partial.replace(path)
        except OSError:  # a read-only cache: tune again in the next process
            pass


def _size_class(value):
    return next_power_of_2(value) if type(value) is int and value > 0 else value


def _capturing() -> bool:  # unreached on the interpreter: asked only before a class has a config
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def _cache_dir() -> Path:  # unreached on the interpreter: one config per kernel
    return Path(os.environ.get("GEMS_CACHE_DIR", Path.home() / ".cache" / "gems"))


def _device_name(device: torch.device) -> str:  # unreached on the interpreter: called only when a choice is remembered
    if device.type == "cuda":
        major, minor = torch.cuda.get_device_capability(device)
        return f"{torch.cuda.get_device_name(device)} sm{major}{minor}"
    return device.type


def _read_memory(path: Path) -> dict:  # unreached on the interpreter: called only when a choice is remembered
    try:
        memory = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return memory if isinstance(memory, dict) else {}


def _plain_options(config) -> bool:
    """Whether a Launcher can run the config (it passes num_warps and num_stages only)."""
    return config.num_ctas == 1 and config.maxnreg is None and config.pre_hook is None


def _check_restorable(kernel: str, name: str, t: torch.Tensor) -> None:
    if torch._debug_has_internal_overlap(t) == 1:  # 1: overlapping for sure (2: unknown, as copy_ treats it)
        raise RuntimeError(f"{kernel}: {name} is restored between tuning runs, but it is a view whose elements "
                           f"share memory (strides {t.stride()}), which copy_ refuses: more than one element of "
                           f"the written-to tensor refers to a single memory location")


def _tile_bytes(config, itemsize: int) -> int:  # unreached on the interpreter: one config per kernel
    meta = config.kwargs
    return config.num_stages * (meta["BLOCK_M"] + meta["BLOCK_N"]) * meta["BLOCK_K"] * itemsize


def fitting_configs(configs, named_args, **kwargs):  # unreached on the interpreter: one config, not pruned
    """The GEMM configs whose operand tiles, over all pipeline stages, fit the device's shared memory
    (the smallest one if none does): an fp32 or fp64 product needs twice or four times an fp16 one's,
    and compiling a config only to see it refused costs seconds each."""
    itemsize = named_args["a_ptr"].element_size()
    limit = shared_memory(named_args["a_ptr"].device)
    fits = [c for c in configs if _tile_bytes(c, itemsize) <= limit]
    return fits or [min(configs, key=lambda c: _tile_bytes(c, itemsize))]


@functools.cache
def shared_memory(device: torch.device) -> int:  # unreached on the interpreter: one config, not pruned
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
