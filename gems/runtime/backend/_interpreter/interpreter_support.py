"""What Triton's CPU interpreter lacks, supplied in one place so that kernels need no special cases.

- bf16 casts: the interpreter holds bf16 as uint16 and truncates on the way in; casts to and from
  bf16 here round to nearest even through fp32 bits, bit-exact with torch.
- bf16 ``tl.dot``: the interpreter multiplies the uint16 bit patterns; here bf16 operands are widened
  to fp32 first (exact: a product of two bf16 values fits in fp32), then multiplied in fp32 as the
  GPU's bf16 tensor cores do.
- libdevice: ``triton.language.extra.libdevice`` has no interpreter implementation; its functions
  are replaced by torch's CPU functions on the interpreter's numpy arrays.
- Speed: running max/min scans and product reductions with triton's own combines run as one numpy
  call instead of a Python call per element.

And where numpy's semantics differ from the GPU's and a kernel could come to depend on them, the
GPU's (docs/interpreter.md lists what is still not reproduced):

- ``tl.minimum`` / ``tl.maximum`` (and ``tl.min`` / ``tl.max``, ``tl.clamp``) without
  ``propagate_nan=tl.PropagateNan.ALL`` return the operand that is not NaN, like the hardware's
  min/max (numpy propagated NaN).
- ``tl.fma`` of fp32 and fp64 values rounds (nearly) once, as the GPU's ``fma.rn`` does (the interpreter
  rounded the product before adding it).
- fp32 ``/`` and ``tl.sqrt`` are approximations on the GPU (``div.full.f32``, ``sqrt.approx.f32``):
  here they go through a rounded reciprocal (``x * (1/y)``, ``x * rsqrt(x)``), within 1 and 2 ulp
  but not correctly rounded, so a kernel that needs IEEE results must use ``tl.div_rn`` /
  ``tl.sqrt_rn`` here as there.
- Integer division by zero is unspecified on the GPU (PTX): the quotient is all ones and the
  remainder the dividend here, never numpy's 0. Shifts by a negative amount or by the bit width or
  more are LLVM poison: the amount is taken modulo the width here (as x86 does), never numpy's 0.
- float -> integer conversions saturate to the integer range and take NaN to 0 (PTX ``cvt.rzi``),
  where numpy gave the "integer indefinite" value of x86.
- A Python float argument is an fp32 runtime scalar, as the GPU's launcher passes it; the interpreter
  kept the Python float as a constant, in double precision and with -0.0 folded to +0.0.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np
import torch
import triton.language as tl
from triton.language.extra import libdevice
from triton.runtime import interpreter as _interp

_QUIET_NAN_BF16 = 0x7FC0


def _bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _f32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32)
    rounded = ((bits + ((bits >> 16) & 1) + 0x7FFF) >> 16).astype(np.uint16)
    rounded[np.isnan(values)] = _QUIET_NAN_BF16
    return rounded


def _cast(builder, src, dst_type):
    src_ty, dst_ty = src.dtype.scalar, dst_type.scalar
    if src_ty.is_floating() and dst_ty.is_int() and not dst_ty.is_bool():
        data = _bf16_bits_to_f32(src.data) if src_ty == tl.bfloat16 else src.data
        return _interp.TensorHandle(_saturating_to_int(data, _interp._get_np_dtype(dst_ty)), dst_ty)
    if src_ty != tl.bfloat16 and dst_ty != tl.bfloat16:
        return _original_cast(builder, src, dst_type)
    data = _bf16_bits_to_f32(src.data) if src_ty == tl.bfloat16 else src.data
    if dst_ty == tl.bfloat16:
        with np.errstate(over="ignore", invalid="ignore"):
            out = _f32_to_bf16_bits(data.astype(np.float32))
    else:
        out = data.astype(_interp._get_np_dtype(dst_ty))
    return _interp.TensorHandle(out, dst_ty)


def _dot(builder, a, b, d, input_precision, max_num_imprecise_acc):
    if a.dtype.scalar == tl.bfloat16 or b.dtype.scalar == tl.bfloat16:
        a = _interp.TensorHandle(_bf16_bits_to_f32(a.data), tl.float32) if a.dtype.scalar == tl.bfloat16 else a
        b = _interp.TensorHandle(_bf16_bits_to_f32(b.data), tl.float32) if b.dtype.scalar == tl.bfloat16 else b
    return _original_dot(builder, a, b, d, input_precision, max_num_imprecise_acc)


def _fp_to_fp(builder, src, dst_type, rounding_mode):
    return _cast(builder, src, dst_type)


_original_cast = _interp.InterpreterBuilder.cast_impl
_original_dot = _interp.InterpreterBuilder.create_dot


def _saturating_to_int(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Truncate toward zero, clamp to the range of ``dtype``, NaN -> 0 (PTX cvt.rzi.<int>.<float>)."""
    info = np.iinfo(dtype)
    too_big = values >= float(info.max) + 1  # 2^(bits-1) or 2^bits: exact in every float type
    too_small = values < float(info.min)
    with np.errstate(invalid="ignore"):
        out = np.where(too_big | too_small | np.isnan(values), 0, values).astype(dtype)
    out[too_big] = info.max
    out[too_small] = info.min
    return out


