"""Launching Triton kernels with little host work per call.

``kernel[grid](*args)`` re-binds arguments, re-derives Triton's specialization key and looks the
compiled kernel up on every call: about 7 us of the 15 us it takes on an H200 for a small tensor
(see shared notes, launch_overhead.md). :class:`Launcher` derives an equivalent key with one small
generated function, caches the compiled kernel under it, and calls its driver launcher directly.

The key must separate every argument set that Triton would compile differently: tensor dtype and
16-byte alignment of each pointer, and for integers the value 1, divisibility by 16 and the 32/64-bit
range. Launchers follow one convention so that the function computing the key and the launch
arguments can be generated from parameter names alone: a parameter named ``*_ptr`` is a tensor,
constexprs are annotated ``tl.constexpr``, anything else is a scalar; a scalar with a type annotation
that the kernel lists in ``do_not_specialize`` (``seed: tl.int64``) is compiled once for all its values.

Under the interpreter (and for autotuned or heuristic kernels) the plain Triton launch is used.

While the native layer records a call (``registration.recording`` is set, see gems/native/record.py), every launch
is reported to it, so that later calls of the same signature replay the launches from C++. In a dry run (a
size-generic plan's probe, gems/native/generic.py) a launch is only reported, never executed or compiled.
"""

from __future__ import annotations

import functools
import inspect

import torch
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction

from gems.runtime import registration

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1

# Set by gems.testing.proof while a conformance case records, else None: then it is given every
# launch (it counts it and runs it through ``Launcher._launch``). One test per launch when unset.
recorder = None
# Set by gems.testing.launch_memo around a conformance case under the interpreter, else None: then every
# plain launch goes through ``memo.launch(launcher, grid, args, options)``, which may serve a repeated
# launch from the bytes the first one wrote.
memo = None


# triton.cdiv and triton.next_power_of_2 are constexpr functions in triton 3.6: about 10 us per
# call from Python, too slow for a per-call path. These are the same arithmetic.
def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def packed(t: torch.Tensor | None) -> torch.Tensor | None:
    """``t`` as a kernel that indexes it by element position reads it: itself when contiguous (or None), else a
    contiguous copy. For the small operands whose kernels take no strides (norms' weights and biases, a loss's
    class weights, group offsets): a strided or expanded view read as contiguous gave wrong values."""
    return t if t is None or t.is_contiguous() else t.contiguous()


def next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _make_prepare_function(kernel: JITFunction):
    """Generate ``prepare(*args) -> (key, launch_args)`` for this kernel's parameter list.

    launch_args hand tensors to the C launcher as their data pointers: given a tensor it calls
    ``data_ptr()`` and asks the driver what the pointer is (cuPointerGetAttribute), per pointer and per
    call. The key already needs the pointer, and every caller has checked the device.
    """
    names, lines, key_parts, launch_parts = [], [], [], []
    for i, param in enumerate(kernel.params):
        name = f"a{i}"
        names.append(name)
        if param.is_constexpr:
            # tl.dtype hashes in Python (slow); its name is an equivalent key.
            key_parts.append(f"({name}.name if type({name}) is tl_dtype else {name})")
            launch_parts.append(name)
        elif param.name.endswith("_ptr"):
            lines.append(f"    p{i} = {name}.data_ptr()")
            key_parts.append(f"{name}.dtype, p{i} & 15 == 0")
            launch_parts.append(f"p{i}")
        elif getattr(param, "do_not_specialize", False) and getattr(param, "annotation_type", ""):
            # Triton compiles one kernel for every value (a Philox seed, offset): so does this key, and a
            # new value never compiles (not even during CUDA graph capture).
            launch_parts.append(name)
        else:  # an integer: 1, divisible by 16, 32-bit; inline, as a call would cost as much as the test
            key_parts.append(f"((1 if {name} == 1 else ({name} & 15 == 0, {_INT32_MIN} <= {name} <= {_INT32_MAX}))"
                             f" if type({name}) is int else type({name}))")
            launch_parts.append(name)
    tuple_of = lambda parts: f"({''.join(part + ', ' for part in parts)})"
    body = "\n".join(lines + [f"    return {tuple_of(key_parts)}, {tuple_of(launch_parts)}"])
    source = f"def prepare({', '.join(names)}):\n{body}\n"
    namespace = {"tl_dtype": tl.dtype}
    exec(source, namespace)
    return namespace["prepare"]


