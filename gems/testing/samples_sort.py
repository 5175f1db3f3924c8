"""Samples for sort and topk (gems/ops/sorting), and the check of index outputs whose order among
equal values is unspecified.

ATen's unstable sort and its topk may put tied values' indices in any order, and do (the CPU oracle's
unstable sort is not stable). Such samples carry ``tie_check``: their values are compared with the
oracle as usual, and their indices must be a valid answer: in range, naming for every position the
input element whose value (bit for bit) stands there, and all different (a permutation of the row for
sort). Stable sorts are compared with the oracle's indices exactly.
"""

from __future__ import annotations

import torch

from gems.spec import Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, special_values, strided, transposed

QUICK_LONG = 4500  # more than bitonic.SINGLE_MAX (4096): the chunked sort and its merge passes
FULL_LONG = 2**17
FEW_ROW_LENGTH = 2500  # over bitonic.ONE_WARP_LANES, under SINGLE_MAX, not a multiple of a chunk
# The quick suite runs the long rows (about 2 s a case on the interpreter) in one dtype per key width and kind
# that the merge passes see (16-bit float, 32-bit float, 64-bit integer); the short rows cover every dtype's keys.
QUICK_LONG_DTYPES = (torch.float16, torch.float32, torch.int64)


def _bits(t: torch.Tensor) -> torch.Tensor:
    """Integer bits of a float tensor (NaN keeps its payload), the tensor itself otherwise."""
    if t.dtype.is_floating_point:
        width = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
        return t.view(width)
    return t


def tie_check(dim: int, permutation: bool):
    """check(args, kwargs, outputs) -> '' when outputs' (values, indices) are a valid answer of a sort
    (``permutation``) or topk of args[0] along ``dim``, else what is wrong."""

    def check(args, kwargs, outputs):
        x, (values, indices) = args[0], outputs[-2:]
        if values.dtype != x.dtype or indices.dtype != torch.int64:
            return f"dtypes {values.dtype}, {indices.dtype}; expected {x.dtype}, torch.int64"
        if x.dim() == 0:
            return "" if indices.item() == 0 and torch.equal(_bits(values), _bits(x)) else "0-d result is not x, 0"
        n = x.shape[dim]
        if indices.numel() == 0:
            return ""
        if bool(((indices < 0) | (indices >= n)).any()):
            return f"indices outside [0, {n})"
        if not torch.equal(_bits(x.gather(dim, indices)), _bits(values)):
            wrong = (_bits(x.gather(dim, indices)) != _bits(values)).sum().item()
            return f"{wrong} of {values.numel()} values are not the input element their index names"
        ordered = indices.sort(dim).values
        if permutation:
            shape = [1] * x.dim()
            shape[dim] = n
            if not torch.equal(ordered, torch.arange(n).view(shape).expand_as(ordered)):
                return "indices are not a permutation of each row"
        elif n and bool((ordered.narrow(dim, 1, ordered.shape[dim] - 1) ==
                         ordered.narrow(dim, 0, ordered.shape[dim] - 1)).any()):
            return "an index appears twice in a row"
        return ""

    return check


class _OutCall:
    """``op(*args, out=(values, indices))`` into fresh tensors (strided: every other element of wider ones)."""

    def __init__(self, op, strided_out):
        self.op, self.strided = op, strided_out

    def __repr__(self):
        return f"{self.op.__name__}(out={'strided' if self.strided else 'fresh'})"

    def __call__(self, x, *args, **kwargs):
        values, _ = self.op(torch.empty_like(x, device="meta"), *args, **kwargs)
        shape = list(values.shape)

        def fresh(dtype):
            if not self.strided or not shape:
                return torch.empty(0, dtype=dtype, device=x.device)
            return torch.empty(shape[:-1] + [shape[-1] * 2], dtype=dtype, device=x.device)[..., ::2]

        return self.op(x, *args, **kwargs, out=(fresh(x.dtype), fresh(torch.int64)))


def ties_and_specials(dtype, device, rows=3, cols=40):
    """Rows mixing NaN, infinities, both zeros and repeated values in shuffled places (generator-seeded)."""
    specials = special_values(dtype, "cpu")
    picks = torch.randint(0, specials.numel(), (rows, cols))
    x = specials[picks]
    if dtype.is_floating_point:
        x[0, ::3] = -0.0  # a row of many tied zeros of both signs: stable order keeps them in place
        x[0, 1::3] = 0.0
    return x.to(device)


