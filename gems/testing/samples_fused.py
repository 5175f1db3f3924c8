"""Sample generators and perf inputs for the fused operators (gems.fused, gems/ops/fused/), with the
signature ``samples(dtype, device, quick)``. Each operator's reference (its eager composite) computes
ATen's result and the float64 oracle; the "grad" variant is a deliberate fallback (no backward).
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.samples import make_tensor, shape_for, strided, transposed
from gems.testing.samples_norm import (
    FULL_3D,
    FULL_LONG_ROW,
    QUICK_3D,
    QUICK_LONG_ROW,
    case_maker,
    norm_special_rows,
    rg,
)

_FUSED_GRAD = "grad"  # a deliberate fallback: gems.fused kernels have no backward


def residual_norm_samples(kind):
    """fused_add_rms_norm(x, residual, weight, eps=) (kind "rms") and skip_layer_norm(x, skip, weight,
    bias, eps=) (kind "layer")."""

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        shape3 = QUICK_3D if quick else FULL_3D
        long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
        make = lambda s: make_tensor(s, dtype, device)
        params = lambda n: (make((n,)),) if kind == "rms" else (make((n,)), make((n,)))
        case = case_maker(None)
        return [
            case("contiguous", lambda: (make(shape), make(shape), *params(cols)), cols),
            case("no-weight", lambda: (make(shape), make(shape), None), cols),
            case("3d", lambda: (make(shape3), make(shape3), *params(shape3[-1])), shape3[-1]),
            case("row-of-one", lambda: (make((rows, 1)), make((rows, 1)), *params(1)), 1),
            case("1xN", lambda: (make((1, cols)), make((1, cols)), *params(cols)), cols),
            case("long-rows", lambda: (make((3, long)), make((3, long)), *params(long)), long),
            case("noncontiguous", lambda: (transposed(shape, dtype, device), strided(shape, dtype, device),
                                           *params(cols)), cols),
            case("noncontiguous-permuted", lambda: (make((5, 3, 7)).permute(1, 0, 2), make((3, 5, 7)), *params(7)), 7),
            case("empty", lambda: (make((0, cols)), make((0, cols)), *params(cols)), cols),
            case("special-values", lambda: (norm_special_rows(dtype, device), make((8, 6)), *params(6)), 6),
            case("eps", lambda: (make(shape), make(shape), *params(cols)), cols, {"eps": 0.25}),
            case("error-shape-mismatch", lambda: (make(shape), make((rows, cols + 1)), *params(cols)), 1),
            case("error-weight-shape", lambda: (make(shape), make(shape), *params(cols + 1)), 1),
            case(_FUSED_GRAD, lambda: (rg(make(shape)), make(shape), *params(cols)), cols),
        ]

    return samples


def residual_norm_inputs(kind):
    def inputs(shape, dtype, device):
        n = shape[-1]
        params = (make_tensor((n,), dtype, device),) * (1 if kind == "rms" else 2)
        return Sample("perf", (make_tensor(shape, dtype, device), make_tensor(shape, dtype, device), *params),
                      reduction_size=n)

    return inputs


def _gated_special(dtype, device):
    """Gate halves with NaN, -Inf, saturating values and signed zeros; value halves with +-Inf and NaN.
    The gate half has no +Inf: ATen's CPU erf-gelu gives NaN there (inf on CUDA), a CPU quirk the
    float64 oracle would carry."""
    info = torch.finfo(dtype)
    gate = [math.nan, -math.inf, -100.0, 100.0, 0.0, -0.0, min(info.max / 4, 1e4), -3.0]
    value = [1.0, 2.0, math.inf, -math.inf, math.nan, 3.0, 0.5, -0.25]
    return torch.tensor([gate + value, value[::-1] + gate[::-1]], dtype=torch.float64).to(dtype).to(device)


def gated_samples(extra):
    """silu_and_mul(x) / gelu_and_mul(x, approximate=): extra {name: kwargs} adds variants with kwargs."""

    def samples(dtype, device, quick):
        rows, cols = shape_for(quick)
        shape = (rows, 2 * cols)
        long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
        make = lambda s: make_tensor(s, dtype, device)
        case = case_maker(None)
        cases = [
            case("contiguous", lambda: (make(shape),), 1),
            case("3d", lambda: (make((3, 5, 14)),), 1),
            case("pair-per-row", lambda: (make((rows, 2)),), 1),
            case("1xN", lambda: (make((1, 2 * cols)),), 1),
            case("1d", lambda: (make((2 * cols,)),), 1),
            case("long-rows", lambda: (make((3, 2 * long)),), 1),
            case("noncontiguous-transposed", lambda: (transposed(shape, dtype, device),), 1),
            case("noncontiguous-strided", lambda: (strided(shape, dtype, device),), 1),
            case("empty", lambda: (make((0, 2 * cols)),), 1),
            case("empty-last-dim", lambda: (make((rows, 0)),), 1),
            case("special-values", lambda: (_gated_special(dtype, device),), 1),
            case("error-odd-last-dim", lambda: (make((rows, 2 * cols + 1)),), 1),
            case("error-0d", lambda: (make(()),), 1),
            case(_FUSED_GRAD, lambda: (rg(make(shape)),), 1),
        ]
        for name, kwargs in extra.items():
            cases += [case(name, lambda: (make(shape),), 1, kwargs),
                      case(f"{name}-special-values", lambda: (_gated_special(dtype, device),), 1, kwargs)]
        return cases

    return samples


def gated_inputs():
    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device),))

    return inputs


def _angles(seq, half, dtype, device):
    """(cos, sin) of position * frequency, as RoPE tables are built."""
    if str(device) == "meta":
        return (torch.empty((seq, half), dtype=dtype, device="meta"),) * 2
    freqs = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float64) / max(half, 1)))
    theta = torch.arange(seq, dtype=torch.float64)[:, None] * freqs[None, :]
    return theta.cos().to(dtype).to(device), theta.sin().to(dtype).to(device)


def rope_samples():
    def samples(dtype, device, quick):
        make = lambda s: make_tensor(s, dtype, device)
        batch, seq, heads, dim = (2, 5, 3, 8) if quick else (4, 129, 8, 128)
        x4 = (batch, seq, heads, dim)
        angles = lambda s=seq, d=dim: _angles(s, d // 2, dtype, device)
        case = case_maker(None)
        cases = []
        for layout, kwargs in (("neox", {}), ("gptj", {"interleaved": True})):
            cases += [
                case(f"{layout}-contiguous", lambda: (make(x4), *angles()), 1, kwargs),
                case(f"{layout}-3d", lambda: (make((seq, heads, dim)), *angles()), 1, kwargs),
                case(f"{layout}-one-pair", lambda: (make((batch, seq, heads, 2)), *angles(seq, 2)), 1, kwargs),
                case(f"{layout}-many-rows", lambda: (make((2, 64, 8, 64)), *angles(64, 64)), 1, kwargs),
                # (batch, heads, seq, dim) memory seen as (batch, seq, heads, dim): rows do not merge, copied.
                case(f"{layout}-noncontiguous-transposed",
                     lambda: (make((batch, heads, seq, dim)).transpose(1, 2), *angles()), 1, kwargs),
                case(f"{layout}-noncontiguous-strided",
                     lambda: (make((batch, seq, heads, 2 * dim))[..., ::2],
                              *(t.t().contiguous().t() for t in angles())), 1, kwargs),
                case(f"{layout}-empty", lambda: (make((batch, 0, heads, dim)), *angles(0)), 1, kwargs),
                case(f"{layout}-special-values",
                     lambda: (norm_special_rows(dtype, device)[:, :4].reshape(2, 4, 1, 4), *angles(4, 4)), 1, kwargs),
            ]
        cases += [
            case("error-odd-head-dim", lambda: (make((batch, seq, heads, 7)), *angles(seq, 8)), 1),
            case("error-angles-shape", lambda: (make(x4), *angles(seq + 1)), 1),
            case("error-2d", lambda: (make((seq, dim)), *angles()), 1),
            case(_FUSED_GRAD, lambda: (rg(make(x4)), *angles()), 1),
        ]
        return cases

    return samples


def rope_inputs():
    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), *_angles(shape[-3], shape[-1] // 2, dtype, device)))

    return inputs