# --------------------------------------------------------------------------- GPU arithmetic


def _float_argument(arg):
    if type(arg) is float:
        return tl.tensor(_interp.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
    return _original_implicit_cvt(arg)


_original_implicit_cvt = _interp._implicit_cvt


def _binary(builder, lhs, rhs, data):
    return builder.binary_op(lhs, rhs, lambda a, b: data)


def _minnumf(builder, lhs, rhs):
    return builder.binary_op(lhs, rhs, np.fmin)


def _maxnumf(builder, lhs, rhs):
    return builder.binary_op(lhs, rhs, np.fmax)


def _clampf(builder, x, lo, hi, propagate_nan):
    if propagate_nan == tl.PropagateNan.ALL:
        return builder.ternary_op(x, lo, hi, lambda a, b, c: np.minimum(np.maximum(a, b), c))
    return builder.ternary_op(x, lo, hi, lambda a, b, c: np.fmin(np.fmax(a, b), c))


def _scaled_reciprocal(y: np.ndarray) -> np.ndarray:
    """(1 / m rounded to fp32, 2^-e) for y = m 2^e: a reciprocal over the whole range, as div.full.f32 scales."""
    mantissa, exponent = np.frexp(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.float32(1) / mantissa).astype(np.float64), np.ldexp(1.0, -exponent)


def _fdiv(builder, lhs, rhs):
    if lhs.data.dtype != np.float32:
        return builder.binary_op(lhs, rhs, np.divide)
    x, y = np.broadcast_arrays(lhs.data, rhs.data)
    reciprocal, scale = _scaled_reciprocal(y)
    with np.errstate(all="ignore"):
        quotient = (x.astype(np.float64) * reciprocal * scale).astype(np.float32)
    return _binary(builder, lhs, rhs, quotient)


def _sqrt(builder, arg):
    x = arg.data
    if x.dtype != np.float32:
        return builder.unary_op(arg, np.sqrt)
    with np.errstate(all="ignore"):
        rsqrt = (1.0 / np.sqrt(x.astype(np.float64))).astype(np.float32)  # the approximate reciprocal root
        root = (x.astype(np.float64) * rsqrt).astype(np.float32)
    exact = (x == 0) | np.isinf(x)  # where x * rsqrt(x) is 0 * inf or inf * 0
    return builder.unary_op(arg, lambda data: np.where(exact, np.sqrt(x), root).astype(np.float32))


# The wider type an fma is computed in, then rounded from: fp32 products are exact in fp64; fp64 ones are
# computed to 64 bits in long double (x86's 80-bit format), whose exponent range keeps fp64 subnormals.
_FMA_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble}