def _layouts(make, dtype, device, shape, shape3):
    """(variant suffix, builder of x, dim) of the layouts every sort-like op is tried on."""
    rows, cols = shape
    return [
        ("", lambda: make(shape), 1),
        ("-dim0", lambda: make(shape), 0),
        ("-3d-middle", lambda: make(shape3), 1),
        ("-3d-dim-3", lambda: make(shape3), -3),
        ("-transposed", lambda: transposed(shape, dtype, device), 1),
        ("-strided", lambda: strided(shape, dtype, device), 1),
        ("-permuted", lambda: make((2, 3, 4, 5)).permute(3, 1, 0, 2), 1),
        ("-1xN", lambda: make((1, cols)), 1),
        ("-Nx1", lambda: make((cols, 1)), 0),
        ("-Nx1-dim1", lambda: make((cols, 1)), 1),
        ("-ties", lambda: make(shape, int_low=-3, int_high=3, low=-2, high=2).round() if dtype.is_floating_point
         else make(shape, int_low=-3, int_high=3), 1),
        ("-specials", lambda: ties_and_specials(dtype, device), 1),
        ("-specials-dim0", lambda: ties_and_specials(dtype, device).t(), 0),
    ]


def sort_samples():
    return _sort_samples


def _sort_samples(dtype, device, quick):
    shape, shape3 = ((13, 17), (3, 19, 5)) if quick else ((257, 1023), (16, 1000, 9))
    long = QUICK_LONG if quick else FULL_LONG
    make = lambda s, **domain: make_tensor(s, dtype, device, **domain)
    cases = []
    for suffix, build, dim in _layouts(make, dtype, device, shape, shape3):
        cases += [
            Sample(f"stable{suffix}", lambda b=build: (b(),), {"dim": dim, "stable": True}, expects="sort.stable"),
            Sample(f"stable-descending{suffix}", lambda b=build: (b(),),
                   {"dim": dim, "stable": True, "descending": True}, expects="sort.stable"),
            Sample(f"unstable{suffix}", lambda b=build, d=dim: (b(), d), expects="sort",
                   tie_check=tie_check(dim, True)),
            Sample(f"unstable-descending{suffix}", lambda b=build, d=dim: (b(), d, True), expects="sort",
                   tie_check=tie_check(dim, True)),
        ]
    stable = {"stable": True}
    if not quick or dtype in QUICK_LONG_DTYPES:
        cases += [
            Sample("stable-long-row", lambda: (make((2, long)),), stable, expects="sort.stable"),
            Sample("stable-descending-long-middle", lambda: (make((1, long, 2)),),
                   {**stable, "dim": 1, "descending": True}, expects="sort.stable"),
            Sample("unstable-long-row-ties", lambda: (make((1, long), int_low=-5, int_high=5),), expects="sort",
                   tie_check=tie_check(-1, True)),
        ]
    # a few rows of ONE_WARP_LANES..SINGLE_MAX: one-warp chunks and merge passes (bitonic.FEW_ROWS)
    cases += [
        Sample("stable-few-rows", lambda: (make((3, FEW_ROW_LENGTH)),), stable, expects="sort.stable"),
        Sample("stable-descending-few-rows-ties", lambda: (make((FEW_ROW_LENGTH, 2), int_low=-5, int_high=5),),
               {**stable, "dim": 0, "descending": True}, expects="sort.stable"),
    ]
    cases += [
        Sample("stable-0d", lambda: (make(()),), stable, expects="sort.stable"),
        Sample("unstable-0d-dim0", lambda: (make(()), 0), expects="sort", tie_check=tie_check(0, True)),
        Sample("stable-empty", lambda: (make((0, shape[1])),), stable, expects="sort.stable"),
        Sample("stable-empty-sorted-dim", lambda: (make((shape[0], 0)),), stable, expects="sort.stable"),
        Sample("out-stable", lambda: (make(shape),), stable, expects="sort.values_stable",
               call=_OutCall(torch.sort, False)),
        Sample("out-stable-strided", lambda: (make(shape),), {**stable, "descending": True},
               expects="sort.values_stable", call=_OutCall(torch.sort, True)),
        Sample("out-unstable", lambda: (make(shape), 0), expects="sort.values", call=_OutCall(torch.sort, False),
               tie_check=tie_check(0, True)),
        Sample("argsort-stable", lambda: (make(shape, int_low=-3, int_high=3),), {"dim": 1, "stable": True},
               call=torch.argsort, expects="sort.stable"),
        Sample("error-dim-out-of-range", lambda: (make(shape), 2), expects="sort"),
        Sample("error-out-dtype", lambda: (make(shape),), {"out": (torch.empty(0, dtype=torch.float64 if dtype !=
               torch.float64 else torch.float32, device=device), torch.empty(0, dtype=torch.int64, device=device))},
               expects="sort.values"),
    ]
    if not quick:
        cases.append(Sample("stable-many-rows", lambda: (make((4096, 1024)),), stable, expects="sort.stable"))
    return cases


