"""A recorded plan's numbers as formulas of a size-generic family's variable (gems/native/generic.py runs
the dry runs): :func:`layout` splits a plan into the skeleton every probe must share and the numbers that may
change, and :func:`fit_all` fits each number to floor((a * v + b) / d) over the bucket, asking for more probes
where two candidate formulas still disagree."""

from __future__ import annotations

import inspect
import struct
from fractions import Fraction
from math import ceil, floor

import torch
import triton.language as tl
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

from gems.runtime import registration

_EXTRA_PROBES, _PER_ROUND = 48, 8
_TEST_POINTS = 1 << 16


class NoGeneric(Exception):
    """No size-generic plan for this family and bucket; the message says why."""


def _constexpr_positions(launcher) -> frozenset:
    """The positions of the kernel's tl.constexpr parameters (compiled: Triton's params; interpreted: the
    annotations of the Python function)."""
    positions = getattr(launcher, "_gems_constexprs", None)
    if positions is None:
        kernel = launcher.kernel
        while isinstance(kernel, (Autotuner, Heuristics)):
            kernel = kernel.fn
        if isinstance(kernel, JITFunction):
            positions = frozenset(i for i, p in enumerate(kernel.params) if p.is_constexpr)
        else:
            parameters = inspect.signature(kernel.fn).parameters.values()
            positions = frozenset(i for i, p in enumerate(parameters)
                                  if p.annotation is tl.constexpr or str(p.annotation).endswith("constexpr"))
        launcher._gems_constexprs = positions
    return positions


def _constant(value):
    """A comparable form of a constant argument: floats by their bits (-0.0 is not 0.0, NaN is NaN)."""
    return ("f", struct.pack("<d", value)) if type(value) is float else (type(value).__name__, value)


def layout(plan):
    """(skeleton, numbers, slots) of a plan: what two calls of a family must share, the numbers that may
    differ, and where each number sits."""
    skeleton, numbers, slots = [], [], []

    def number(slot, value):
        slots.append(slot)
        numbers.append(value)

    for out in plan.outs:
        if out[0] == 3:
            skeleton.append((3, out[1]))
            number(("oint", out[1]), out[2])
            continue
        if out[0] != 0:
            skeleton.append(out)
            continue
        _, j, shape, strides, dtype, device = out
        skeleton.append((0, j, len(shape), dtype, device))
        for d, s in enumerate(shape):
            number(("osize", j, d), s)
        for d, s in enumerate(strides):
            number(("ostride", j, d), s)
    skeleton.append(("temps", len(plan.temps)))
    for t, nbytes in enumerate(plan.temps):
        number(("temp", t), nbytes)
    for n, (launcher, _, grid, options, argspec, _) in enumerate(plan.launches):
        constexprs = _constexpr_positions(launcher)
        skeleton.append(("launch", launcher, tuple(options.items())))
        for i, g in enumerate(grid):
            number(("grid", n, i), g)
        for p, spec in enumerate(argspec):
            if spec[0] == "c":
                if type(spec[1]) is int and p not in constexprs:
                    skeleton.append(("int", p))
                    number(("arg", n, p), spec[1])
                else:
                    skeleton.append(("c", p, _constant(spec[1])))
                continue
            if spec[0] == "g":  # a probe at another size would draw: random calls get exact plans only
                raise NoGeneric("it takes Philox keys from the generator (random calls get exact plans only)")
            _, kind, index, delta, dtype, shape, strides = spec
            skeleton.append(("t", p, kind, index, dtype, len(shape)))
            number(("delta", n, p), delta)
            for d, s in enumerate(shape):
                number(("tshape", n, p, d), s)
            for d, s in enumerate(strides):
                number(("tstride", n, p, d), s)
    return skeleton, numbers, slots


def difference(expected, got) -> str:
    if len(expected) != len(got):
        return f"{len(got)} items where the first call has {len(expected)}"
    first = next(i for i, (e, g) in enumerate(zip(expected, got)) if e != g)
    return f"{got[first]!r} where the first call has {expected[first]!r}"


def formula_divisors(plan) -> list[int]:
    """Divisors a step formula may have: powers of two up to 2^16 and the launches' integer constexprs."""
    found = {1 << i for i in range(17)}
    for launcher, _, _, _, argspec, _ in plan.launches:
        constexprs = _constexpr_positions(launcher)
        found.update(s[1] for p, s in enumerate(argspec)
                     if p in constexprs and s[0] == "c" and type(s[1]) is int and 1 < s[1] <= 1 << 20)
    return sorted(found)