def _fma(builder, x, y, z):
    wider = _FMA_WIDER.get(z.data.dtype)
    if wider is None:
        return builder.ternary_op(x, y, z, lambda a, b, c: a * b + c)
    # Rounded once more than the GPU rounds (to the wider type first): off by an ulp only where that first
    # rounding lands exactly half-way between two results.
    return builder.ternary_op(x, y, z, lambda a, b, c: (a.astype(wider) * b + c).astype(c.dtype))


def _idiv(builder, lhs, rhs):
    x, y = np.broadcast_arrays(lhs.data, rhs.data)
    safe = np.where(y == 0, 1, y)
    with np.errstate(all="ignore"):
        quotient = (x - np.fmod(x, safe)) // safe  # C's truncating division
    all_ones = np.array(-1).astype(x.dtype)  # -1, or the largest unsigned value
    return _binary(builder, lhs, rhs, np.where(y == 0, all_ones, quotient).astype(x.dtype))


def _irem(builder, lhs, rhs):
    x, y = np.broadcast_arrays(lhs.data, rhs.data)
    with np.errstate(all="ignore"):
        remainder = np.fmod(x, np.where(y == 0, 1, y))
    return _binary(builder, lhs, rhs, np.where(y == 0, x, remainder).astype(x.dtype))


def _shift(np_shift, signed):
    """A shift whose amount is taken modulo the bit width (what x86 does with LLVM's poison)."""

    def shift(builder, lhs, rhs):
        width = lhs.data.dtype.itemsize * 8
        x = lhs.data.view(np.dtype(f"{'int' if signed else 'uint'}{width}"))
        amount = np.mod(rhs.data.astype(np.int64), width).astype(x.dtype)
        return _binary(builder, lhs, rhs, np_shift(x, amount).view(lhs.data.dtype))

    return shift


def _round_half_away(x):
    return torch.where((x - x.trunc()).abs() >= 0.5, x.trunc() + x.sign(), x.trunc())


def _libm_double(np_fn):
    """np_fn (libm) in float64, the result rounded to the kernel's dtype: torch's vectorized sinh and cosh
    overflow to inf early (fp32 from |x| = 89, fp64 from 710), where libdevice's stay finite up to the
    function's own overflow; and sin(pi x), cos(pi x) for sinpi and cospi, whose product pi x must not be
    rounded to fp32 first."""
    return lambda x: torch.from_numpy(np_fn(x.double().numpy()))


def _fmod(x, y):
    """libdevice's fmod, exact as C's is, for fp32 (and fp16/bf16, computed in fp32): torch's CPU fmod divides
    first, so a quotient past fp32's range (1e30 fmod 2^-62) gives NaN. fp64 keeps torch's: this device's ATen
    kernel, which the float64 oracle and the parity check on this device are (both NaN past 2^1024)."""
    if x.dtype == torch.float64 or y.dtype == torch.float64:
        return torch.fmod(x, y)
    return torch.from_numpy(np.fmod(x.numpy(), y.numpy()))


# libdevice name -> torch function over CPU tensors (same precision as the kernel's values).
_LIBDEVICE = {
    "tanh": torch.tanh, "erf": torch.erf, "erfc": torch.erfc, "erfinv": torch.erfinv,
    "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log, "log2": torch.log2,
    "fast_logf": torch.log, "log10": torch.log10, "log1p": torch.log1p, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "sinpi": _libm_double(lambda x: np.sin(np.pi * x)),
    "cospi": _libm_double(lambda x: np.cos(np.pi * x)), "asin": torch.asin, "acos": torch.acos,
    "atan": torch.atan, "sinh": _libm_double(np.sinh), "cosh": _libm_double(np.cosh), "asinh": torch.asinh,
    "acosh": torch.acosh, "atanh": torch.atanh, "atan2": torch.atan2, "pow": torch.pow,
    "floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc, "rint": torch.round,
    "nearbyint": torch.round, "round": _round_half_away, "fmod": _fmod, "hypot": torch.hypot,
    "copysign": torch.copysign, "fmin": torch.fmin, "fmax": torch.fmax, "lgamma": torch.lgamma,
    "isinf": torch.isinf, "isnan": torch.isnan, "signbit": torch.signbit,
    "cbrt": lambda x: x.sign() * x.abs() ** (1 / 3),
    "div_rn": torch.div, "fast_dividef": torch.div, "fma": lambda a, b, c: a * b + c,
}


