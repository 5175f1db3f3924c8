"""Launching Triton kernels with little host work per call.

``kernel[grid](*args)`` re-binds arguments, re-derives Triton's specialization key and looks the
compiled kernel up on every call: about 7 us of the 15 us it takes on an H200 for a small tensor
(see shared notes, launch_overhead.md). :class:`Launcher` derives an equivalent key with one small
generated function, caches the compiled kernel under it, and calls its driver launcher directly.

The key must separate every argument set that Triton would compile differently: tensor dtype and
16-byte alignment of each pointer, and for integers the value 1, divisibility by 16 and the 32/64-bit
range. Launchers follow one convention so that the key function can be generated from parameter
names alone: a parameter named ``*_ptr`` is a tensor, constexprs are annotated ``tl.constexpr``,
anything else is a scalar.

Under the interpreter (and for autotuned or heuristic kernels) the plain Triton launch is used.
"""

from __future__ import annotations

import triton
from triton.runtime.jit import JITFunction

from gems.runtime import registration

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def scalar_key(value):
    """What Triton specializes a scalar argument on (see the module docstring)."""
    if type(value) is int:
        if value == 1:
            return 1
        return (value & 15 == 0, _INT32_MIN <= value <= _INT32_MAX)
    return type(value)


def _make_key_function(kernel: JITFunction):
    """Generate ``key(*args)`` for this kernel's parameter list."""
    names, parts = [], []
    for i, param in enumerate(kernel.params):
        name = f"a{i}"
        names.append(name)
        if param.is_constexpr:
            parts.append(name)
        elif param.name.endswith("_ptr"):
            parts.append(f"{name}.dtype, {name}.data_ptr() & 15 == 0")
        else:
            parts.append(f"scalar_key({name})")
    source = f"def key({', '.join(names)}):\n    return ({', '.join(parts)},)\n"
    namespace = {"scalar_key": scalar_key}
    exec(source, namespace)
    return namespace["key"]


class Launcher:
    """``launcher(grid, *args, **options)`` runs ``kernel[grid](*args, **options)``, cached."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.fast = isinstance(kernel, JITFunction) and not triton.knobs.runtime.interpret
        self._key_of = _make_key_function(kernel) if self.fast else None
        self._compiled = {}
        self._stream = None

    def __call__(self, grid, *args, **options):
        if not self.fast:
            return self._launch_plain(grid, args, options)
        key = self._key_of(*args)
        if options:
            key = (key, tuple(options.items()))
        compiled = self._compiled.get(key)
        if compiled is None:
            return self._compile_and_launch(key, grid, args, options)
        run, function, metadata = compiled
        run(grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1,
            self._stream(self._device()), function, metadata, None, None, None, *args)

    def _compile_and_launch(self, key, grid, args, options):
        compiled = self.kernel[grid](*args, **options)
        if triton.knobs.runtime.launch_enter_hook is None and triton.knobs.runtime.launch_exit_hook is None:
            # Launch hooks (profilers) need Triton's own path; without them we may go direct.
            self._compiled[key] = (compiled.run, compiled.function, compiled.packed_metadata)
            driver = triton.runtime.driver.active
            self._stream, self._device = driver.get_current_stream, driver.get_current_device

    def _launch_plain(self, grid, args, options):
        if registration.kernels_call_torch:
            with registration.aten_only():
                self.kernel[grid](*args, **options)
        else:
            self.kernel[grid](*args, **options)
