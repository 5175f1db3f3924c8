"""Sample generators and perf inputs for the fused operators (gems.fused, gems/ops/fused/), with the
signature ``samples(dtype, device, quick)``. Each operator's reference (its eager composite) computes
ATen's result and the float64 oracle, and its gradients (the "grad*" variants) those of the operator's own
backward kernels.
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for, strided, transposed
from gems.testing.samples_norm import (
    FULL_3D,
    FULL_LONG_ROW,
    FULL_MANY_ROWS,
    QUICK_3D,
    QUICK_LONG_ROW,
    QUICK_MANY_ROWS,
    case_maker,
    norm_special_rows,
    rg,
)


def _norm_cases(case, quick, args):
    """The variants every fused norm shares; ``args(shape)`` gives the arguments for rows of that shape
    (and ``args(shape, grad=True)`` with every floating input requiring grad)."""
    rows, cols = shape = shape_for(quick)
    shape3 = QUICK_3D if quick else FULL_3D
    long = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    many = QUICK_MANY_ROWS if quick else FULL_MANY_ROWS
    return [
        case("contiguous", lambda: args(shape), cols),
        case("3d", lambda: args(shape3), shape3[-1]),
        case("row-of-one", lambda: args((rows, 1)), 1),
        case("1xN", lambda: args((1, cols)), cols),
        case("long-rows", lambda: args((3, long)), long),
        case("empty", lambda: args((0, cols)), cols),
        case("eps", lambda: args(shape), cols, {"eps": 0.25}),
        case("grad", lambda: args(shape, grad=True), max(shape), grad=True),
        case("grad-3d", lambda: args(shape3, grad=True), max(shape3), grad=True),
        case("grad-long-rows", lambda: args((3, long), grad=True), long, grad=True),
        case("grad-many-rows", lambda: args((many, cols), grad=True), many, grad=True),
    ]


def rms_norm_samples():
    """fused_rms_norm(x, weight, eps=, weight_offset=)."""

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        make = lambda s: make_tensor(s, dtype, device)
        case = case_maker(None)

        def args(shape, grad=False):
            mark = rg if grad else (lambda t: t)
            return mark(make(shape)), mark(make(shape[-1:]))

        return _norm_cases(case, quick, args) + [
            case("no-weight", lambda: (make(shape),), cols),
            case("weight-offset", lambda: args(shape), cols, {"weight_offset": 1.0}),
            case("noncontiguous", lambda: (transposed(shape, dtype, device), make((cols,))), cols),
            case("special-values", lambda: (norm_special_rows(dtype, device), make((6,))), 6),
            case("error-weight-shape", lambda: (make(shape), make((cols + 1,))), 1),
            case("grad-weight-offset", lambda: args(shape, grad=True), max(shape), {"weight_offset": 1.0},
                 grad=True),
            case("grad-no-weight", lambda: (rg(make(shape)),), cols, grad=True),
            case("grad-input-only", lambda: (rg(make(shape)), make((cols,))), cols, grad=True),
            case("grad-noncontiguous", lambda: (rg(transposed(shape, dtype, device)), rg(make((cols,)))), max(shape),
                 grad=True),
        ]

    return samples


def residual_norm_samples(kind):
    """fused_add_rms_norm(x, residual, weight, eps=, weight_offset=) (kind "rms") and skip_layer_norm(x,
    skip, weight, bias, eps=) (kind "layer"). Gradient cases give both outputs (y and the sum s) a
    gradient, as a transformer block does."""

    def samples(dtype, device, quick):
        rows, cols = shape = shape_for(quick)
        make = lambda s: make_tensor(s, dtype, device)
        params = lambda n: (make((n,)),) if kind == "rms" else (make((n,)), make((n,)))
        case = case_maker(None)

        def args(shape, grad=False):
            mark = rg if grad else (lambda t: t)
            return (mark(make(shape)), mark(make(shape)), *map(mark, params(shape[-1])))

        cases = _norm_cases(case, quick, args) + [
            case("no-weight", lambda: (make(shape), make(shape), None), cols),
            case("noncontiguous", lambda: (transposed(shape, dtype, device), strided(shape, dtype, device),
                                           *params(cols)), cols),
            case("noncontiguous-permuted", lambda: (make((5, 3, 7)).permute(1, 0, 2), make((3, 5, 7)), *params(7)), 7),
            case("special-values", lambda: (norm_special_rows(dtype, device), make((8, 6)), *params(6)), 6),
            case("error-shape-mismatch", lambda: (make(shape), make((rows, cols + 1)), *params(cols)), 1),
            case("error-weight-shape", lambda: (make(shape), make(shape), *params(cols + 1)), 1),
            case("grad-input-only", lambda: (rg(make(shape)), make(shape), *params(cols)), cols, grad=True),
            case("grad-residual-only", lambda: (make(shape), rg(make(shape)), *params(cols)), cols, grad=True),
            case("grad-noncontiguous", lambda: (rg(transposed(shape, dtype, device)), rg(strided(shape, dtype, device)),
                                                *map(rg, params(cols))), max(shape), grad=True),
        ]
        if kind == "rms":
            cases += [case("weight-offset", lambda: args(shape), cols, {"weight_offset": 1.0}),
                      case("grad-weight-offset", lambda: args(shape, grad=True), max(shape), {"weight_offset": 1.0},
                           grad=True)]
        return cases

    return samples


def rms_norm_inputs():
    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), make_tensor(shape[-1:], dtype, device)),
                      reduction_size=shape[-1])

    return inputs


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
    """silu_and_mul(x[, up]) / gelu_and_mul(x[, up], approximate=): the halves form and the gate-and-up
    form; extra {name: kwargs} adds variants with kwargs."""

    def samples(dtype, device, quick):
        rows, cols = shape_for(quick)
        shape = (rows, 2 * cols)
        half = (rows, cols)
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
            case("gate-up", lambda: (make(half), make(half)), 1),
            case("gate-up-3d", lambda: (make((3, 5, 7)), make((3, 5, 7))), 1),
            case("gate-up-noncontiguous", lambda: (transposed(half, dtype, device), strided(half, dtype, device)), 1),
            case("gate-up-empty", lambda: (make((0, cols)), make((0, cols))), 1),
            case("error-odd-last-dim", lambda: (make((rows, 2 * cols + 1)),), 1),
            case("error-0d", lambda: (make(()),), 1),
            case("error-up-shape", lambda: (make(half), make((rows, cols + 1))), 1),
            case("grad", lambda: (rg(make(shape)),), 1, grad=True),
            case("grad-3d", lambda: (rg(make((3, 5, 14))),), 1, grad=True),
            case("grad-noncontiguous", lambda: (rg(transposed(shape, dtype, device)),), 1, grad=True),
            case("grad-gate-up", lambda: (rg(make(half)), rg(make(half))), 1, grad=True),
            case("grad-gate-up-noncontiguous", lambda: (rg(transposed(half, dtype, device)),
                                                        rg(strided(half, dtype, device))), 1, grad=True),
            case("grad-gate-only", lambda: (rg(make(half)), make(half)), 1, grad=True),
            case("grad-empty", lambda: (rg(make((0, 2 * cols))),), 1, grad=True),
        ]
        for name, kwargs in extra.items():
            cases += [case(name, lambda: (make(shape),), 1, kwargs),
                      case(f"{name}-special-values", lambda: (_gated_special(dtype, device),), 1, kwargs),
                      case(f"{name}-gate-up", lambda: (make(half), make(half)), 1, kwargs),
                      case(f"{name}-grad", lambda: (rg(make(shape)),), 1, kwargs, grad=True),
                      case(f"{name}-grad-gate-up", lambda: (rg(make(half)), rg(make(half))), 1, kwargs, grad=True)]
        return cases

    return samples


def gated_inputs():
    """(gate, up) of [rows, d] each for a shape [rows, 2 * d], as a transformer's MLP gives them."""

    def inputs(shape, dtype, device):
        half = (*shape[:-1], shape[-1] // 2)
        return Sample("perf", (make_tensor(half, dtype, device), make_tensor(half, dtype, device)))

    return inputs


def _angles(seq, half, dtype, device, batch=None):
    """(cos, sin) of position * frequency, as RoPE tables are built: (seq, half), or with ``batch`` one
    table per sequence, (batch, seq, half), sequence b starting at position 3 * b (left padding)."""
    shape = (seq, half) if batch is None else (batch, seq, half)
    if str(device) == "meta":
        return (torch.empty(shape, dtype=dtype, device="meta"),) * 2
    freqs = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float64) / max(half, 1)))
    positions = torch.arange(seq, dtype=torch.float64)
    if batch is not None:
        positions = positions + 3 * torch.arange(batch, dtype=torch.float64)[:, None]
    theta = positions[..., None] * freqs
    return theta.cos().to(dtype).to(device), theta.sin().to(dtype).to(device)