def _as_array(value, like_dtype):
    if isinstance(value, tl.core.tensor):
        data = value.handle.data
        if value.dtype.scalar == tl.bfloat16:
            data = _bf16_bits_to_f32(data)
        return np.array(data)  # a writable copy torch can wrap
    return np.array(value, dtype=like_dtype)


def _interpreted(name, torch_fn):
    def call(*args, _semantic=None, **kwargs):
        args = [a.value if isinstance(a, tl.constexpr) else a for a in args]
        ref = next(a for a in args if isinstance(a, tl.core.tensor))
        result_ty = ref.dtype.scalar
        if result_ty.is_int() and name not in ("isinf", "isnan", "signbit"):
            floats = [a.dtype.scalar for a in args if isinstance(a, tl.core.tensor) and a.dtype.is_floating()]
            result_ty = floats[0] if floats else result_ty
        arrays = [_as_array(a, np.float32) for a in args]
        out = torch_fn(*[torch.from_numpy(a) for a in arrays]).numpy()
        if name in ("isinf", "isnan", "signbit"):
            result_ty = tl.int1
            out = out.astype(bool)
        elif result_ty == tl.bfloat16:
            out = _f32_to_bf16_bits(out)
        else:
            out = out.astype(_interp._get_np_dtype(result_ty))
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        out = np.broadcast_to(out, shape).copy()
        block_ty = tl.core.block_type(result_ty, list(shape)) if shape else result_ty
        return tl.core.tensor(_interp.TensorHandle(out, result_ty), block_ty)

    call.__name__ = name
    return call


def _interpret_standard_library() -> None:
    """If triton was imported before the interpreter was switched on, its @jit standard library
    (tl.sum, tl.cdiv, tl.rand, tensor.sum...) was built for compilation; rebuild it interpreted."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    for module in (tl.standard, tl.random, tl.math):
        for name, value in vars(module).copy().items():
            if not isinstance(value, JITFunction):
                continue
            interpreted = InterpretedFunction(value.fn)
            for owner in (module, tl.standard, tl):
                if getattr(owner, name, None) is value:
                    setattr(owner, name, interpreted)
            # Tensor methods (x.sum()): a plain function, so that the tensor binds as the first argument.
            if getattr(tl.core.tensor, name, None) is value:
                setattr(tl.core.tensor, name, lambda *args, _fn=interpreted, **kwargs: _fn(*args, **kwargs))


_original_scan, _original_reduce = _interp.ScanOps.apply_impl, _interp.ReduceOps.apply_impl


def _builtin_scans_and_reductions() -> None:
    """Running max/min (associative_scan with triton's own max/min combine) and products (tl.reduce with
    its product combine) as one numpy call, where the interpreter ran a Python combine per element (it has
    numpy for scan sum/product and reduce sum/max/min only). max/min ignore NaN, as the hardware's do (see
    tl.maximum above); bf16 (held as raw bits here) keeps the interpreter's own path."""
    def scan(self, input):
        ufunc = (np.fmax if self.combine_fn == tl.standard._elementwise_max
                 else np.fmin if self.combine_fn == tl.standard._elementwise_min else None)
        if ufunc is None or len(input) != 1 or input[0].dtype.scalar == tl.bfloat16:
            return _original_scan(self, input)
        data = input[0].handle.data
        if self.reverse:
            data = np.flip(data, axis=self.axis)
        out = ufunc.accumulate(data, axis=self.axis)
        if self.reverse:
            out = np.flip(out, axis=self.axis)
        return [self.to_tensor(out, input[0].dtype)]

    def reduce(self, input):
        if self.combine_fn != tl.standard._prod_combine or len(input) != 1 or input[0].dtype.scalar == tl.bfloat16:
            return _original_reduce(self, input)
        data = input[0].handle.data
        out = np.prod(data, axis=self.axis, keepdims=self.keep_dims, dtype=data.dtype)  # integers wrap
        return [self.to_tensor(out, input[0].dtype)]

    _interp.ScanOps.apply_impl, _interp.ReduceOps.apply_impl = scan, reduce


