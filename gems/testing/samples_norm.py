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
from gems.testing.samples_softmax import FULL_LONG_ROW, QUICK_LONG_ROW

QUICK_3D, FULL_3D = (3, 5, 7), (7, 33, 65)
# More rows than one interpreter program takes in the backward (BLOCK_M = 512 at 17 columns), so the
# partial dw/db sums of several programs are added.
QUICK_MANY_ROWS, FULL_MANY_ROWS = 600, 4099


def rg(t: torch.Tensor) -> torch.Tensor:
    """``t`` requiring grad (a leaf: samples are built without autograd history)."""
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


def constant_rows(dtype, device, length=12):
    """Rows of one repeated value each, values whose sums and quotients by the length round."""
    values = [7.3, 3.3, 0.7, 1.7, -5.9, 2.5, 1e4 + 0.1, 0.1]
    return torch.tensor(values, dtype=torch.float64).to(dtype)[:, None].repeat(1, length).to(device)


def case_maker(expects):
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
    case = case_maker(fwd)
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
        # Constant rows: the mean must come back exact (variance 0, y = b) although sum(x) / n rounds off it
        # (the GPU's approximate fp32 division; the sum of twelve 0.7s): any error is amplified 1/sqrt(eps).
        case("constant-rows", lambda: (constant_rows(dtype, device), (12,), *params((12,))), 12),
        case("long-constant-rows", lambda: (constant_rows(dtype, device, long), (long,), *params((long,))), long),
        case("eps", lambda: (make(shape), (cols,), *params((cols,))), cols, {"eps": 0.25}),
        case("error-shape-mismatch", lambda: (make(shape), (cols + 1,)), 1),
        case("error-weight-shape", lambda: (make(shape), (cols,), make((cols + 1,))), 1),
        case("error-empty-normalized-shape", lambda: (make(shape), ()), 1),
        case("grad", lambda: (rg(make(shape)), (cols,), *map(rg, params((cols,)))), max(shape), expects=both,
             grad=True),
        case("grad-no-weight", lambda: (rg(make(shape)), (cols,)), cols, expects=both, grad=True),
        case("grad-3d-two-dims", lambda: (rg(make(shape3)), tail, *map(rg, params(tail))), max(n3, shape3[0]),
             expects=both, grad=True),
        case("grad-long-rows", lambda: (rg(make((3, long))), (long,), *map(rg, params((long,)))), long,
             expects=both, grad=True),
        case("grad-many-rows", lambda: (rg(make((many, cols))), (cols,), *map(rg, params((cols,)))),
             many, expects=both, grad=True),
        case("grad-noncontiguous", lambda: (rg(transposed(shape, dtype, device)), (cols,),
                                            *map(rg, params((cols,)))), max(shape), expects=both, grad=True),
        # One element per row: rms_norm's dx is g * rstd * eps / (x^2 + eps), rounding noise at a tiny eps
        # (ATen's too); a larger eps makes it a value that can be checked.
        case("grad-row-of-one", lambda: (rg(make((rows, 1))), (1,), *map(rg, params((1,)))), rows,
             {"eps": 0.05}, expects=both, grad=True),
        case("grad-input-only", lambda: (rg(make(shape)), (cols,), *params((cols,))), cols, expects=both, grad=True),
    ]


def layer_norm_samples():
    return _layer_norm_samples


def rms_norm_samples():
    return _rms_norm_samples


