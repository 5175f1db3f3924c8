"""Samples for the losses (gems/ops/loss/), with the signature ``samples(dtype, device, quick)``.

nll_loss (1-d and 2-d inputs) and nll_loss2d (3-d to 5-d inputs, which ``nll_loss_nd`` reshapes to
(N, C, H, W)): every reduction, class weights, ignore_index (the default -100, a class index, all
items ignored), non-contiguous inputs, empty batches, NaN and +-inf, more items than one block, more
classes than one block, gradients, F.cross_entropy (with label smoothing) reaching the gems kernels,
and the errors (a target out of range raises IndexError, never reads out of bounds).
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.samples import make_tensor, shape_for, special_values, strided, transposed

F = torch.nn.functional
_REDUCTION_NAMES = {0: "none", 1: "mean", 2: "sum"}


class _Loss:
    """``fn(x, target, weight, ignore_index=, reduction=, **extra)``: the weight is positional so that the
    oracle's float64 copy of it is what its float64 input meets."""

    def __init__(self, fn, reduction="mean", ignore_index=-100, **extra):
        self.fn, self.reduction, self.ignore_index, self.extra = fn, reduction, ignore_index, extra

    def __repr__(self):
        return f"{self.fn.__name__}(reduction={self.reduction}, ignore_index={self.ignore_index}, {self.extra})"

    def __call__(self, x, target, weight=None):
        return self.fn(x, target, weight, ignore_index=self.ignore_index, reduction=self.reduction, **self.extra)


_BACKWARD = torch.ops.aten.nll_loss_backward.default
_FORWARD = torch.ops.aten.nll_loss_forward.default
_BACKWARD_2D = torch.ops.aten.nll_loss2d_backward.default


def _targets(shape, n_classes, device, ignore_fraction=0.0, ignore_index=-100):
    if str(device) == "meta":
        return torch.empty(shape, dtype=torch.int64, device="meta")
    t = torch.randint(0, n_classes, shape)
    if ignore_fraction:
        t[torch.rand(shape) < ignore_fraction] = ignore_index
    return t.to(device)


def _special_inputs(shape, dtype, device):
    """Log-probabilities with NaN, +-inf and huge values, some at the target positions."""
    x = make_tensor(shape, dtype, device)
    if str(device) == "meta":
        return x
    flat = x.view(-1)
    info = torch.finfo(dtype)
    for i, v in enumerate([math.nan, math.inf, -math.inf, info.max / 2, -info.max / 2, -0.0]):
        flat[i * 7 % flat.numel()] = v
    return x


