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

This module keeps the families and the dry runs; gems/native/generic_fit.py fits a plan's numbers as formulas
and gems/native/generic_spec.py turns them into the spec C++ stores (its checks and targets).
"""

from __future__ import annotations

import os
import random
import struct

import torch

from gems.native import record
from gems.native.generic_fit import NoGeneric, difference, fit_all, formula_divisors, layout
from gems.native.generic_spec import build_spec
from gems.runtime import registration

_FIXED, _SIZE, _STRIDE, _INT, _INT_ITEM = range(5)  # dispatch.cpp's WordKind
_MIN_V = 5  # the buckets below, (2, 4] and less, hold too few sizes to be worth a plan
_WHOLE_BUCKET = 48  # probe every size of a bucket this small
_PROBE_BYTES = 1 << 30
_MAX_FAMILIES = 4096
_MEMBERS = 4  # recent calls kept per family: a decode step records its key and value cache appends alike

# (overload, key with its variable words left out) -> the words of its latest recorded calls, newest first
_families: dict = {}
# (family, variable, relations) -> [(lo, hi, why)]: ranges where a derivation failed, not tried again (each try
# runs the implementation dozens of times)
_failures: dict = {}


class StructureChanged(NoGeneric):
    """A probe launched other kernels, constexprs or outputs than the anchor call."""


def enabled() -> bool:
    return os.environ.get("GEMS_NATIVE_GENERIC", "1") != "0"


def forget() -> None:
    _families.clear()
    _failures.clear()


def observe(overload, call, plan, args, kwargs, primitive):
    """After a call recorded as ``plan``: (size-generic spec or None, why the call took Python)."""
    _, words_bytes, descs_bytes, *_ = call
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
    if plan.checks:  # their flags' sizes would need formulas too; only interpreted kernels read flags on the host
        raise NoGeneric("it reads flags on the host (interpreted kernels' checks): exact plans only")
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
        skeleton, numbers, slots = layout(plan)
        points = {v: numbers}
        lo, hi = _probe_range(prober, skeleton, points, v, previous[var], bounds)
        formulas = fit_all(points, slots, lo, hi, formula_divisors(plan), lambda p: prober.numbers(p, skeleton))
        return build_spec(plan, primitive, tensors, var, lo, hi, a, b, slots, numbers, formulas)
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
        self.fn, self.primitive = registration.implementation(overload), primitive
        if self.fn is None:
            raise NoGeneric("the overload is not registered")
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
            self.schema = registration.operator_of(overload)._schema.arguments

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
        probe_skeleton, numbers, _ = layout(plan)
        if probe_skeleton != skeleton:
            raise StructureChanged(f"the launches change at size {v}: {difference(skeleton, probe_skeleton)}")
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
