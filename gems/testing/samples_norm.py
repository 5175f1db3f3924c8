"""Sample generators for the normalizations (gems/ops/normalization/) and the fused operators
(gems/ops/fused/), with the signature ``samples(dtype, device, quick)``, and their perf inputs.

Every generator reaches: rows of 1 element and rows longer than one block (the looped kernels), 1xN
and Nx1, non-contiguous inputs, empty inputs, NaN/Inf, with and without weight/bias, gradients (the
backward kernels), and the errors ATen raises for mismatched shapes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from gems.spec import Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, strided, transposed
from gems.testing.samples_reduction import FULL_LONG_ROW, QUICK_LONG_ROW

QUICK_3D, FULL_3D = (3, 5, 7), (7, 33, 65)
# More rows than one interpreter program takes in the backward (BLOCK_M = 512 at 17 columns), so the
# partial dw/db sums of several programs are added.
QUICK_MANY_ROWS, FULL_MANY_ROWS = 600, 4099


def _grad(t: torch.Tensor) -> torch.Tensor:
    return t.requires_grad_()


def norm_special_rows(dtype, device, length=6):
    """Rows with NaN, +-Inf, huge values that cancel, a constant row (zero variance), tiny values."""
    info = torch.finfo(dtype)
    # Huge values whose squares still fit fp32 (bf16's max / 4 squared would overflow every fp32 kernel,
    # ATen's too, while the float64 oracle stays finite).
    inf, nan, big = math.inf, math.nan, min(info.max / 4, 1e15)
    pad = lambda row: (row + [0.5] * length)[:length]
    rows = [pad([nan, 1.0, 2.0]), pad([inf, 1.0]), pad([-inf, 3.0]), pad([inf, -inf]), pad([big, -big, big]),
            [2.5] * length, pad([info.tiny, -info.tiny, info.tiny * 4], ), pad([1e3, -1e3, 0.25])]
    return torch.tensor(rows, dtype=torch.float64).to(dtype).to(device)


def _case(expects):
    def case(variant, args, size, kwargs=None, expects=expects, **extra):
        return Sample(variant, args, dict(kwargs or {}), expects=expects, reduction_size=size, **extra)

    return case


# --------------------------------------------------------------------------- layer_norm, rms_norm


def _row_norm_common(dtype, device, quick, rms):
    """The variants layer_norm and rms_norm share: args are (x, normalized_shape, weight[, bias])."""
    rows, cols = shape = shape_for(quick)
    shape3 = QUICK_3D if quick else FULL_3D
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    many = QUICK_MANY_ROWS if quick else FULL_MANY_ROWS
    make = lambda s: make_tensor(s, dtype, device)
    tail = shape3[1:]

    def params(n_shape):
        """weight (and bias for layer norm) of the normalized shape."""
        return (make(n_shape),) if rms else (make(n_shape), make(n_shape))

    fwd, both = ("rms_norm", "rms_norm") if rms else ("native_layer_norm", ("native_layer_norm",
                                                                         "native_layer_norm_backward"))
    case = _case(fwd)
    n3 = tail[0] * tail[1]
    return [
        case("contiguous", lambda: (make(shape), (cols,), *params((cols,))), cols),
        case("no-weight", lambda: (make(shape), (cols,)), cols),
        case("3d-two-dims", lambda: (make(shape3), tail, *params(tail)), n3),
        case("row-of-one", lambda: (make((rows, 1)), (1,), *params((1,))), 1),
        case("1xN", lambda: (make((1, cols)), (cols,), *params((cols,))), cols),
        case("Nx1", lambda: (make((cols, 1)), (1,), *params((1,))), 1),
        case("1d", lambda: (make((cols,)), (cols,), *params((cols,))), cols),
        case("long-rows", lambda: (make((3, long)), (long,), *params((long,))), long),
        case("noncontiguous-transposed", lambda: (transposed(shape, dtype, device), (cols,), *params((cols,))), cols),
        case("noncontiguous-strided", lambda: (strided(shape, dtype, device), (cols,), *params((cols,))), cols),
        # Dims (3, 5) with strides (7, 21) do not merge: the rows are copied first.
        case("noncontiguous-permuted", lambda: (make((5, 3, 7)).permute(1, 0, 2), (7,), *params((7,))), 7),
        case("empty", lambda: (make((0, cols)), (cols,), *params((cols,))), cols),
        case("special-values", lambda: (norm_special_rows(dtype, device), (6,), *params((6,))), 6),
        case("eps", lambda: (make(shape), (cols,), *params((cols,))), cols, {"eps": 0.25}),
        case("error-shape-mismatch", lambda: (make(shape), (cols + 1,)), 1),
        case("error-weight-shape", lambda: (make(shape), (cols,), make((cols + 1,))), 1),
        case("grad", lambda: (_grad(make(shape)), (cols,), *map(_grad, params((cols,)))), max(shape), expects=both,
             grad=True),
        case("grad-no-weight", lambda: (_grad(make(shape)), (cols,)), cols, expects=both, grad=True),
        case("grad-3d-two-dims", lambda: (_grad(make(shape3)), tail, *map(_grad, params(tail))), max(n3, shape3[0]),
             expects=both, grad=True),
        case("grad-long-rows", lambda: (_grad(make((3, long))), (long,), *map(_grad, params((long,)))), long,
             expects=both, grad=True),
        case("grad-many-rows", lambda: (_grad(make((many, cols))), (cols,), *map(_grad, params((cols,)))),
             many, expects=both, grad=True),
        case("grad-noncontiguous", lambda: (_grad(transposed(shape, dtype, device)), (cols,),
                                            *map(_grad, params((cols,)))), max(shape), expects=both, grad=True),
        # One element per row: rms_norm's dx is g * rstd * eps / (x^2 + eps), rounding noise at a tiny eps
        # (ATen's too); a larger eps makes it a value that can be checked.
        case("grad-row-of-one", lambda: (_grad(make((rows, 1))), (1,), *map(_grad, params((1,)))), rows,
             {"eps": 0.05}, expects=both, grad=True),
        case("grad-input-only", lambda: (_grad(make(shape)), (cols,), *params((cols,))), cols, expects=both, grad=True),
    ]


def layer_norm_samples():
    return _layer_norm_samples


def rms_norm_samples():
    return _rms_norm_samples


def _layer_norm_samples(dtype, device, quick):
    rows, cols = shape = shape_for(quick)
    make = lambda s: make_tensor(s, dtype, device)
    case = _case("native_layer_norm_backward")
    backward = torch.ops.aten.native_layer_norm_backward.default

    def backward_args(x, dy):
        with torch.no_grad():
            _, mean, rstd = torch.ops.aten.native_layer_norm.default(x, [cols], None, None, 1e-5)
        return dy, x, [cols], mean, rstd

    w, b = lambda: make((cols,)), lambda: make((cols,))
    return _row_norm_common(dtype, device, quick, rms=False) + [
        case("bias-only", lambda: (make(shape), (cols,), None, make((cols,))), cols,
             expects="native_layer_norm"),
        case("backward-mask-dx-db", lambda: (*backward_args(make(shape), make(shape)), w(), b(),
                                             [True, False, True]), rows, call=backward),
        case("backward-mask-dw", lambda: (*backward_args(make(shape), make(shape)), w(), b(),
                                          [False, True, False]), rows, call=backward),
        case("backward-noncontiguous-grad", lambda: (*backward_args(make(shape), transposed(shape, dtype, device)),
                                                     w(), b(), [True, True, True]), rows, call=backward),
        case("backward-empty", lambda: (*backward_args(make((0, cols)), make((0, cols))), w(), b(),
                                        [True, True, True]), 1, call=backward),
    ]


def _rms_norm_samples(dtype, device, quick):
    _, cols = shape = shape_for(quick)
    make = lambda s: make_tensor(s, dtype, device)
    case = _case("rms_norm")
    tiny = lambda: make(shape) * 1e-3  # mean(x^2) near the default eps: eps=None must be ATen's
    return _row_norm_common(dtype, device, quick, rms=True) + [
        case("eps-default-small-values", lambda: (tiny(), (cols,), make((cols,))), cols),
        case("eps-none", lambda: (make(shape), (cols,), make((cols,))), cols, {"eps": None}),
    ]


def row_norm_inputs(op):
    """Perf inputs: x (rows, cols) normalized over its last dim with weight (and bias)."""

    def inputs(shape, dtype, device):
        n = shape[-1]
        params = (make_tensor((n,), dtype, device),) * (1 if op == "rms_norm" else 2)
        call = F.rms_norm if op == "rms_norm" else F.layer_norm
        return Sample("perf", (make_tensor(shape, dtype, device), (n,), *params), call=call, reduction_size=n)

    return inputs


def io_bytes():
    """Bytes moved: the first argument read and every output written (weights are negligible)."""

    def bytes_moved(sample, result):
        outputs = result if isinstance(result, tuple) else (result,)
        return tensor_bytes(sample.args[0], *outputs)

    return bytes_moved