def _layer_norm_samples(dtype, device, quick):
    rows, cols = shape = shape_for(quick)
    make = lambda s: make_tensor(s, dtype, device)
    case = case_maker("native_layer_norm_backward")
    backward = torch.ops.aten.native_layer_norm_backward.default

    def backward_args(x, dy):
        with torch.no_grad():
            _, mean, rstd = torch.ops.aten.native_layer_norm.default(x, [cols], None, None, 1e-5)
        return dy, x, [cols], mean, rstd

    w, b = lambda: make((cols,)), lambda: make((cols,))
    strided = lambda: make((2 * cols,))[::2]  # a parameter read through its stride (a view: weight[::2], tied)
    return _row_norm_common(dtype, device, quick, rms=False) + [
        case("bias-only", lambda: (make(shape), (cols,), None, make((cols,))), cols,
             expects="native_layer_norm"),
        case("weight-bias-strided", lambda: (make(shape), (cols,), strided(), strided()), cols,
             expects="native_layer_norm"),
        case("backward-weight-strided", lambda: (*backward_args(make(shape), make(shape)), strided(), b(),
                                                 [True, True, True]), rows, call=backward),
        case("backward-mask-dx-db", lambda: (*backward_args(make(shape), make(shape)), w(), b(),
                                             [True, False, True]), rows, call=backward),
        case("backward-mask-dw", lambda: (*backward_args(make(shape), make(shape)), w(), b(),
                                          [False, True, False]), rows, call=backward),
        case("backward-noncontiguous-grad", lambda: (*backward_args(make(shape), transposed(shape, dtype, device)),
                                                     w(), b(), [True, True, True]), rows, call=backward),
        case("backward-empty", lambda: (*backward_args(make((0, cols)), make((0, cols))), w(), b(),
                                        [True, True, True]), 1, call=backward),
        case("backward-mask-none", lambda: (*backward_args(make(shape), make(shape)), w(), b(),
                                            [False, False, False]), 1, call=backward),
    ]


