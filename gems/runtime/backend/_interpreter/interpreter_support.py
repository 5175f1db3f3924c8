"""What Triton's CPU interpreter lacks, supplied in one place so that kernels need no special cases.

- bf16 casts: the interpreter holds bf16 as uint16 and truncates on the way in; casts to and from
  bf16 here round to nearest even through fp32 bits, bit-exact with torch.
- bf16 ``tl.dot``: the interpreter multiplies the uint16 bit patterns; here bf16 operands are widened
  to fp32 first (exact: a product of two bf16 values fits in fp32), then multiplied in fp32 as the
  GPU's bf16 tensor cores do.
- libdevice: ``triton.language.extra.libdevice`` has no interpreter implementation; its functions
  are replaced by torch's CPU functions on the interpreter's numpy arrays.
"""

from __future__ import annotations

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


def _round_half_away(x):
    return torch.where((x - x.trunc()).abs() >= 0.5, x.trunc() + x.sign(), x.trunc())


# libdevice name -> torch function over CPU tensors (same precision as the kernel's values).
_LIBDEVICE = {
    "tanh": torch.tanh, "erf": torch.erf, "erfc": torch.erfc, "erfinv": torch.erfinv,
    "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log, "log2": torch.log2,
    "log10": torch.log10, "log1p": torch.log1p, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "asin": torch.asin, "acos": torch.acos,
    "atan": torch.atan, "sinh": torch.sinh, "cosh": torch.cosh, "asinh": torch.asinh,
    "acosh": torch.acosh, "atanh": torch.atanh, "atan2": torch.atan2, "pow": torch.pow,
    "floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc, "rint": torch.round,
    "nearbyint": torch.round, "round": _round_half_away, "fmod": torch.fmod, "hypot": torch.hypot,
    "copysign": torch.copysign, "fmin": torch.fmin, "fmax": torch.fmax, "lgamma": torch.lgamma,
    "isinf": torch.isinf, "isnan": torch.isnan, "signbit": torch.signbit,
    "cbrt": lambda x: x.sign() * x.abs() ** (1 / 3),
    "div_rn": torch.div, "fma": lambda a, b, c: a * b + c,
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


def install() -> None:
    """Patch the interpreter; idempotent."""
    _interpret_standard_library()
    _interp.InterpreterBuilder.cast_impl = _cast
    _interp.InterpreterBuilder.create_fp_to_fp = _fp_to_fp
    _interp.InterpreterBuilder.create_dot = _dot
    for cast_name in ("create_si_to_fp", "create_ui_to_fp", "create_fp_to_si", "create_fp_to_ui",
                      "create_fp_ext", "create_fp_trunc"):
        setattr(_interp.InterpreterBuilder, cast_name, lambda self, src, dst_type: _cast(self, src, dst_type))
    for name, torch_fn in _LIBDEVICE.items():
        setattr(libdevice, name, _interpreted(name, torch_fn))
