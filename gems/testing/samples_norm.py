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


def io_bytes(reads=1):
    """Bytes moved: the first ``reads`` arguments read and every output written (weights are negligible)."""

    def bytes_moved(sample, result):
        outputs = result if isinstance(result, tuple) else (result,)
        return tensor_bytes(*sample.args[:reads], *outputs)

    return bytes_moved


# --------------------------------------------------------------------------- fused (gems.fused)

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
        case = _case(None)
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
            case(_FUSED_GRAD, lambda: (_grad(make(shape)), make(shape), *params(cols)), cols),
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
        case = _case(None)
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
            case(_FUSED_GRAD, lambda: (_grad(make(shape)),), 1),
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
        case = _case(None)
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
            case(_FUSED_GRAD, lambda: (_grad(make(x4)), *angles()), 1),
        ]
        return cases

    return samples


def rope_inputs():
    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), *_angles(shape[-3], shape[-1] // 2, dtype, device)))

    return inputs


# --------------------------------------------------------------------------- group_norm


def group_norm_samples():
    return _group_norm_samples


def _group_norm_samples(dtype, device, quick):
    """F.group_norm(x, num_groups, weight, bias, eps=) on (N, C, *) inputs, and the backward directly."""
    make = lambda s: make_tensor(s, dtype, device)
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    n, c, hw = (3, 6, 5) if quick else (8, 32, 129)
    both = ("native_group_norm", "native_group_norm_backward")
    case = _case("native_group_norm")
    backward = torch.ops.aten.native_group_norm_backward.default

    def backward_args(x, dy, groups, mask):
        with torch.no_grad():
            _, mean, rstd = torch.ops.aten.native_group_norm.default(x, None, None, n, c, hw, groups, 1e-5)
        return dy, x, mean, rstd, make((c,)), n, c, hw, groups, mask

    return [
        case("contiguous", lambda: (make((n, c, hw)), 2, make((c,)), make((c,))), c // 2 * hw),
        case("no-affine", lambda: (make((n, c, hw)), 3), c // 3 * hw),
        case("one-group", lambda: (make((n, c, hw)), 1, make((c,)), make((c,))), c * hw),
        case("group-per-channel", lambda: (make((n, c, hw)), c, make((c,)), make((c,))), hw),
        case("2d", lambda: (make((n, c)), 2, make((c,)), make((c,))), c // 2),
        case("4d", lambda: (make((2, c, 3, 4)), 3, make((c,)), make((c,))), c // 3 * 12),
        case("group-of-one", lambda: (make((n, c, 1)), c, make((c,)), make((c,))), 1),
        case("1xN", lambda: (make((1, c, hw)), 2, make((c,)), make((c,))), c // 2 * hw),
        case("long-groups", lambda: (make((2, 4, long)), 2, make((4,)), make((4,))), 2 * long),
        case("noncontiguous", lambda: (make((n, hw, c)).transpose(1, 2), 2, make((c,)), make((c,))), c // 2 * hw),
        case("empty", lambda: (make((0, c, hw)), 2, make((c,)), make((c,))), 1),
        case("special-values", lambda: (norm_special_rows(dtype, device).view(2, 4, 6), 2), 12),
        case("eps", lambda: (make((n, c, hw)), 2), c // 2 * hw, {"eps": 0.25}),
        case("error-groups-not-dividing", lambda: (make((n, c, hw)), 4), 1),
        case("error-weight-shape", lambda: (make((n, c, hw)), 2, make((c + 1,))), 1),
        case("grad", lambda: (_grad(make((n, c, hw))), 2, _grad(make((c,))), _grad(make((c,)))), n * hw,
             expects=both, grad=True),
        case("grad-no-affine", lambda: (_grad(make((n, c, hw))), 3), c // 3 * hw, expects=both, grad=True),
        case("grad-long-groups", lambda: (_grad(make((2, 4, long))), 2, _grad(make((4,))), _grad(make((4,)))),
             2 * long, expects=both, grad=True),
        case("grad-4d", lambda: (_grad(make((2, c, 3, 4))), 3, _grad(make((c,))), _grad(make((c,)))), 24,
             expects=both, grad=True),
        case("backward-mask-dx", lambda: backward_args(make((n, c, hw)), make((n, c, hw)), 2, [True, False, False]),
             hw, expects="native_group_norm_backward", call=backward),
        case("backward-mask-dw-db", lambda: backward_args(make((n, c, hw)), make((n, c, hw)), 3, [False, True, True]),
             n * hw, expects="native_group_norm_backward", call=backward),
        # No non-contiguous grad_out case: ATen's CPU kernel (the oracle) reads it as if it were contiguous
        # (torch 2.13: dx, dw, db off by up to 15 for a transposed grad_out); gems makes it contiguous.
    ]


# --------------------------------------------------------------------------- batch_norm


class _BatchNorm:
    """``F.batch_norm`` (or a direct overload when ``op`` is given) returning its results and the running
    statistics it updated in place, so those are compared too. cuDNN is off for the torch-level call:
    on CUDA, ATen would take cudnn_batch_norm for fp32 inputs with weight and bias, which gems does not
    serve (F.batch_norm then runs ATen's kernel: a fallback, not a wrong result)."""

    def __init__(self, op=None, running=True):
        self.op, self.running = op, running

    def __repr__(self):
        return f"batch_norm({self.op or 'F.batch_norm'}) + running stats"

    def __call__(self, x, *args):
        if self.op is not None:  # (x, weight, bias, running_mean, running_var, ...)
            return (*self.op(x, *args), *(args[2:4] if self.running else ()))
        with torch.backends.cudnn.flags(enabled=False):
            y = F.batch_norm(x, *args)
        return (y, *(a for a in args[:2] if a is not None))


def batch_norm_samples():
    return _batch_norm_samples


def _batch_norm_samples(dtype, device, quick):
    """F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps) and the ATen
    forms directly; x is (N, C, *)."""
    make = lambda s: make_tensor(s, dtype, device)
    ones = lambda c: (make((c,)).abs() + 0.5)  # a running variance
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    n, c, hw = (3, 4, 5) if quick else (16, 32, 257)
    A = torch.ops.aten
    both = ("native_batch_norm", "native_batch_norm_backward")
    case = _case("native_batch_norm")
    torch_call, native = _BatchNorm(), _BatchNorm(A.native_batch_norm.default)

    def stats(ch=c):
        return make((ch,)), ones(ch)

    def train(x, ch=c, affine=True, momentum=0.1, eps=1e-5):
        return (x, *stats(ch), *((make((ch,)), make((ch,))) if affine else (None, None)), True, momentum, eps)

    def evaluate(x, ch=c, affine=True):
        return (x, *stats(ch), *((make((ch,)), make((ch,))) if affine else (None, None)), False, 0.1, 1e-5)

    def native_args(x, training=True, ch=c):
        return (x, make((ch,)), make((ch,)), *stats(ch), training, 0.1, 1e-5)

    def backward_args(x, dy, training, mask):
        w, (rm, rv) = make((c,)), stats()
        with torch.no_grad():
            _, save_mean, save_invstd = A.native_batch_norm.default(x, w, None, rm, rv, training, 0.1, 1e-5)
        return dy, x, w, rm, rv, save_mean, save_invstd, training, 1e-5, mask

    grad_train = lambda x, ch=c: (_grad(x), *stats(ch), _grad(make((ch,))), _grad(make((ch,))), True, 0.1, 1e-5)
    backward = A.native_batch_norm_backward.default
    return [
        case("train", lambda: train(make((n, c, hw))), n * hw, call=torch_call),
        case("train-2d", lambda: train(make((6, c))), 6, call=torch_call),
        case("train-4d", lambda: train(make((2, c, 3, 3))), 18, call=torch_call),
        case("train-no-affine", lambda: train(make((n, c, hw)), affine=False), n * hw, call=torch_call),
        case("train-no-running-stats", lambda: (make((n, c, hw)), None, None, make((c,)), make((c,)), True),
             n * hw, call=torch_call),
        case("train-momentum-eps", lambda: train(make((n, c, hw)), momentum=0.3, eps=0.25), n * hw, call=torch_call),
        case("train-long-channels", lambda: train(make((2, 3, long))), 2 * long, call=torch_call),
        case("train-1xN", lambda: train(make((1, c, hw))), hw, call=torch_call),
        case("train-Nx1", lambda: train(make((13, 1)), ch=1), 13, call=torch_call),
        case("train-noncontiguous", lambda: train(make((n, hw, c)).transpose(1, 2)), n * hw, call=torch_call),
        case("train-special-values", lambda: train(norm_special_rows(dtype, device).view(2, 4, 6)), 12,
             call=torch_call),
        case("eval", lambda: evaluate(make((n, c, hw))), n * hw, call=torch_call),
        case("eval-no-affine", lambda: evaluate(make((n, c, hw)), affine=False), n * hw, call=torch_call),
        # F.batch_norm answers an empty input itself (torch's composite), so the overload is called directly.
        case("eval-empty", lambda: native_args(make((0, c, hw)), training=False), 1, call=native),
        case("eval-special-values", lambda: evaluate(norm_special_rows(dtype, device).view(2, 4, 6)), 1,
             call=torch_call),
        case("native-train", lambda: native_args(make((n, c, hw))), n * hw, call=native),
        case("native-eval", lambda: native_args(make((n, c, hw)), training=False), n * hw, call=native),
        case("legit", lambda: native_args(make((n, c, hw))), n * hw, expects="_native_batch_norm_legit",
             call=_BatchNorm(A._native_batch_norm_legit.default)),
        case("legit-no-stats", lambda: (make((n, c, hw)), make((c,)), make((c,)), True, 0.1, 1e-5), n * hw,
             expects="_native_batch_norm_legit.no_stats",
             call=_BatchNorm(A._native_batch_norm_legit.no_stats, running=False)),
        case("legit-no-training", lambda: (make((n, c, hw)), make((c,)), make((c,)), *stats(), 0.1, 1e-5), n * hw,
             expects="_native_batch_norm_legit_no_training",
             call=_BatchNorm(A._native_batch_norm_legit_no_training.default)),
        case("with-update", lambda: (make((n, c, hw)), make((c,)), make((c,)), *stats(), 0.1, 1e-5), n * hw,
             expects="_batch_norm_with_update", call=_BatchNorm(A._batch_norm_with_update.default)),
        case("grad-train", lambda: grad_train(make((n, c, hw))), n * hw, expects=both, grad=True, call=torch_call),
        case("grad-train-long", lambda: grad_train(make((2, 3, long)), 3), 2 * long, expects=both, grad=True,
             call=torch_call),
        case("grad-eval", lambda: (_grad(make((n, c, hw))), *stats(), _grad(make((c,))), _grad(make((c,))), False),
             n * hw, expects=both, grad=True, call=torch_call),
        case("grad-no-affine", lambda: (_grad(make((n, c, hw))), *stats(), None, None, True), n * hw, expects=both,
             grad=True, call=torch_call),
        case("backward-mask-dx", lambda: backward_args(make((n, c, hw)), make((n, c, hw)), True, [True, False, False]),
             n * hw, expects="native_batch_norm_backward", call=backward),
        case("backward-eval", lambda: backward_args(make((n, c, hw)), make((n, c, hw)), False, [True, True, True]),
             n * hw, expects="native_batch_norm_backward", call=backward),
        case("backward-noncontiguous-grad",
             lambda: backward_args(make((n, c, hw)), make((n, hw, c)).transpose(1, 2), True, [True, True, True]),
             n * hw, expects="native_batch_norm_backward", call=backward),
    ]


# --------------------------------------------------------------------------- weight_norm


def weight_norm_samples():
    return _weight_norm_samples


def _weight_norm_samples(dtype, device, quick):
    """torch._weight_norm(v, g, dim) for dim 0 and the last dim (the ones that reach
    _weight_norm_interface), and the backward directly."""
    make = lambda s: make_tensor(s, dtype, device)
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    shape = (4, 3, 5) if quick else (64, 33, 65)
    both = ("_weight_norm_interface", "_weight_norm_interface_backward")
    case = _case("_weight_norm_interface")

    def g_for(v_shape, dim):
        return make([n if d == dim else 1 for d, n in enumerate(v_shape)])

    def special():
        rows = norm_special_rows(dtype, device)
        rows[5] = 0  # an all-zero row: norm 0, so w = v * g / 0 is NaN, as in ATen
        return rows

    def backward_args(v_shape, dim):
        v, g = make(v_shape), g_for(v_shape, dim)
        with torch.no_grad():
            _, norms = torch.ops.aten._weight_norm_interface.default(v, g, dim)
        return make(v_shape), v, g, norms, dim

    last = len(shape) - 1
    return [
        case("dim0", lambda: (make(shape), g_for(shape, 0), 0), shape[1] * shape[2]),
        case("dim-last", lambda: (make(shape), g_for(shape, last), last), shape[0] * shape[1]),
        case("2d-dim0", lambda: (make((6, 7)), g_for((6, 7), 0), 0), 7),
        case("2d-dim1", lambda: (make((6, 7)), g_for((6, 7), 1), 1), 6),
        case("1d", lambda: (make((7,)), make((7,)), 0), 1),
        case("1xN", lambda: (make((1, 9)), g_for((1, 9), 0), 0), 9),
        case("Nx1", lambda: (make((9, 1)), g_for((9, 1), 1), 1), 9),
        case("long-rows", lambda: (make((3, long)), g_for((3, long), 0), 0), long),
        case("long-columns", lambda: (make((long, 3)), g_for((long, 3), 1), 1), long),
        case("noncontiguous", lambda: (make((7, 6)).t(), g_for((6, 7), 0), 0), 7),
        case("empty", lambda: (make((0, 5)), g_for((0, 5), 0), 0), 1),
        case("special-values", lambda: (special(), g_for((8, 6), 0), 0), 6),
        case("grad-dim0", lambda: (_grad(make(shape)), _grad(g_for(shape, 0)), 0), shape[1] * shape[2],
             expects=both, grad=True),
        case("grad-dim-last", lambda: (_grad(make(shape)), _grad(g_for(shape, last)), last), shape[0] * shape[1],
             expects=both, grad=True),
        case("grad-long-rows", lambda: (_grad(make((3, long))), _grad(g_for((3, long), 0)), 0), long, expects=both,
             grad=True),
        case("backward-dim0", lambda: backward_args(shape, 0), shape[1] * shape[2],
             expects="_weight_norm_interface_backward", call=torch.ops.aten._weight_norm_interface_backward.default),
        case("backward-dim-last", lambda: backward_args(shape, last), shape[0] * shape[1],
             expects="_weight_norm_interface_backward", call=torch.ops.aten._weight_norm_interface_backward.default),
    ]