def nll_loss_samples(spatial: bool):
    """nll_loss (spatial=False: (N, C) and (C,) inputs) or nll_loss2d (spatial=True: (N, C, d1, ...))."""
    fwd, bwd = ("nll_loss2d_forward", "nll_loss2d_backward") if spatial else ("nll_loss_forward", "nll_loss_backward")
    both = (fwd, bwd)

    def samples(dtype, device, quick):
        rows, n_classes = shape_for(quick)
        if spatial:
            shape = (3, n_classes, 4, 5) if quick else (8, n_classes, 33, 65)
            tshape = (shape[0], *shape[2:])
        else:
            shape, tshape = (rows, n_classes), (rows,)
        items = math.prod(tshape)
        long_items = 5003 if quick else 100003
        make = lambda s: make_tensor(s, dtype, device)
        weight = lambda c=n_classes: make_tensor((c,), dtype, device, low=0.1, high=2.0)
        other = torch.float32 if dtype == torch.float64 else torch.float64  # a floating dtype ATen refuses beside
        targets = lambda s=tshape, c=n_classes, **kw: _targets(s, c, device, **kw)

        def case(variant, build, size=items, expects=fwd, call=None, **extra):
            return Sample(variant, build, expects=expects, reduction_size=size, call=call or _Loss(F.nll_loss),
                          **extra)

        cases = []
        for red in ("mean", "sum", "none"):
            size = 1 if red == "none" else items
            cases += [
                case(red, lambda: (make(shape), targets()), size, call=_Loss(F.nll_loss, red)),
                case(f"weights-{red}", lambda: (make(shape), targets(), weight()), size, call=_Loss(F.nll_loss, red)),
                case(f"ignore-index-{red}", lambda: (make(shape), targets(ignore_fraction=0.3), weight()), size,
                     call=_Loss(F.nll_loss, red)),
                case(f"empty-{red}", lambda: (make((0, *shape[1:])), targets((0, *tshape[1:]))), 1,
                     call=_Loss(F.nll_loss, red)),
                case(f"grad-{red}", lambda: (make(shape).requires_grad_(), targets(ignore_fraction=0.2), weight()),
                     size, expects=both, call=_Loss(F.nll_loss, red), grad=True),
            ]
        cases += [
            case("ignore-index-class", lambda: (make(shape), targets(), weight()),
                 call=_Loss(F.nll_loss, ignore_index=1)),
            case("weights-strided", lambda: (make(shape), targets(), weight(2 * n_classes)[::2]),
                 call=_Loss(F.nll_loss)),
            case("grad-weights-strided", lambda: (make(shape).requires_grad_(), targets(), weight(2 * n_classes)[::2]),
                 expects=both, call=_Loss(F.nll_loss), grad=True),
            case("all-ignored-mean", lambda: (make(shape), targets(ignore_fraction=1.0)), 1),
            case("special-values", lambda: (_special_inputs(shape, dtype, device), targets()), 1,
                 call=_Loss(F.nll_loss, "none")),
            case("special-values-mean", lambda: (_special_inputs(shape, dtype, device), targets())),
            case("error-target-out-of-range", lambda: (make(shape), targets()), 1, call=_OutOfRange(n_classes)),
            case("error-target-negative", lambda: (make(shape), targets()), 1, call=_OutOfRange(-1)),
            case("error-target-out-of-range-none", lambda: (make(shape), targets()), 1,
                 call=_OutOfRange(n_classes, "none")),
            case("error-target-out-of-range-backward", lambda: (make(shape), targets()), 1, expects=bwd,
                 call=_OutOfRangeBackward(bwd, n_classes)),
            case("error-weight-size", lambda: (make(shape), targets(), weight(n_classes - 1)), 1),
            case("error-target-int32", lambda: (make(shape), targets().int()), 1),
            case("cross-entropy", lambda: (make(shape), targets(ignore_fraction=0.2)), items * n_classes,
                 expects=("_log_softmax", fwd), call=_Loss(F.cross_entropy)),
            case("cross-entropy-label-smoothing", lambda: (make(shape), targets(ignore_fraction=0.2), weight()),
                 items * n_classes, expects=("_log_softmax", fwd), call=_Loss(F.cross_entropy, label_smoothing=0.1)),
            case("cross-entropy-label-smoothing-sum", lambda: (make(shape), targets()), items * n_classes,
                 expects=("_log_softmax", fwd), call=_Loss(F.cross_entropy, "sum", label_smoothing=0.25)),
            case("cross-entropy-grad", lambda: (make(shape).requires_grad_(), targets(ignore_fraction=0.2)),
                 items * n_classes, expects=("_log_softmax", fwd, bwd, "_log_softmax_backward_data"),
                 call=_Loss(F.cross_entropy), grad=True),
            case("cross-entropy-label-smoothing-grad", lambda: (make(shape).requires_grad_(), targets(), weight()),
                 items * n_classes, expects=("_log_softmax", fwd, bwd, "_log_softmax_backward_data"),
                 call=_Loss(F.cross_entropy, label_smoothing=0.2), grad=True),
        ]
        if spatial:
            n, c = shape[:2]
            sliced = lambda: make((*shape[:3], shape[3] + 3))[..., :shape[3]]  # H and W do not merge: copied
            cases += [
                case("3d-input", lambda: (make((n, c, 7)), targets((n, 7))), n * 7),
                case("5d-input", lambda: (make((2, c, 3, 2, 4)), targets((2, 3, 2, 4))), 48),
                case("noncontiguous-channels-last", lambda: (make((n, *shape[2:], c)).permute(0, 3, 1, 2), targets())),
                case("noncontiguous-sliced", lambda: (sliced(), targets())),
                case("noncontiguous-target", lambda: (make(shape), targets((n, shape[3], shape[2])).transpose(1, 2))),
                # Sliced, not channels-last: ATen's CPU backward refuses a channels-last input.
                case("grad-noncontiguous-none", lambda: (sliced().requires_grad_(), targets(ignore_fraction=0.2),
                                                         weight()), 1, expects=both,
                     call=_Loss(F.nll_loss, "none"), grad=True),
                case("long-items", lambda: (make((1, c, 1, long_items)), targets((1, 1, long_items))), long_items),
                case("error-size-mismatch", lambda: (make(shape), targets((n, shape[2] + 1, shape[3]))), 1),
                # The overloads themselves, past F.nll_loss's own checks: ATen's checks of their arguments.
                case("error-forward-3d-input", lambda: (make(shape[:3]), targets(), None, 1, -100), 1,
                     call=torch.ops.aten.nll_loss2d_forward.default),
                case("error-forward-2d-target", lambda: (make(shape), targets(tshape[:2]), None, 1, -100), 1,
                     call=torch.ops.aten.nll_loss2d_forward.default),
                case("error-backward-grad-dims", lambda: (make(tshape[:2]), make(shape), targets(), None, 0, -100,
                                                          make(())), 1, expects=bwd, call=_BACKWARD_2D),
                case("error-backward-grad-size", lambda: (make((n, shape[2], shape[3] + 1)), make(shape), targets(),
                                                          None, 0, -100, make(())), 1, expects=bwd,
                     call=_BACKWARD_2D),
                case("error-backward-grad-not-scalar", lambda: (make((2,)), make(shape), targets(), None, 1, -100,
                                                                make(())), 1, expects=bwd, call=_BACKWARD_2D),
            ]
        else:
            cases += [
                case("1d-mean", lambda: (make((n_classes,)), targets(())), 1),
                case("1d-none-weights", lambda: (make((n_classes,)), targets(()), weight()), 1,
                     call=_Loss(F.nll_loss, "none")),
                case("1d-ignored", lambda: (make((n_classes,)), torch.tensor(-100, device=device)), 1),
                case("grad-1d", lambda: (make((n_classes,)).requires_grad_(), targets(()), weight()), 1, expects=both,
                     grad=True),
                case("1xC", lambda: (make((1, n_classes)), targets((1,))), 1),
                case("Nx1", lambda: (make((rows, 1)), targets((rows,), 1)), rows),
                case("noncontiguous-transposed", lambda: (make((n_classes, rows)).t(), targets())),
                case("noncontiguous-strided", lambda: (make((rows, 2 * n_classes))[:, ::2],
                                                       targets((rows, 2))[:, 0])),
                case("long-items", lambda: (make((long_items, 3)), targets((long_items,), 3)), long_items),
                case("grad-long-items", lambda: (make((long_items, 3)).requires_grad_(), targets((long_items,), 3)),
                     long_items, expects=both, grad=True),
                case("wide-classes-grad", lambda: (make((2, 5003)).requires_grad_(), targets((2,), 5003)), 2,
                     expects=both, grad=True),
                case("error-size-mismatch", lambda: (make(shape), targets((rows - 1,))), 1),
                case("error-input-3d-target", lambda: (make(shape), targets((rows, 2))), 1),
                # The overloads themselves, past F.nll_loss's own checks: ATen's checks of their arguments.
                case("error-forward-3d-input", lambda: (make((2, n_classes, 3)), targets((2, 3)), None, 1, -100), 1,
                     call=_FORWARD),
                case("error-backward-grad-size", lambda: (make((rows + 1,)), make(shape), targets(), None, 0, -100,
                                                          make(())), 1, expects=bwd, call=_BACKWARD),
                case("error-backward-grad-not-scalar", lambda: (make((2,)), make(shape), targets(), None, 1, -100,
                                                                make(())), 1, expects=bwd, call=_BACKWARD),
                case("error-backward-total-weight", lambda: (make(()), make(shape), targets(), None, 1, -100,
                                                             make((2,))), 1, expects=bwd, call=_BACKWARD),
                case("error-forward-1d-input-1d-target", lambda: (make((n_classes,)), targets((3,)), None, 1, -100),
                     1, call=_FORWARD),
                case("error-forward-0d-target", lambda: (make(shape), targets(()), None, 1, -100), 1, call=_FORWARD),
                case("error-forward-integer-input", lambda: (make(shape).long(), targets(), None, 1, -100), 1,
                     call=_FORWARD),
                case("error-forward-weight-dtype", lambda: (make(shape), targets(), weight().to(other), 1, -100), 1,
                     call=_FORWARD),
                case("error-backward-grad-dtype", lambda: (make(()).to(other), make(shape), targets(), None, 1,
                                                           -100, make(())), 1, expects=bwd, call=_BACKWARD),
                case("error-backward-total-weight-dtype", lambda: (make(()), make(shape), targets(), None, 1, -100,
                                                                   make(()).to(other)), 1, expects=bwd,
                     call=_BACKWARD),
                case("backward-empty", lambda: (make(()), make((0, n_classes)), targets((0,)), None, 1, -100,
                                                make(())), 1, expects=bwd, call=_BACKWARD),
            ]
        return cases

    return samples