def _active_hook(hook):
    """triton 3.6 keeps launch hooks in a HookChain that exists even when empty."""
    return None if hook is None or getattr(hook, "calls", None) == [] else hook


# triton 3.6's CudaLauncher.__call__ takes (gridX, gridY, gridZ, stream, function, *args) and forwards
# them to its C launch as (grid, stream, function, cooperative, pdl, scratch, scratch, *args). triton 3.9's
# names more parameters and its C launch takes another layout: there (and in any unknown layout) the
# Python launcher is called, as Triton itself calls it.
_FORWARDING_CALL = ("self", "gridX", "gridY", "gridZ", "stream", "function", "args")


@functools.cache
def _forwards_to_c_launch(launcher_type) -> bool:
    try:
        return tuple(inspect.signature(launcher_type.__call__).parameters) == _FORWARDING_CALL
    except (TypeError, ValueError):
        return False


def _direct_launch(compiled) -> tuple:
    """(launch, leading arguments): ``launch(gx, gy, gz, stream, *leading, *kernel_args)`` starts the kernel.

    CompiledKernel.run is the driver's launcher object; when the kernel needs no scratch memory its
    Python __call__ only forwards to the C ``launch`` with fixed extra arguments (triton 3.6's
    CudaLauncher), so those are bound here once. Any other launcher is called as Triton calls it.
    """
    run = compiled.run
    c_launch = getattr(run, "launch", None)
    fixed = ("global_scratch_size", "profile_scratch_size", "launch_cooperative_grid", "launch_pdl")
    if (type(run).__name__ == "CudaLauncher" and c_launch is not None and all(hasattr(run, f) for f in fixed)
            and _forwards_to_c_launch(type(run)) and not run.global_scratch_size and not run.profile_scratch_size):
        return c_launch, (compiled.function, run.launch_cooperative_grid, run.launch_pdl, None, None,
                          compiled.packed_metadata, None, None, None)
    return run, (compiled.function, compiled.packed_metadata, None, None, None)


