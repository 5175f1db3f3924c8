"""Size-generic plans: one recorded plan for the calls of a family whose sizes move together.

A decode loop calls the same operators with a key length that grows by one each step, so every call is
a new signature and an exact plan per signature would send each one through Python first. A *family*
is the calls whose keys agree on every word but tensor sizes, strides and integer arguments (dtypes,
ranks, alignment, other scalars, aliasing and global state stay exact). When a second member of a
family is recorded, :func:`observe` tries to derive one plan for a range of the family:

1. **One variable.** Every word that differs between the two calls must be integer-affine in one of
   them, v (word_i = a_i * v + b_i). The plan covers v's power-of-two bucket (2^(k-1), 2^k], narrowed
   around v by bisection where the launches change inside it (a choice made on v plus an offset), and
   only calls that keep these relations (C++ checks every word).
2. **Dry runs.** The implementation runs at other values of v on fresh tensors of the sizes the
   relations give, its launches recorded and not executed, any ATen op that computes stopping it:
   both ends of the bucket, one value per residue mod 16, spread values, then wherever two formulas
   that fit so far disagree (at most 48 more). A bucket of at most 48 sizes is probed whole.
3. **Same structure.** Every probe must launch the same kernels with the same constexprs, options,
   float and bool arguments, dtypes and tensor roles, and make the same outputs; only numbers change.
4. **Numbers as formulas.** Each number that changes (grid dims, integer arguments, offsets, shapes and
   strides of tensor arguments, output sizes and strides, temporary bytes) must fit
   floor((a * v + b) / d) at every probe, with a single answer over the bucket: the candidates are
   compared at every v of the bucket (at 2^16 points of a larger one, among them both ends' 2^15
   neighbours) and probed where they differ.
5. **Triton's specialization.** The anchor's kernels were compiled for its integer arguments (equal to 1;
   divisible by 16 and 32-bit) and pointer alignments: C++ checks that a call's computed numbers
   specialize alike, else the call takes Python (which records it, and may derive that class's plan).

What it assumes, and why it is safe enough to be on by default: an implementation's decisions are
functions of sizes that are piecewise constant with steps the probes see (thresholds are monotone or
periodic with a period dividing 16: a choice valid at both ends of a bucket and at every residue is
valid inside it). gems' heuristics and launchers fit that. A decision outside it (a threshold between
two probes that reverts before the next) would replay a wrong plan: ``GEMS_NATIVE_GENERIC=0`` turns
size-generic plans off, and conformance's warm calls run through them whenever a case's family was
seen before. Anything else (a float that depends on the size such as a mean's 1/n, a number no formula
fits, a probe over 1 GiB, a call during CUDA graph capture) leaves the family on exact plans, and
``gems.native.python_reasons()`` says why.
"""

from __future__ import annotations

import inspect
import os
import random
import struct
from fractions import Fraction
from math import ceil, floor

import torch
import triton.language as tl
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

from gems.native import record
from gems.runtime import registration

_FIXED, _SIZE, _STRIDE, _INT, _INT_ITEM = range(5)  # dispatch.cpp's WordKind
_MIN_V = 5  # the buckets below, (2, 4] and less, hold too few sizes to be worth a plan
_WHOLE_BUCKET = 48  # probe every size of a bucket this small
_EXTRA_PROBES, _PER_ROUND = 48, 8
_TEST_POINTS = 1 << 16
_PROBE_BYTES = 1 << 30
_MAX_FAMILIES = 4096
_MEMBERS = 4  # recent calls kept per family: a decode step records its key and value cache appends alike
# dispatch.cpp's TargetKind
_GRID, _PARAM, _PATCH, _OUT_SIZE, _OUT_STRIDE, _TEMP, _OUT_INT = 0, 3, 4, 5, 6, 7, 8

# (overload, key with its variable words left out) -> the words of its latest recorded calls, newest first
_families: dict = {}
# (family, variable, relations) -> [(lo, hi, why)]: ranges where a derivation failed, not tried again (each try
# runs the implementation dozens of times)
_failures: dict = {}