def _rms_norm_samples(dtype, device, quick):
    _, cols = shape = shape_for(quick)
    make = lambda s: make_tensor(s, dtype, device)
    case = case_maker("rms_norm")
    tiny = lambda: make(shape) * 1e-3  # mean(x^2) near the default eps: eps=None must be ATen's
    return _row_norm_common(dtype, device, quick, rms=True) + [
        case("eps-default-small-values", lambda: (tiny(), (cols,), make((cols,))), cols),
        case("eps-none", lambda: (make(shape), (cols,), make((cols,))), cols, {"eps": None}),
        case("weight-strided", lambda: (make(shape), (cols,), make((2 * cols,))[::2]), cols),
        case("weight-expanded", lambda: (make(shape), (cols,), make((1,)).expand(cols)), cols),
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


# --------------------------------------------------------------------------- group_norm


def group_norm_samples():
    return _group_norm_samples


def _group_norm_samples(dtype, device, quick):
    """F.group_norm(x, num_groups, weight, bias, eps=) on (N, C, *) inputs, and the backward directly."""
    make = lambda s: make_tensor(s, dtype, device)
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    n, c, hw = (3, 6, 5) if quick else (8, 32, 129)
    both = ("native_group_norm", "native_group_norm_backward")
    case = case_maker("native_group_norm")
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
        # The overload itself (F.group_norm refuses these before it): ATen's checks of its arguments.
        case("error-native-no-groups", lambda: (make((n, c, hw)), None, None, n, c, hw, 0, 1e-5), 1,
             call=torch.ops.aten.native_group_norm.default),
        case("error-native-weight-shape", lambda: (make((n, c, hw)), make((c + 1,)), None, n, c, hw, 2, 1e-5), 1,
             call=torch.ops.aten.native_group_norm.default),
        case("error-native-sizes", lambda: (make((n, c, hw)), None, None, n, c, hw - 1, 2, 1e-5), 1,
             call=torch.ops.aten.native_group_norm.default),
        case("grad", lambda: (rg(make((n, c, hw))), 2, rg(make((c,))), rg(make((c,)))), n * hw,
             expects=both, grad=True),
        case("grad-no-affine", lambda: (rg(make((n, c, hw))), 3), c // 3 * hw, expects=both, grad=True),
        case("grad-long-groups", lambda: (rg(make((2, 4, long))), 2, rg(make((4,))), rg(make((4,)))),
             2 * long, expects=both, grad=True),
        case("grad-4d", lambda: (rg(make((2, c, 3, 4))), 3, rg(make((c,))), rg(make((c,)))), 24,
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
    case = case_maker("native_batch_norm")
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

    grad_train = lambda x, ch=c: (rg(x), *stats(ch), rg(make((ch,))), rg(make((ch,))), True, 0.1, 1e-5)
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
        # weight, bias and running statistics read (and the statistics updated in place) through their strides
        case("train-strided-params", lambda: (make((n, c, hw)), make((2 * c,))[::2], ones(2 * c)[::2],
                                              make((2 * c,))[::2], make((2 * c,))[::2], True), n * hw,
             call=torch_call),
        case("eval-strided-params", lambda: (make((n, c, hw)), make((2 * c,))[::2], ones(2 * c)[::2],
                                             make((2 * c,))[::2], make((2 * c,))[::2], False), n * hw,
             call=torch_call),
        case("train-special-values", lambda: train(norm_special_rows(dtype, device).view(2, 4, 6)), 12,
             call=torch_call),
        # Constant channels (N=12, C=8): the mean exact, variance 0, although sum(x) / n rounds off it.
        case("train-constant-channels", lambda: train(constant_rows(dtype, device).t().contiguous(), ch=8), 12,
             call=torch_call),
        # One running statistic without the other: ValueError on CPU and CUDA alike.
        case("error-one-running-stat", lambda: (make((n, c, hw)), make((c,)), make((c,)), make((c,)), None, True,
                                                0.1, 1e-5), 1, call=native),
        # No channel dim: ATen reads size(1) (IndexError; of a 0-d input, ValueError).
        case("error-1d", lambda: (make((c,)), None, None, None, None, True, 0.1, 1e-5), 1, call=native),
        case("error-0d", lambda: (make(()), None, None, None, None, True, 0.1, 1e-5), 1, call=native),
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
        case("grad-eval", lambda: (rg(make((n, c, hw))), *stats(), rg(make((c,))), rg(make((c,))), False),
             n * hw, expects=both, grad=True, call=torch_call),
        case("grad-no-affine", lambda: (rg(make((n, c, hw))), *stats(), None, None, True), n * hw, expects=both,
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
    _weight_norm_interface), the backward directly, and ATen's errors of both overloads."""
    make = lambda s: make_tensor(s, dtype, device)
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    shape = (4, 3, 5) if quick else (64, 33, 65)
    both = ("_weight_norm_interface", "_weight_norm_interface_backward")
    case = case_maker("_weight_norm_interface")
    interface = torch.ops.aten._weight_norm_interface.default
    backward = torch.ops.aten._weight_norm_interface_backward.default
    other = torch.float32 if dtype == torch.float64 else torch.float64  # a floating dtype ATen refuses beside

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
        case("grad-dim0", lambda: (rg(make(shape)), rg(g_for(shape, 0)), 0), shape[1] * shape[2],
             expects=both, grad=True),
        case("grad-dim-last", lambda: (rg(make(shape)), rg(g_for(shape, last)), last), shape[0] * shape[1],
             expects=both, grad=True),
        case("grad-long-rows", lambda: (rg(make((3, long))), rg(g_for((3, long), 0)), 0), long, expects=both,
             grad=True),
        case("backward-dim0", lambda: backward_args(shape, 0), shape[1] * shape[2],
             expects="_weight_norm_interface_backward", call=backward),
        case("backward-dim-last", lambda: backward_args(shape, last), shape[0] * shape[1],
             expects="_weight_norm_interface_backward", call=backward),
        # ATen's errors, the overloads called directly: an operand of another dtype, a 0-d v, an integer v
        case("error-g-dtype", lambda: (make((6, 7)), g_for((6, 7), 0).to(other), 0), 1, call=interface),
        case("error-0d", lambda: (make(()), make(()), -1), 1, call=interface),
        case("error-integer", lambda: (make((6, 7)).int(), g_for((6, 7), 0).int(), 0), 1, call=interface),
        case("error-backward-grad-dtype", lambda: (make((6, 7)).to(other), *backward_args((6, 7), 0)[1:]), 1,
             expects="_weight_norm_interface_backward", call=backward),
        case("error-backward-0d", lambda: (make(()), make(()), make(()), make(()), 0), 1,
             expects="_weight_norm_interface_backward", call=backward),
    ]
