"""Comparing a gems result with the float64 oracle, and with ATen on the same device.

A floating result passes by the tolerance rule (|gems - oracle| <= atol + rtol * |oracle| with NaN and
infinities in the same places), or by the ATen-parity rule (no element further from the oracle than
ATen's own result on the same device, same non-finite pattern). Integer and bool results must be exact.
Under either rule, where ATen's result, gems' and the exact one are zeros, their signs must agree: the
oracle, cast from float64, cannot tell ``abs(-0.0)`` from ``-0.0``, ATen on the same device can (where the
exact value is a nonzero too small for the dtype, the zero's sign is the rounding's, judged as a value). An
output whose shape ATen gives differently on the device and on the CPU (native_batch_norm's eval-mode
statistics: (C,) on CUDA, empty on the CPU) is judged against ATen's result on the device.

Input gradients are judged norm-wise: atol grows to rtol times the largest gradient magnitude. A
backward that subtracts nearly equal terms (softmax's dy - sum(dy y)) turns the last-bit rounding of
its low-precision forward output into elementwise relative errors no kernel avoids: ATen's own bf16
softmax gradient misses the elementwise rule for 176 of 200 random 13x17 inputs on the CPU, while its
error stays below 0.008 of the largest gradient value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from gems.yaml_file import read_mapping

# Per-dtype defaults. atol for reductions and matmuls grows with sqrt(reduction length).
RTOL = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2, torch.float32: 1.3e-6, torch.float64: 1e-7}
ATOL = {torch.float16: 1e-5, torch.bfloat16: 1e-5, torch.float32: 1e-5, torch.float64: 1e-7}
_MANTISSA_BITS = {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    reason: str = ""  # set when a vendor override replaced the default


@dataclass
class Comparison:
    passed: bool
    rule: str | None  # "exact", "tolerance", "aten-parity" or None when failed
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    mismatch_pct: float = 0.0
    max_ulp: float = 0.0
    message: str = ""

    def metrics(self) -> dict:
        return {"max_abs_err": self.max_abs_err, "max_rel_err": self.max_rel_err,
                "mismatch_pct": self.mismatch_pct, "max_ulp": self.max_ulp}


def default_tolerance(dtype: torch.dtype, tolerance_class: str, reduction_size: int = 1) -> Tolerance:
    if tolerance_class == "exact" or dtype not in RTOL:
        return Tolerance(0.0, 0.0)
    growth = math.sqrt(max(reduction_size, 1)) if tolerance_class == "reduction" else 1.0
    return Tolerance(RTOL[dtype], ATOL[dtype] * growth)


def load_overrides(path: Path) -> dict:
    """A vendor's ``conformance_overrides.yaml``: {op: {dtype or "*": {rtol, atol, reason}}}."""
    if not path.is_file():
        return {}
    raw = read_mapping(path, ValueError, "a mapping of operator -> {dtype: {rtol, atol, reason}}")
    overrides = {}
    for op, by_dtype in raw.items():
        if not isinstance(by_dtype, dict):
            raise ValueError(f"{path}: {op!r}: expected a mapping of dtype -> {{rtol, atol, reason}}")
        for dtype_name, entry in by_dtype.items():
            where = f"{path}: {op!r} / {dtype_name!r}"
            if not isinstance(entry, dict) or not str(entry.get("reason", "")).strip():
                raise ValueError(f"{where}: every override needs a written reason")
            unknown = set(entry) - {"rtol", "atol", "reason"}
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
            overrides[op, dtype_name] = entry
    return overrides


def check_override_names(overrides: dict, path: Path, known_ops, known_dtypes) -> None:
    """Every override names a declared operator and a known dtype (or "*"): a typo would loosen nothing
    and pass silently."""
    import difflib

    for op, dtype in overrides:
        if op not in known_ops:
            hint = difflib.get_close_matches(op, list(known_ops), n=3)
            guess = f" (did you mean {', '.join(hint)}?)" if hint else ""
            raise ValueError(f"{path}: unknown operator {op!r}{guess}; an override names a declared operator "
                             "(gems.ops.names())")
        if dtype != "*" and dtype not in known_dtypes:
            raise ValueError(f"{path}: {op!r}: unknown dtype {dtype!r}; use one of {', '.join(known_dtypes)} or '*'")


def tolerance_for(op, dtype, tolerance_class, reduction_size, overrides) -> Tolerance:
    base = default_tolerance(dtype, tolerance_class, reduction_size)
    dtype_name = str(dtype).replace("torch.", "")
    entry = overrides.get((op, dtype_name)) or overrides.get((op, "*"))
    if not entry:
        return base
    return Tolerance(float(entry.get("rtol", base.rtol)), float(entry.get("atol", base.atol)), entry["reason"])


def gradient_tolerance(tol: Tolerance, oracle: torch.Tensor) -> Tolerance:
    """The norm-wise tolerance of an input gradient (see the module docstring)."""
    finite = oracle[oracle.isfinite()]
    if not oracle.is_floating_point() or finite.numel() == 0:
        return tol
    scale = finite.abs().max().item()
    return Tolerance(tol.rtol, max(tol.atol, tol.rtol * scale), tol.reason)