class NoGeneric(Exception):
    """No size-generic plan for this family and bucket; the message says why."""


class StructureChanged(NoGeneric):
    """A probe launched other kernels, constexprs or outputs than the anchor call."""


def enabled() -> bool:
    return os.environ.get("GEMS_NATIVE_GENERIC", "1") != "0"


def forget() -> None:
    _families.clear()
    _failures.clear()


def observe(overload, call, plan, args, kwargs, primitive):
    """After a call recorded as ``plan``: (size-generic spec or None, why the call took Python)."""
    _, words_bytes, descs_bytes, _ = call
    n = len(words_bytes) // 8
    words = struct.unpack(f"<{n}q", words_bytes)
    descs = struct.unpack(f"<{n}I", descs_bytes)
    family = (overload, tuple(w if d & 15 == _FIXED else None for w, d in zip(words, descs)))
    members = _families.pop(family, [])
    if len(_families) >= _MAX_FAMILIES:
        forget()
    _families[family] = [words, *members[:_MEMBERS - 1]]
    if not members or not enabled():
        return None, record.NEW_SIGNATURE
    previous = _partner(words, descs, members)
    try:
        spec = _derive(family, overload, call[0], words, descs, previous, plan, args, kwargs, primitive)
        return spec, record.NEW_SIGNATURE
    except NoGeneric as why:
        return None, f"a new size of a family with no size-generic plan: {why}"
    except Exception as exc:  # the call itself succeeded: a failed derivation only costs the plan
        return None, f"a new size of a family with no size-generic plan: a gems bug ({type(exc).__name__}: {exc})"


def _partner(words, descs, members):
    """The member of the family (newest first) that a new call is derived with: the one whose varying words
    include a size, differing from the call in the fewest words, the newest of those. Calls of one family can
    differ in a size-one dim's stride (a decode step appends a fresh key row and a transposed view of the value
    projection: both [b, heads, 1, d]): a call paired with such a neighbour would vary that stride alone."""
    def rank(age):
        free = [i for i, (w, p) in enumerate(zip(words, members[age])) if w != p]
        return (not free, all(descs[i] & 15 == _STRIDE for i in free), len(free), age)

    return members[min(range(len(members)), key=rank)]


def _derive(family, overload, tensors, words, descs, previous, plan, args, kwargs, primitive):
    free = [i for i, (w, p) in enumerate(zip(words, previous)) if w != p]
    if not free:
        raise NoGeneric("the same signature was recorded again (its exact plan was replaced)")
    var = min(free, key=lambda i: (descs[i] & 15 == _STRIDE, abs(words[i] - previous[i]), i))
    step = words[var] - previous[var]
    a, b = [0] * len(words), list(words)
    for i in free:
        if (words[i] - previous[i]) % step:
            raise NoGeneric("the sizes that changed are not integer multiples of one of them")
        a[i] = (words[i] - previous[i]) // step
        b[i] = words[i] - a[i] * words[var]
    v = words[var]
    if v < _MIN_V:
        raise NoGeneric(f"the varying size is {v}, below {_MIN_V}")
    k = (v - 1).bit_length()
    lo, hi = (1 << (k - 1)) + 1, 1 << k
    if any(min(a[i] * lo + b[i], a[i] * hi + b[i]) < 0 for i in free if descs[i] & 15 in (_SIZE, _STRIDE)):
        raise NoGeneric(f"a size or stride would be negative for sizes {lo}..{hi}")
    failed = _failures.setdefault((family, var, tuple(a)), [])
    for failed_lo, failed_hi, why in failed:
        if failed_lo <= v <= failed_hi:
            raise NoGeneric(why)
    if sum(lo <= failed_lo <= hi for failed_lo, _, _ in failed) >= 2:  # twice in this bucket: give it up
        failed.append((lo, hi, failed[-1][2]))
        raise NoGeneric(failed[-1][2])
    bounds = [lo, hi]  # narrowed by _probe_range
    try:
        prober = _Prober(overload, tensors, descs, a, b, args, kwargs, primitive)
        skeleton, numbers, slots = _layout(plan)
        points = {v: numbers}
        lo, hi = _probe_range(prober, skeleton, points, v, previous[var], bounds)
        formulas = _fit_all(points, slots, lo, hi, _divisors(plan), lambda p: prober.numbers(p, skeleton))
        return _spec(plan, primitive, tensors, var, lo, hi, a, b, slots, numbers, formulas)
    except NoGeneric as why:
        failed.append((bounds[0], bounds[1], str(why)))
        raise