# --------------------------------------------------------------------------- interpreter speed
# Pieces of the interpreter's own bookkeeping that change nothing a kernel computes. The first three, measured
# with cProfile over 2,023 quick conformance cases (triton 3.6): together about half of the kernel time.


def _skip_discarded_overflow_checks() -> None:
    """Every integer +, -, * of a kernel also computes an int64 overflow check (``sanitize_overflow``)
    and hands it to ``device_assert``, which drops it unless ``debug`` is on (it is off): the check is
    computed for nothing (a quarter of the interpreter's time). Kept whenever debug is turned on."""
    builder = _interp.interpreter_builder
    if not builder.options.debug and builder.options.sanitize_overflow:
        builder.options = dataclasses.replace(builder.options, sanitize_overflow=False)


def _lazy_tuple_type_names() -> None:
    """Every tensor the interpreter makes holds its shape as a ``tl.tuple``, whose type formats its name (each
    element type's text) at once, though only messages read it. Here the name is formatted when first read, as
    newer triton versions do themselves: the quick conformance cases of ten reduction, indexing and norm
    operators (2,582 cases, triton 3.6, one process) took 41.0 s instead of 45.1 s."""
    cls = tl.core.tuple_type
    if isinstance(inspect.getattr_static(cls, "name", None), functools.cached_property):
        return  # already lazy
    if list(inspect.signature(cls.__init__).parameters) != ["self", "types", "fields"]:
        return  # a version this was not written for: left as it is

    def __init__(self, types, fields=None):
        self.types = types
        self.fields = fields or [""] * len(types)

    def name(self):
        return "[" + ",".join(f"{k}:{v}" for k, v in zip(self.fields, self.types)) + "]"

    lazy = functools.cached_property(name)
    lazy.__set_name__(cls, "name")
    cls.__init__, cls.name = __init__, lazy


# Every tensor operation of an interpreted kernel makes its result's block type (``get_block_ty``,
# ``with_element_ty``), and every load, splat and cast looks up its numpy dtype in a table it builds on
# each call: a quarter of the interpreter's time in a profile of 4,858 quick conformance cases of 38
# operators (triton 3.6). Both are pure functions of a few names and ints, so each value is made once.
# A type is never changed after it is made (Triton makes a new one for a new shape or element type).
_block_types: dict = {}
_np_dtypes: dict = {}


def _type_key(ty):
    """A hashable key that tells the scalar or pointer type apart as its ``__eq__`` does, or None."""
    if type(ty) is tl.dtype:
        return ty.name
    if type(ty) is tl.pointer_type and type(ty.element_ty) is tl.dtype:
        return ty.name, ty.address_space  # the name tells const pointers apart
    return None


def _block_type(element_ty, shape):
    shape_key = tuple(getattr(s, "value", s) for s in shape)
    key = _type_key(element_ty)
    if key is None or not all(type(s) is int for s in shape_key):
        return tl.block_type(element_ty, shape)
    key = key, shape_key
    found = _block_types.get(key)
    if found is None:
        found = _block_types[key] = tl.block_type(element_ty, shape)
    return found


def _np_dtype(tt_dtype):
    scalar = tt_dtype.element_ty if isinstance(tt_dtype, tl.block_type) else tt_dtype
    if type(scalar) is not tl.dtype:  # pointers and anything else: as Triton does it
        return _original_np_dtype(tt_dtype)
    found = _np_dtypes.get(scalar.name)
    if found is None:
        found = _np_dtypes[scalar.name] = _original_np_dtype(scalar)
    return found