class _OutOfRange:
    """F.nll_loss with one target replaced by ``bad`` (a class past the end, or a negative one)."""

    def __init__(self, bad, reduction="mean"):
        self.bad, self.reduction = bad, reduction

    def __repr__(self):
        return f"nll_loss(target[-1] = {self.bad}, reduction={self.reduction})"

    def __call__(self, x, target, weight=None):
        target = target.clone()
        target.view(-1)[-1] = self.bad
        return F.nll_loss(x, target, weight, reduction=self.reduction)


class _OutOfRangeBackward:
    """The backward overload called directly with a target past the last class."""

    def __init__(self, overload, n_classes):
        self.op, self.n_classes = getattr(torch.ops.aten, overload).default, n_classes

    def __repr__(self):
        return f"{self.op}(target[-1] = {self.n_classes})"

    def __call__(self, x, target):
        target = target.clone()
        target.view(-1)[-1] = self.n_classes
        total = torch.ones((), dtype=x.dtype, device=x.device)
        return self.op(torch.ones((), dtype=x.dtype, device=x.device), x, target, None, 1, -100, total)


def pointwise_loss_samples(forward, backward, target_domain=None):
    """``call(input, target, reduction=)`` for elementwise losses (mse_loss, soft_margin_loss): every
    reduction over contiguous, transposed, strided and broadcast operands, 0-d, empty, 1xN / Nx1, NaN
    and +-inf, more elements than one block, type promotion (where the loss promotes), gradients."""
    domain = target_domain or {}
    both = (forward, backward)

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        long = 10007 if quick else (1 << 22) + 3
        make = lambda s, d=dtype: make_tensor(s, d, device)
        target = lambda s, d=dtype: make_tensor(s, d, device, **domain)
        specials = lambda: special_values(dtype, device)

        def case(variant, build, size, reduction, **extra):
            extra.setdefault("expects", forward)
            return Sample(variant, build, {"reduction": reduction}, reduction_size=size, **extra)

        cases = []
        for red in ("mean", "sum", "none"):
            numel = lambda n, red=red: 1 if red == "none" else n
            suffix = "" if red == "mean" else f"-{red}"
            cases += [
                case(f"contiguous{suffix}", lambda: (make(shape), target(shape)), numel(rows * cols), red),
                case(f"noncontiguous-transposed{suffix}", lambda: (transposed(shape, dtype, device),
                                                                  target(shape[::-1]).t()), numel(rows * cols), red),
                case(f"noncontiguous-strided{suffix}", lambda: (strided(shape, dtype, device), target(shape)),
                     numel(rows * cols), red),
                case(f"broadcast{suffix}", lambda: (make(shape), target((cols,))), numel(rows * cols), red),
                case(f"0d{suffix}", lambda: (make(()), target(())), 1, red),
                case(f"empty{suffix}", lambda: (make((0, cols)), target((0, cols))), 1, red),
                case(f"special-values{suffix}", lambda: (specials(), specials().flip(0)), numel(16), red),
                case(f"long{suffix}", lambda: (make((long,)), target((long,))), numel(long), red),
                case(f"grad{suffix}", lambda: (make(shape).requires_grad_(), target(shape)), numel(rows * cols), red,
                     expects=both, grad=True),
            ]
        cases += [
            case("1xN", lambda: (make((1, cols)), target((1, cols))), cols, "mean"),
            case("Nx1", lambda: (make((cols, 1)), target((cols, 1))), cols, "sum"),
            case("grad-broadcast", lambda: (make(shape).requires_grad_(), target((cols,))), rows * cols, "mean",
                 expects=both, grad=True),
            case("grad-both", lambda: (make(shape).requires_grad_(), target(shape).requires_grad_()), rows * cols,
                 "sum", expects=both, grad=True),
            case("error-shape-mismatch", lambda: (make(shape), target((rows + 1, cols))), 1, "mean"),
        ]
        if forward == "mse_loss" and dtype != torch.float64:
            # ATen's TensorIterator promotes: an fp32 or fp64 target makes the loss wider.
            wider = torch.float64 if dtype == torch.float32 else torch.float32
            cases += [
                case("type-promotion", lambda: (make(shape), target(shape, wider)), rows * cols, "mean"),
                case("type-promotion-none", lambda: (make(shape), target(shape, wider)), 1, "none"),
            ]
        return cases

    return samples


def pointwise_loss_perf_inputs():
    """inputs(shape, dtype, device): ``loss(input, target)`` with the default mean reduction."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), make_tensor(shape, dtype, device)),
                      reduction_size=math.prod(shape))

    return inputs


def inputs_read_bytes():
    """bytes(sample, result): every tensor argument read once (the 0-d result is negligible)."""

    def bytes_moved(sample, result):
        return sum(t.numel() * t.element_size() for t in sample.args if isinstance(t, torch.Tensor))

    return bytes_moved