def _affine(vs, ys):
    """(a, b) with a * v + b == y at every probe, or None. The probes include both ends of the bucket, so
    any other formula of the family floor((a' * v + b') / d') that fits them equals it on the whole bucket:
    their difference is again such a formula, monotone in v, and zero at both ends."""
    first, last = min(range(len(vs)), key=vs.__getitem__), max(range(len(vs)), key=vs.__getitem__)
    rise, run = ys[last] - ys[first], vs[last] - vs[first]
    if rise % run:
        return None
    a = rise // run
    b = ys[first] - a * vs[first]
    return (a, b) if all(a * v + b == y for v, y in zip(vs, ys)) else None


def _candidates(vs, ys, divisors):
    """[(a, d, b_lo, b_hi)]: formulas floor((a * v + b) / d), d > 1, that give ys at vs for every b in
    [b_lo, b_hi]."""
    first, last = min(range(len(vs)), key=vs.__getitem__), max(range(len(vs)), key=vs.__getitem__)
    slope = Fraction(ys[last] - ys[first], vs[last] - vs[first])
    found = []
    for d in divisors[1:]:
        for a in sorted({floor(slope * d), ceil(slope * d)}):
            b_lo = max(d * y - a * v for v, y in zip(vs, ys))
            b_hi = min(d * y - a * v + d - 1 for v, y in zip(vs, ys))
            if b_lo <= b_hi:
                found.append((a, d, b_lo, b_hi))
    return found


def _test_points(lo, hi) -> torch.Tensor:
    if hi - lo + 1 <= _TEST_POINTS:
        return torch.arange(lo, hi + 1, dtype=torch.int64)
    half = _TEST_POINTS // 2
    return torch.unique(torch.cat([torch.arange(lo, lo + half), torch.arange(hi - half + 1, hi + 1),
                                   torch.linspace(lo, hi, _TEST_POINTS // 4, dtype=torch.float64).long()]))


def _disagreement(candidates, points):
    """A v among ``points`` where two candidate formulas differ, or None."""
    def value(a, d, b):
        return torch.div(a * points + b, d, rounding_mode="floor")

    a0, d0, b0, _ = candidates[0]
    reference = value(a0, d0, b0)
    for a, d, b_lo, b_hi in candidates:
        for b in (b_lo, b_hi):
            differs = torch.nonzero(value(a, d, b) != reference)
            if differs.numel():
                return int(points[differs[differs.numel() // 2, 0]])
    return None


def fit_all(points, slots, lo, hi, divisors, probe):
    """One (a, b, d) per slot, probing more sizes (``probe(v)`` -> numbers) until each fit is unique."""
    tests = None  # made when two step formulas must be compared
    extra = 0
    while True:
        formulas, wanted = [], set()
        vs = list(points)
        for s, slot in enumerate(slots):
            ys = [points[v][s] for v in vs]
            if any(type(y) is not int for y in ys):
                raise NoGeneric(f"{_slot_name(slot)} is not an integer")
            affine = _affine(vs, ys)
            if affine is not None:
                if abs(affine[0]) * hi + abs(affine[1]) > 1 << 62:
                    raise NoGeneric(f"{_slot_name(slot)} is too large")
                formulas.append((affine[0], affine[1], 1))
                continue
            candidates = _candidates(vs, ys, divisors)
            if not candidates:
                raise NoGeneric(f"{_slot_name(slot)} is not floor((a * v + b) / d) over sizes {lo}..{hi}")
            a, d, b, b_hi = candidates[0]
            if max(abs(a) * hi + abs(b), abs(b_hi)) > 1 << 62:
                raise NoGeneric(f"{_slot_name(slot)} is too large")
            if len(candidates) == 1 and b == b_hi:
                where = None
            else:
                with registration.aten_only():  # this module's own arithmetic is not a call of the user's
                    tests = _test_points(lo, hi) if tests is None else tests
                    where = _disagreement(candidates, tests)
            if where is None:
                formulas.append((a, b, d))
            else:
                wanted.add(where)
        if not wanted:
            return formulas
        if extra >= _EXTRA_PROBES:
            raise NoGeneric(f"the size-dependent numbers are still ambiguous after {extra} extra probes")
        for v in sorted(wanted)[:_PER_ROUND]:
            points[v] = probe(v)
            extra += 1


def _slot_name(slot) -> str:
    names = {"osize": "output {} size {}", "ostride": "output {} stride {}", "oint": "integer result {}",
             "temp": "temporary buffer {} bytes",
             "grid": "launch {} grid dim {}", "arg": "launch {} argument {}", "delta": "launch {} argument {} offset",
             "tshape": "launch {} argument {} size {}", "tstride": "launch {} argument {} stride {}"}
    return names[slot[0]].format(*slot[1:])