def _memoized_types() -> None:
    _interp.InterpreterBuilder.get_block_ty = lambda self, dtype, shape: _block_type(dtype, shape)
    tl.block_type.with_element_ty = lambda self, scalar_ty: _block_type(scalar_ty, self.shape)
    _interp._get_np_dtype = _np_dtype


_original_np_dtype = _interp._get_np_dtype


# Per running grid: the language modules (by id) its launch patched, None until it has patched them.
_grid_languages: list = []


@functools.cache
def _languages(fn) -> frozenset:
    return frozenset(id(v) for v in fn.__globals__.values() if v is tl or v is tl.core)


def _patch_lang(fn):
    """Every call of a ``@triton.jit`` helper inside a kernel re-patches triton.language (inspect.getmembers
    over the modules, per program and per call: a fifth of the interpreter's time). While a launch runs,
    the modules it patched stay patched, so a helper that sees no other language module has nothing to add.
    Anything else is patched as Triton patches it."""
    if _grid_languages and _grid_languages[-1] is not None and _languages(fn) <= _grid_languages[-1]:
        return _interp._LangPatchScope()  # nothing to patch, nothing to restore
    scope = _original_patch_lang(fn)
    if _grid_languages and _grid_languages[-1] is None:  # the launch's own patching
        _grid_languages[-1] = _languages(fn)
    return scope


# Each launch patches triton.language afresh, and finding the builtins to patch (inspect.getmembers over
# the modules, about 10 ms) is most of a small launch's cost. The builtins of a module are the same at
# every launch (a launch restores what it patched), so they are listed once, at the first launch.
_builtins: dict = {}


def _patch_builtin(pkg, builder, scope):
    members = _builtins.get(pkg)
    if members is None:
        members = _builtins[pkg] = [(n, m) for n, m in inspect.getmembers(pkg) if tl.core.is_builtin(m)]
    for name, member in members:
        _interp._patch_attr(pkg, name, member, builder, scope)


def _grid_call(self, *args, **kwargs):
    _grid_languages.append(None)
    try:
        return _original_grid_call(self, *args, **kwargs)
    finally:
        _grid_languages.pop()


_original_patch_lang = _interp._patch_lang
_original_grid_call = _interp.GridExecutor.__call__


def install() -> None:
    """Patch the interpreter; idempotent."""
    _interpret_standard_library()
    _builtin_scans_and_reductions()
    _skip_discarded_overflow_checks()
    _lazy_tuple_type_names()
    _memoized_types()
    _interp._patch_lang = _patch_lang
    _interp._patch_builtin = _patch_builtin
    _interp.GridExecutor.__call__ = _grid_call
    _interp.InterpreterBuilder.cast_impl = _cast
    _interp._implicit_cvt = _float_argument
    builder = _interp.InterpreterBuilder
    builder.create_minnumf, builder.create_maxnumf, builder.create_clampf = _minnumf, _maxnumf, _clampf
    builder.create_fdiv, builder.create_sqrt, builder.create_fma = _fdiv, _sqrt, _fma
    builder.create_sdiv = builder.create_udiv = _idiv
    builder.create_srem = builder.create_urem = _irem
    builder.create_shl = _shift(np.left_shift, signed=False)
    builder.create_lshr = _shift(np.right_shift, signed=False)
    builder.create_ashr = _shift(np.right_shift, signed=True)
    _interp.InterpreterBuilder.create_fp_to_fp = _fp_to_fp
    _interp.InterpreterBuilder.create_dot = _dot
    for cast_name in ("create_si_to_fp", "create_ui_to_fp", "create_fp_to_si", "create_fp_to_ui",
                      "create_fp_ext", "create_fp_trunc"):
        setattr(_interp.InterpreterBuilder, cast_name, lambda self, src, dst_type: _cast(self, src, dst_type))
    for name, torch_fn in _LIBDEVICE.items():
        setattr(libdevice, name, _interpreted(name, torch_fn))