def _probe_range(prober, skeleton, points, v, previous, bounds):
    """Probe the bucket ``bounds`` ([lo, hi]) into ``points``; where the launches change inside it, narrow it
    around v by bisection to the sizes that keep the anchor's launches (an implementation whose choice depends
    on v plus an offset steps inside v's bucket), in ``bounds`` too. Returns the range, at least 4 sizes, fully
    probed up to 48 sizes."""
    lo, hi = bounds
    changed = set()
    for p in _initial_points(lo, hi, v, previous):
        if p in points:
            continue
        try:
            points[p] = prober.numbers(p, skeleton)
        except StructureChanged:
            changed.add(p)
    if changed:
        below = [p for p in changed if p < v]
        above = [p for p in changed if p > v]
        if below:
            lo = _edge(prober, skeleton, points, max(below), max(p for p in points if p <= v))
        if above:
            hi = _edge(prober, skeleton, points, min(above), min(p for p in points if p >= v))
        for p in [p for p in points if not lo <= p <= hi]:
            del points[p]
        bounds[:] = lo, hi
        if hi - lo + 1 < 4:
            raise NoGeneric(f"the launches stay those of size {v} only for sizes {lo}..{hi}")
        for p in _initial_points(lo, hi, v, previous):
            if p not in points:
                points[p] = prober.numbers(p, skeleton)  # inside the narrowed range: any change now is final
    return lo, hi


def _edge(prober, skeleton, points, outside, inside):
    """The size next to ``inside`` (the anchor's launches) on the way to ``outside`` (other launches) where the
    launches still are the anchor's, by bisection; returns it."""
    while abs(outside - inside) > 1:
        middle = (outside + inside) // 2
        try:
            points[middle] = prober.numbers(middle, skeleton)
            inside = middle
        except StructureChanged:
            outside = middle
    return inside


def _initial_points(lo, hi, v, previous):
    if hi - lo + 1 <= _WHOLE_BUCKET:
        return range(lo, hi + 1)
    rng = random.Random(lo)  # the same probes every run
    points = {lo, lo + 1, lo + 2, hi - 2, hi - 1, hi, previous}
    for r in range(16):  # one size per residue mod 16, spread over the bucket
        base = lo + rng.randrange(hi - lo - 16)
        points.add(base + (r - base) % 16)
    points.update(rng.randrange(lo, hi + 1) for _ in range(8))
    return sorted(p for p in points if lo <= p <= hi)