def topk_samples():
    return _topk_samples


def _topk_samples(dtype, device, quick):
    shape, shape3 = ((13, 17), (3, 19, 5)) if quick else ((257, 1023), (16, 1000, 9))
    long = QUICK_LONG if quick else FULL_LONG
    make = lambda s, **domain: make_tensor(s, dtype, device, **domain)

    def case(variant, build, k, dim, **kwargs):
        return Sample(variant, lambda: (build(), k, dim), kwargs, expects="topk", tie_check=tie_check(dim, False))

    cases = []
    for suffix, build, dim in _layouts(make, dtype, device, shape, shape3):
        n = {"": shape[1], "-dim0": shape[0], "-3d-middle": shape3[1], "-3d-dim-3": shape3[0], "-transposed":
             shape[1], "-strided": shape[1], "-permuted": 3, "-1xN": shape[1], "-Nx1": shape[1], "-Nx1-dim1": 1,
             "-ties": shape[1], "-specials": 40, "-specials-dim0": 40}[suffix]
        for k in sorted({1, min(5, n), n}):
            cases.append(case(f"largest-k{'n' if k == n and k > 5 else k}{suffix}", build, k, dim))
        cases.append(case(f"smallest-k{min(3, n)}{suffix}", build, min(3, n), dim, largest=False))
    if not quick or dtype in QUICK_LONG_DTYPES:
        cases += [
            case("largest-k64-long-row", lambda: make((2, long)), 64, 1),
            case("smallest-k7-long-middle", lambda: make((1, long, 2)), 7, 1, largest=False),
        ]
    cases += [
        case("k1-0d", lambda: make(()), 1, 0),
        case("k0-0d", lambda: make(()), 0, -1),
        case("k0", lambda: make(shape), 0, 1),
        case("empty-rows", lambda: make((0, shape[1])), 3, 1),
        case("empty-k0", lambda: make((shape[0], 0)), 0, 1),
        Sample("out", lambda: (make(shape), 4, 1), expects="topk.values", call=_OutCall(torch.topk, False),
               tie_check=tie_check(1, False)),
        Sample("out-strided-smallest", lambda: (make(shape), 4, 0, False), expects="topk.values",
               call=_OutCall(torch.topk, True), tie_check=tie_check(0, False)),
        Sample("error-k-too-large", lambda: (make(shape), shape[1] + 1, 1), expects="topk"),
        Sample("error-k-negative", lambda: (make(shape), -1, 1), expects="topk"),
        Sample("error-k-0d", lambda: (make(()), 2), expects="topk"),
        Sample("error-dim-out-of-range", lambda: (make(shape), 1, 2), expects="topk"),
    ]
    if not quick:
        cases.append(case("largest-k64-many-rows", lambda: make((4096, 1024)), 64, 1))
    return cases


def sort_perf_inputs():
    """inputs(shape, dtype, device): ``torch.sort(x, -1)`` of a (rows, cols) tensor."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), -1), tie_check=tie_check(-1, True))

    return inputs


def topk_perf_inputs(k=64):
    """inputs(shape, dtype, device): ``torch.topk(x, min(k, cols), -1)`` (the largest k, sorted)."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), min(k, shape[-1]), -1),
                      tie_check=tie_check(-1, False))

    return inputs


def io_bytes():
    """bytes(sample, result): the input read once and both results written once."""

    def bytes_moved(sample, result):
        return tensor_bytes(sample.args[0], *result)

    return bytes_moved