def rope_samples():
    def samples(dtype, device, quick):
        make = lambda s: make_tensor(s, dtype, device)
        batch, seq, heads, dim = (2, 5, 3, 8) if quick else (4, 129, 8, 128)
        x4 = (batch, seq, heads, dim)
        angles = lambda s=seq, d=dim, b=None: _angles(s, d // 2, dtype, device, b)
        # Hugging Face's query: (batch, heads, seq, dim) memory from the projection, seen as (batch, seq, heads, dim).
        hf_query = lambda: make((batch, seq, heads, dim)).transpose(1, 2).contiguous().transpose(1, 2)
        case = case_maker(None)
        cases = []
        for layout, kwargs in (("neox", {}), ("gptj", {"interleaved": True})):
            cases += [
                case(f"{layout}-contiguous", lambda: (make(x4), *angles()), 1, kwargs),
                case(f"{layout}-3d", lambda: (make((seq, heads, dim)), *angles()), 1, kwargs),
                case(f"{layout}-5d", lambda: (make((2, batch, seq, heads, dim)), *angles()), 1, kwargs),
                case(f"{layout}-one-pair", lambda: (make((batch, seq, heads, 2)), *angles(seq, 2)), 1, kwargs),
                case(f"{layout}-many-rows", lambda: (make((2, 64, 8, 64)), *angles(64, 64)), 1, kwargs),
                case(f"{layout}-per-sequence", lambda: (make(x4), *angles(b=batch)), 1, kwargs),
                case(f"{layout}-noncontiguous-transposed",
                     lambda: (make((batch, heads, seq, dim)).transpose(1, 2), *angles()), 1, kwargs),
                case(f"{layout}-noncontiguous-strided",
                     lambda: (make((batch, seq, heads, 2 * dim))[..., ::2],
                              *(t.t().contiguous().t() for t in angles())), 1, kwargs),
                case(f"{layout}-empty", lambda: (make((batch, 0, heads, dim)), *angles(0)), 1, kwargs),
                case(f"{layout}-special-values",
                     lambda: (norm_special_rows(dtype, device)[:, :4].reshape(2, 4, 1, 4), *angles(4, 4)), 1, kwargs),
                case(f"{layout}-grad", lambda: (rg(make(x4)), *angles()), 1, kwargs, grad=True),
                case(f"{layout}-grad-transposed", lambda: (rg(make((batch, heads, seq, dim))).transpose(1, 2),
                                                           *angles(b=batch)), 1, kwargs, grad=True),
            ]
        cases += [
            case("hf-layout-batch-of-one", lambda: (hf_query(), *angles(b=1)), 1),
            case("grad-hf-layout", lambda: (rg(hf_query()), *angles(b=batch)), 1, grad=True),
            case("grad-empty", lambda: (rg(make((batch, 0, heads, dim))), *angles(0)), 1, grad=True),
            case("error-odd-head-dim", lambda: (make((batch, seq, heads, 7)), *angles(seq, 8)), 1),
            case("error-angles-shape", lambda: (make(x4), *angles(seq + 1)), 1),
            case("error-angles-batch", lambda: (make(x4), *angles(b=batch + 1)), 1),
            case("error-2d", lambda: (make((seq, dim)), *angles()), 1),
        ]
        return cases

    return samples


def rope_inputs():
    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), *_angles(shape[-3], shape[-1] // 2, dtype, device)))

    return inputs


def _labels(shape, vocab, device, ignore_index=-100):
    """Random targets in [0, vocab), about one in five ignored."""
    if str(device) == "meta":
        return torch.empty(shape, dtype=torch.int64, device="meta")
    labels = torch.randint(0, vocab, shape)
    labels[torch.rand(shape) < 0.2] = ignore_index
    return labels.to(device)


def linear_cross_entropy_samples():
    """linear_cross_entropy(hidden, weight, labels, ignore_index=, reduction=): one chunk and several (40
    tokens of a 300-word vocabulary make 4 chunks of the interpreter's 4K logits; quick mode's 20, two),
    ignored labels, both reductions."""

    def samples(dtype, device, quick):
        tokens, hidden = shape_for(quick)
        vocab, big, many = 37, 300, 20 if quick else 40
        # Logits within +-2 or so; the many-chunk gradients use the sum, whose dW (about 1e-2) is far from
        # fp16's underflow, where the sign of a rounded-off zero would be decided by the order of the sum.
        make = lambda s: make_tensor(s, dtype, device, low=-0.5, high=0.5)
        case = case_maker(None)

        def args(n=tokens, v=vocab, lead=(), grad=(True, True), ignore=-100):
            h, w = make((*lead, n, hidden)), make((v, hidden))
            return (rg(h) if grad[0] else h, rg(w) if grad[1] else w, _labels((*lead, n), v, device, ignore))

        size = max(many, hidden, big)
        total = {"reduction": "sum"}
        return [
            case("contiguous", lambda: args(grad=(False, False)), size),
            case("many-chunks", lambda: args(n=many, v=big, grad=(False, False)), size),
            case("sum", lambda: args(grad=(False, False)), size, total),
            case("ignore-index", lambda: args(grad=(False, False), ignore=3), size, {"ignore_index": 3}),
            case("all-ignored", lambda: (make((tokens, hidden)), make((vocab, hidden)),
                                         torch.full((tokens,), -100, dtype=torch.int64, device=device)), size),
            case("noncontiguous", lambda: (transposed((tokens, hidden), dtype, device, low=-0.5, high=0.5),
                                           transposed((vocab, hidden), dtype, device, low=-0.5, high=0.5),
                                           _labels((tokens,), vocab, device)), size),
            case("empty", lambda: args(n=0, grad=(False, False)), size),
            case("grad", lambda: args(), size, grad=True),
            case("grad-3d", lambda: args(n=5, lead=(3,)), size, grad=True),
            case("grad-many-chunks", lambda: args(n=many, v=big), size, total, grad=True),
            case("grad-sum", lambda: args(), size, total, grad=True),
            case("grad-hidden-only", lambda: args(grad=(True, False)), size, grad=True),
            case("grad-weight-only", lambda: args(grad=(False, True)), size, total, grad=True),
            case("grad-empty", lambda: args(n=0), size, grad=True),
            case("error-labels-shape", lambda: (make((tokens, hidden)), make((vocab, hidden)),
                                                _labels((tokens + 1,), vocab, device)), 1),
            case("error-weight-shape", lambda: (make((tokens, hidden)), make((vocab, hidden + 1)),
                                                _labels((tokens,), vocab, device)), 1),
            case("error-reduction", lambda: args(grad=(False, False)), 1, {"reduction": "none"}),
        ]

    return samples


def linear_cross_entropy_inputs():
    """shape [tokens, hidden, vocab]: a language model's head over that many tokens."""

    def inputs(shape, dtype, device):
        tokens, hidden, vocab = shape
        return Sample("perf", (make_tensor((tokens, hidden), dtype, device, low=-1.0, high=1.0),
                               make_tensor((vocab, hidden), dtype, device, low=-0.1, high=0.1),
                               _labels((tokens,), vocab, device)), reduction_size=max(hidden, vocab))

    return inputs


def linear_cross_entropy_bytes():
    """hidden and weight read once, the labels read (the chunks' logits stay in L2 or are counted as compute)."""

    def bytes_moved(sample, result):
        return tensor_bytes(*sample.args)

    return bytes_moved


def linear_cross_entropy_flops():
    def flops(sample, result):
        hidden, weight, _ = sample.args
        return 2 * hidden.numel() * weight.shape[0]

    return flops