def ulp(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The spacing of ``dtype`` at each value (float64 tensor of the same shape)."""
    info = torch.finfo(dtype)
    mantissa, exponent = torch.frexp(values.abs().clamp_min(info.tiny))
    del mantissa
    return torch.ldexp(torch.ones_like(values), exponent - 1 - _MANTISSA_BITS[dtype])


def _nonfinite_mismatch(a: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """Where NaN or an infinity stands in one tensor but not the same value in the other."""
    return (a.isnan() != e.isnan()) | ((a.isinf() | e.isinf()) & (a != e))


def _zero_sign_mismatch(actual: torch.Tensor, aten: torch.Tensor, oracle: torch.Tensor) -> torch.Tensor:
    """Where both results are zeros of opposite signs and the exact result is a zero too. A nonzero exact value
    too small for the dtype rounds to a zero whose sign is the rounding's (an fp32 sum of ~1e-9 stored in fp16):
    its tolerance judges it, as any other rounding."""
    return (actual == 0) & (aten == 0) & (oracle == 0) & (torch.signbit(actual) != torch.signbit(aten))


def _abs_error(a: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """|a - e| where both are finite, 0 elsewhere (non-finite values are judged separately)."""
    finite = a.isfinite() & e.isfinite()
    return torch.where(finite, (a - e).abs(), torch.zeros_like(a))


def compare(actual: torch.Tensor, oracle: torch.Tensor, aten: torch.Tensor | None, tol: Tolerance) -> Comparison:
    """Compare one output tensor; ``oracle`` is float64 on CPU, ``aten`` ATen's result on the device."""
    actual = actual.detach().cpu()
    if aten is not None and actual.dtype != aten.dtype:
        return Comparison(False, None, message=f"dtype {actual.dtype} differs from ATen's {aten.dtype}")
    if actual.shape != oracle.shape:
        if aten is None or actual.shape != aten.shape:
            return Comparison(False, None, message=f"shape {tuple(actual.shape)} differs from {tuple(oracle.shape)}")
        # ATen's kernels differ per device here (native_batch_norm in eval mode returns its statistics,
        # shape (C,), on CUDA and empty ones on the CPU): ATen on the device is the reference.
        oracle = aten.detach().cpu().double()
    if actual.numel() == 0:
        return Comparison(True, "exact")
    dtype = actual.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        expected = oracle.to(dtype)
        wrong = actual != expected
        pct = 100.0 * wrong.sum().item() / actual.numel()
        if pct == 0:
            return Comparison(True, "exact")
        diff = (actual.double() - expected.double()).abs().max().item()
        return Comparison(False, None, max_abs_err=diff, mismatch_pct=pct,
                          message=f"{wrong.sum().item()} of {actual.numel()} values differ from the exact result")
    a, expected = actual.double(), oracle.to(dtype).double()
    if aten is not None and not dtype.is_complex:
        wrong_sign = _zero_sign_mismatch(actual, aten.detach().cpu(), oracle)
        if wrong_sign.any():
            first = wrong_sign.flatten().nonzero()[0].item()
            return Comparison(False, None, mismatch_pct=100.0 * wrong_sign.sum().item() / actual.numel(),
                              message=f"{wrong_sign.sum().item()} of {actual.numel()} zeros have the other sign "
                                      f"than ATen's (flat index {first}: gems {actual.flatten()[first].item()}, "
                                      f"ATen {aten.detach().cpu().flatten()[first].item()})")
    err = _abs_error(a, expected)
    nonfinite_bad = _nonfinite_mismatch(a, expected)
    bad = nonfinite_bad | (err > tol.atol + tol.rtol * expected.abs())
    rel = torch.where(expected.isfinite() & (expected != 0), err / expected.abs(), torch.zeros_like(err))
    result = Comparison(
        passed=False, rule=None,
        max_abs_err=err.max().item(), max_rel_err=rel.max().item(),
        mismatch_pct=100.0 * bad.sum().item() / actual.numel(),
        max_ulp=(err / ulp(expected, dtype)).max().item() if dtype in _MANTISSA_BITS else 0.0,
    )
    if not bad.any():
        result.passed, result.rule = True, "tolerance"
        return result
    if aten is not None:
        b = aten.detach().cpu().double()
        # Parity: NaN/Inf exactly where ATen has them, and no element further from the oracle than ATen's.
        if not _nonfinite_mismatch(a, b).any() and err.max() <= _abs_error(b, expected).max():
            result.passed, result.rule = True, "aten-parity"
            return result
    result.message = (f"{bad.sum().item()} of {actual.numel()} values outside rtol={tol.rtol:g} atol={tol.atol:g}"
                      + ("; NaN/Inf in other places than the oracle's" if nonfinite_bad.any() else ""))
    return result