class Launcher:
    """``launcher(grid, *args, num_warps=, num_stages=)`` runs ``kernel[grid](*args, ...)``, cached."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.fast = isinstance(kernel, JITFunction) and not triton.knobs.runtime.interpret
        self._prepare = _make_prepare_function(kernel) if self.fast else None
        self._compiled = {}
        self._kernels = {}  # the same keys -> the CompiledKernel, for recording
        self._stream = self._device = None

    def __call__(self, grid, *args, num_warps=None, num_stages=None):
        """grid: up to three program counts, or, for an autotuned kernel, a function of the config it picks
        (``lambda meta: ...``), which Triton's launch evaluates."""
        if callable(grid):
            grid_x, grid_y, grid_z = grid, None, None
        else:
            grid_x, grid_y, grid_z = grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1
        if registration.recording is not None and registration.recording.dry:
            return self._report_dry(grid_x, grid_y, grid_z, num_warps, num_stages, args)
        if recorder is not None:
            return recorder.launch(self, grid_x, grid_y, grid_z, num_warps, num_stages, args)
        self._launch(grid_x, grid_y, grid_z, num_warps, num_stages, args)

    def flat(self, grid_x, num_warps, *args):
        """``launcher((grid_x,), *args, num_warps=num_warps)`` with no grid or keyword handling (pointwise)."""
        if registration.recording is not None and registration.recording.dry:
            return self._report_dry(grid_x, 1, 1, num_warps, None, args)
        if recorder is not None:
            return recorder.launch(self, grid_x, 1, 1, num_warps, None, args)
        self._launch(grid_x, 1, 1, num_warps, None, args)

    def compiled_for(self, args, num_warps, num_stages) -> bool:
        """Whether a launch with these arguments needs no compile (always, where kernels are not compiled)."""
        return not self.fast or (self._prepare(*args)[0], num_warps, num_stages) in self._compiled

    def adopt(self, args, num_warps, num_stages) -> None:
        """Take into this launcher's table the kernel that another launch of the same JITFunction compiled
        for these arguments (an autotuner's benchmark): Triton's cache answers, nothing compiles, nothing
        runs. A CUDA graph capture can then launch it (a compile during capture is an error)."""
        if not self.fast or _capturing():
            return
        key = (self._prepare(*args)[0], num_warps, num_stages)
        if key in self._compiled:
            return
        compiled = self.kernel.warmup(*args, grid=(1,), num_warps=num_warps, num_stages=num_stages)
        self._remember_compiled(key, compiled)

    def _report_dry(self, grid_x, grid_y, grid_z, num_warps, num_stages, args):
        rec = registration.recording
        if callable(grid_x):  # an autotuner would benchmark: never in a dry run
            rec.stop(f"{getattr(self.kernel, '__name__', self.kernel)} is autotuned")
        rec.launched(self, None, (grid_x, grid_y, grid_z), {"num_warps": num_warps, "num_stages": num_stages}, args)

    def _launch(self, grid_x, grid_y, grid_z, num_warps, num_stages, args):
        if registration.recording is not None:
            if not callable(grid_x):
                self._launch_recorded(registration.recording, (grid_x, grid_y, grid_z), num_warps, num_stages, args)
                return
            # The config (and so the grid) an autotuned kernel runs with is chosen at each launch: no plan.
            registration.recording.refused = f"{getattr(self.kernel, '__name__', self.kernel)} is autotuned"
        if self.fast:
            key, launch_args = self._prepare(*args)
            compiled = self._compiled.get((key, num_warps, num_stages))
            if compiled is not None:
                launch, head, hooks = compiled
                stream = self._stream(self._device())
                if hooks is None:
                    launch(grid_x, grid_y, grid_z, stream, *head, *launch_args)
                else:  # a profiler's launch hooks are installed: give them what Triton would
                    kernel, enter, leave = hooks
                    kernel.run(grid_x, grid_y, grid_z, stream, kernel.function, kernel.packed_metadata,
                               kernel.launch_metadata((grid_x, grid_y, grid_z), stream, *args), enter, leave,
                               *args)
                return
        # First launch of a specialization (it compiles), any launch under the interpreter, an autotuned kernel.
        grid = grid_x if callable(grid_x) else (grid_x, grid_y, grid_z)
        options = {name: value for name, value in (("num_warps", num_warps), ("num_stages", num_stages))
                   if value is not None}
        if self.fast:
            self._compile_and_launch((key, num_warps, num_stages), grid, args, options)
        else:
            self._launch_plain(grid, args, options)

    def _launch_recorded(self, rec, grid, num_warps, num_stages, args):
        """Launch as usual (the recorder's dispatch mode paused), then report the launch."""
        options = {"num_warps": num_warps, "num_stages": num_stages}
        registration.recording = None
        try:
            with rec.paused():
                if self.fast:
                    key = (self._prepare(*args)[0], num_warps, num_stages)
                    self._launch(*grid, num_warps, num_stages, args)
                    compiled, hooks = self._kernels[key], self._compiled[key][2] is not None
                else:
                    compiled, hooks = self._launch_plain(grid, args, _given(options)), False
        finally:
            registration.recording = rec
        rec.launched(self, compiled, grid, options, args, hooks)

    def _compile_and_launch(self, key, grid, args, options):
        if _capturing():
            raise RuntimeError(
                f"gems: a Triton kernel ({getattr(self.kernel, '__name__', self.kernel)}) would be compiled during "
                "CUDA graph capture: this is the first call of this operator with these dtypes, shapes or scalar "
                "values; make the same call once before capturing")
        self._remember_compiled(key, self.kernel[grid](*args, **options))

    def _remember_compiled(self, key, compiled):
        self._kernels[key] = compiled
        runtime = triton.knobs.runtime
        enter, leave = _active_hook(runtime.launch_enter_hook), _active_hook(runtime.launch_exit_hook)
        # Hooks present when the kernel is first launched are kept for its later launches.
        hooks = None if enter is None and leave is None else (compiled, enter, leave)
        self._compiled[key] = (*_direct_launch(compiled), hooks)
        driver = triton.runtime.driver.active
        self._stream, self._device = driver.get_current_stream, driver.get_current_device
        if self._device is torch.cuda.current_device:
            # The same answer without its lazy-initialization check: CUDA is up once a kernel has compiled.
            self._device = torch._C._cuda_getDevice

    def _launch_plain(self, grid, args, options):
        """Triton's own launch; returns what it returns (the CompiledKernel on a GPU)."""
        if memo is not None:
            return memo.launch(self, grid, args, options)
        return self._run_plain(grid, args, options)

    def _run_plain(self, grid, args, options):
        if registration.kernels_call_torch:
            with registration.aten_only():
                return self.kernel[grid](*args, **options)
        return self.kernel[grid](*args, **options)


def _given(options: dict) -> dict:
    return {name: value for name, value in options.items() if value is not None}


def _capturing() -> bool:
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()