class _Prober:
    """Runs the implementation dry at another value of the family's variable."""

    def __init__(self, overload, tensors, descs, a, b, args, kwargs, primitive):
        entry = registration._libraries.get(overload)
        if entry is None:
            raise NoGeneric("the overload is not registered")
        self.fn, self.primitive = entry[1], primitive
        self.tensors, self.args, self.kwargs = tensors, args, kwargs
        self.a, self.b = a, b
        self.shapes = {}  # tensor index -> [size words], [stride words]
        self.ints = []  # (argument index, list item or None, word)
        for i, d in enumerate(descs):
            kind, where, item = d & 15, (d >> 4) & 0xFFF, d >> 16
            if kind in (_SIZE, _STRIDE):
                sizes, strides = self.shapes.setdefault(where, ([], []))
                (sizes if kind == _SIZE else strides).append(i)
            elif kind in (_INT, _INT_ITEM) and a[i]:
                self.ints.append((where, item if kind == _INT_ITEM else None, i))
        self.varying = {t for t, (sizes, strides) in self.shapes.items() if any(a[i] for i in sizes + strides)}
        if self.ints:
            name, _, variant = overload.partition(".")
            self.schema = getattr(getattr(torch.ops.aten, name), variant or "default")._schema.arguments

    def _word(self, i, v):
        return self.a[i] * v + self.b[i]

    def _inputs(self, v):
        """(args, kwargs, tensors) of the call at ``v``."""
        replaced = {}
        for t in self.varying:
            old = self.tensors[t]
            sizes, strides = ([self._word(i, v) for i in words] for words in self.shapes[t])
            replaced[id(old)] = _probe_tensor(old, sizes, strides)
        args, kwargs = _substitute(self.args, replaced), _substitute(self.kwargs, replaced)
        for index, item, word in self.ints:
            value = self._word(word, v)
            if index < len(args):
                args = _set(args, index, item, value)
            elif self.schema[index].name in kwargs:
                kwargs[self.schema[index].name] = _set_value(kwargs[self.schema[index].name], item, value)
            else:
                raise NoGeneric("an integer argument at its default value varies")
        return args, kwargs, tuple(replaced.get(id(t), t) for t in self.tensors)

    def numbers(self, v, skeleton):
        """The dry run's numbers at ``v``, after checking that its structure is the anchor's."""
        args, kwargs, tensors = self._inputs(v)
        recording = record.Recording(tensors, self.primitive, dry=True)
        try:
            with recording:
                if registration.kernels_call_torch:
                    with registration.aten_only():
                        result = self.fn(*args, **kwargs)
                else:
                    result = self.fn(*args, **kwargs)
        except record.DryRunStopped:
            raise NoGeneric(f"at size {v}: {recording.refused}") from None
        except registration.Fallback as why:
            raise NoGeneric(f"at size {v} the implementation falls back to ATen ({why})") from None
        except Exception as exc:  # the real call succeeded: a probe's failure only means "no generic plan"
            raise NoGeneric(f"at size {v} the implementation raised {type(exc).__name__}: {exc}") from None
        if recording.deferred:
            raise NoGeneric(f"at size {v} a kernel is not tuned yet")
        plan = recording.plan(result)
        if plan is None:
            raise NoGeneric(f"at size {v}: {recording.why_python}")
        probe_skeleton, numbers, _ = _layout(plan)
        if probe_skeleton != skeleton:
            raise StructureChanged(f"the launches change at size {v}: {_difference(skeleton, probe_skeleton)}")
        return numbers


