"""Plans with a host read: calls whose result sizes depend on data (nonzero, masked_select, unique).

Such an operator counts on the device, reads the count back to the host (the one synchronization ATen makes
too), then allocates its results and launches its last kernels for that count. It reads the count through
:func:`read_count` instead of ``.item()``: on the Python path that is ``.item()``; while the native layer records
the call, it marks the read (which buffer, after how many launches) so that the plan can repeat it:

    head: the launches before the read (count-independent: inputs and temporary buffers only)
    read: one int64 of a temporary buffer, on the device's stream (CUDA: a copy to the host and a stream sync)
    tail: the temporary buffers, results and launches after it, their numbers floor((a * c + b) / d) of the count c

The formulas come from dry runs (as a size-generic plan's, gems/native/generic.py): the implementation is run
again with its launches recorded, not executed, and :func:`read_count` answering other counts in [1, most]
(``most``: the largest count the operator can read, which it declares: the elements it counts). The range is
narrowed where the launches change (gems/native/generic.py ``_probe_range``); a count of 0 (nothing to write: no
launch, strides of an empty result) is a plan of its own, and so is a count where no formula fits. A replay whose
count no variant of its signature covers (or whose computed numbers Triton would specialize otherwise, on the
CUDA primitive) runs the Python path after its head, which records another variant (up to dispatch.cpp's
kMaxReadVariants per signature). A declared read rather than an inferred one: the recorder needs to know which
value is the count, and an operator that reads a value for another purpose (an error check) stays as it was.
"""

from __future__ import annotations

import torch

from gems.native import record
from gems.native.generic import StructureChanged, _probe_range
from gems.native.generic_fit import NoGeneric, difference, fit_all, formula_divisors, layout
from gems.native.generic_spec import build_spec
from gems.runtime import registration

RECORDED = "the first call of its signature, or a count its read plans do not cover yet (recorded)"


def read_count(t: torch.Tensor, most: int) -> int:
    """The int64 in the one-element ``t`` (written by the call's kernels), read on the host; ``most``: the largest
    value it can have (what a plan's dry runs probe)."""
    rec = registration.recording
    if rec is None:
        return int(t.item())
    if rec.dry:
        if rec.read_value is None:  # a size-generic probe: a read call gets exact plans with read variants only
            rec.stop("it reads a count back to the host (size-generic plans take no reads)")
        value = min(rec.read_value, most)
    else:
        with rec.paused(), registration.aten_only():
            value = int(t.item())
    rec.reads.append((t, most, len(rec.launches), value))
    return value


def replay_head(py_head, inputs, temps, temp: int, offset: int) -> int:
    """The Python primitive's head: its launches, then the count (a plain read, on the host)."""
    groups = (inputs, (), temps)
    for launcher, grid, options, argspec in py_head:
        launcher(grid, *[a[1] if a[0] == "c" else record._tensor(groups, a, ()) for a in argspec], **options)
    with registration.aten_only():
        return int(temps[temp].view(torch.uint8)[offset:offset + 8].view(torch.int64).item())


def read_spec(recording, plan, spec, overload, args, kwargs, primitive):
    """The read variant's spec for C++ (the plan spec with references, and the read step), from ``plan`` (the
    recorded call at its own count) and dry runs of ``overload``'s implementation at other counts."""
    if len(recording.reads) != 1:
        raise record.NotRecordable("it reads more than one value back to the host")
    if plan.checks or spec[5][0] or len(spec) > 6:
        raise record.NotRecordable("it reads a count and takes Philox keys, checks flags or builds a graph")
    t, most, at, count = recording.reads[0]
    where = recording._arg(t)
    if where[0] != "t" or where[1] != 2 or where[2] >= len(plan.temps) or t.dtype is not torch.int64:
        raise record.NotRecordable("the count it reads is not an int64 in a buffer the call allocated")
    head_temps = where[2] + 1
    for _, _, _, _, argspec, _ in plan.launches[:at]:
        for a in argspec:
            if a[0] == "t" and a[1] == 1:
                raise record.NotRecordable("a launch before its read writes a result")
            if a[0] == "t" and a[1] == 2:
                head_temps = max(head_temps, a[2] + 1)
    skeleton, numbers, slots = layout(plan)
    lo, hi, formulas = count, count, [(0, n, 1) for n in numbers]
    if count > 0:
        try:
            prober = _Prober(overload, args, kwargs, recording.tensors, primitive, at, skeleton)
            points = {count: numbers}
            lo, hi = _probe_range(prober, skeleton, points, count, count, [1, max(most, 1)])
            if lo == hi:
                raise NoGeneric("one count")
            formulas = fit_all(points, slots, lo, hi, formula_divisors(plan), prober.numbers)
        except (NoGeneric, ArithmeticError):  # a plan for this count alone
            lo, hi, formulas = count, count, [(0, n, 1) for n in numbers]
    for slot, (a, _, _) in zip(slots, formulas):
        if a and (slot[0] == "temp" and slot[1] < head_temps or slot[0] != "temp" and slot[0] not in
                  ("osize", "ostride", "oint") and slot[1] < at):
            raise record.NotRecordable("a number before its read depends on the count")
    generic = build_spec(plan, primitive, recording.tensors, 0, lo, hi, [], [], slots, numbers, formulas)
    plan_spec, _, _, _, _, _, values, checks, targets = generic
    if primitive != "cuda":  # launched through Triton's own launcher, which specializes each call itself
        checks = []
    py_launches, py_checks = plan_spec[3]
    head = tuple(py_launches[:at])
    plan_spec = plan_spec[:3] + ((tuple(py_launches[at:]), py_checks),) + plan_spec[4:]
    record.note(overload, RECORDED)
    return plan_spec + (None, (at, where[2], where[3], head_temps, lo, hi, values, checks, targets, head))


record.read_variants = read_spec


class _Prober:
    """Runs the implementation dry with the read answering another count."""

    def __init__(self, overload, args, kwargs, tensors, primitive, at, skeleton):
        self.fn = registration.implementation(overload)
        if self.fn is None:
            raise NoGeneric("the overload is not registered")
        self.args, self.kwargs, self.tensors, self.primitive, self.at = args, kwargs, tensors, primitive, at
        self.skeleton = skeleton  # the recorded call's, which every probe must share

    def _call(self):
        if registration.kernels_call_torch:
            with registration.aten_only():
                return self.fn(*self.args, **self.kwargs)
        return self.fn(*self.args, **self.kwargs)

    def numbers(self, count, _skeleton=None):
        recording = record.Recording(self.tensors, self.primitive, dry=True)
        recording.read_value = count
        try:
            with recording:
                result = self._call()
        except record.DryRunStopped:
            raise NoGeneric(f"at count {count}: {recording.refused}") from None
        except Exception as exc:  # the real call succeeded: a probe's failure only means "no formula"
            raise NoGeneric(f"at count {count} the implementation raised {type(exc).__name__}: {exc}") from None
        plan = recording.plan(result)
        if plan is None or recording.deferred:
            raise NoGeneric(f"at count {count}: {recording.why_python or 'a kernel is not tuned yet'}")
        probe_skeleton, numbers, _ = layout(plan)
        if len(recording.reads) != 1 or recording.reads[0][2] != self.at:
            raise StructureChanged(f"the read moves at count {count}")
        if probe_skeleton != self.skeleton:
            raise StructureChanged(f"the launches change at count {count}: "
                                   f"{difference(self.skeleton, probe_skeleton)}")
        return numbers