def _probe_tensor(t, sizes, strides):
    """A fresh tensor of these sizes and strides, with ``t``'s dtype, device and address modulo 16."""
    span = 0 if 0 in sizes else 1 + sum((n - 1) * s for n, s in zip(sizes, strides))
    itemsize = t.element_size()
    if (span + 16) * itemsize > _PROBE_BYTES:
        raise NoGeneric(f"a probe of {span * itemsize} bytes is too large")
    with registration.aten_only():
        buffer = torch.empty(span + 16, dtype=t.dtype, device=t.device)
        gap = (t.data_ptr() - buffer.data_ptr()) % 16
        if gap % itemsize:
            raise NoGeneric("a tensor's address cannot be matched modulo 16")
        return buffer.as_strided(sizes, strides, gap // itemsize)


def _substitute(value, replaced):
    if isinstance(value, torch.Tensor):
        return replaced.get(id(value), value)
    if isinstance(value, (list, tuple)):
        return type(value)(_substitute(v, replaced) for v in value)
    if isinstance(value, dict):
        return {k: _substitute(v, replaced) for k, v in value.items()}
    return value


def _set_value(old, item, value):
    if item is None:
        return value
    new = list(old)
    new[item] = value
    return type(old)(new) if isinstance(old, tuple) else new


def _set(args, index, item, value):
    args = list(args)
    args[index] = _set_value(args[index], item, value)
    return tuple(args)


# ---------------------------------------------------------------------------- structure and numbers


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


def _layout(plan):
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
            _, kind, index, delta, dtype, shape, strides = spec
            skeleton.append(("t", p, kind, index, dtype, len(shape)))
            number(("delta", n, p), delta)
            for d, s in enumerate(shape):
                number(("tshape", n, p, d), s)
            for d, s in enumerate(strides):
                number(("tstride", n, p, d), s)
    return skeleton, numbers, slots


def _difference(expected, got) -> str:
    if len(expected) != len(got):
        return f"{len(got)} items where the first call has {len(expected)}"
    first = next(i for i, (e, g) in enumerate(zip(expected, got)) if e != g)
    return f"{got[first]!r} where the first call has {expected[first]!r}"


def _divisors(plan) -> list[int]:
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


def _fit_all(points, slots, lo, hi, divisors, probe):
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


def _int_class(x: int) -> int:
    """dispatch.cpp's int_class: Triton's specialization of an integer argument."""
    if x == 1:
        return 1
    return 2 | (x % 16 == 0) << 2 | (-(2**31) <= x <= 2**31 - 1) << 3


def _spec(plan, primitive, tensors, var, lo, hi, a, b, slots, numbers, formulas):
    """The size-generic spec C++ stores: (plan spec with references, var, lo, hi, a, b, formulas, checks,
    targets)."""
    values, refs = [], {}
    for slot, (fa, fb, fd) in zip(slots, formulas):
        if fa == 0:
            continue  # a constant: the anchor's own value stays in the plan
        if (fa, fb, fd) not in values:
            values.append((fa, fb, fd))
        refs[slot] = values.index((fa, fb, fd))
    anchor = dict(zip(slots, numbers))
    targets, checks = [], []
    fields = {}
    for slot, value in refs.items():
        kind = slot[0]
        if kind in ("osize", "ostride"):
            targets.append((_OUT_SIZE if kind == "osize" else _OUT_STRIDE, 0, slot[1], slot[2], value))
        elif kind == "temp":
            targets.append((_TEMP, 0, slot[1], 0, value))
        elif kind == "oint":
            targets.append((_OUT_INT, 0, slot[1], 0, value))
        elif kind == "arg":
            checks.append((0, value, -1, _int_class(anchor[slot])))
        elif kind == "delta":
            base = _base_input(plan, slot, tensors)
            address = 0 if base < 0 else tensors[base].data_ptr()
            checks.append((1, value, base, int((address + anchor[slot]) % 16 == 0)))
        if primitive != "cuda" or kind not in ("grid", "arg", "delta"):
            continue
        n = slot[1]
        if kind == "grid":
            targets.append((_GRID + slot[2], 0, n, 0, value))
            continue
        where = (fields.get(n) or fields.setdefault(n, plan.cuda_fields(n))).get(slot[2])
        if where is None:
            continue  # an argument Triton made a constant (== 1, which the checks keep) or a constexpr
        if where[0] == "param":
            targets.append((_PARAM, where[2], n, where[1], value))
        else:
            targets.append((_PATCH, 0, n, where[1], value))
    if len(values) > 64:
        raise NoGeneric(f"{len(values)} size-dependent numbers (at most 64)")
    return (plan.spec(primitive, refs), var, lo, hi, a, b, values, checks, targets)


def _base_input(plan, slot, tensors) -> int:
    """The input a tensor argument's offset is from, or -1 (a fresh output or temporary buffer: aligned)."""
    _, n, p = slot
    _, kind, index = plan.launches[n][4][p][:3]
    if kind == 0:
        return index
    if kind == 1 and plan.outs[index][0] == 1:
        return plan.outs[index][1]
    return -1
