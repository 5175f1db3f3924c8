"""Recording a call over tensor lists (``_foreach_*``, ``_fused_adam(w)_``) as a list plan (list_plans.h).

Such calls are keyed by a summary of each tensor list, not item by item (dispatch.cpp keys at most 8 tensors).
Their Python implementations build one uniform launch: a table over the lists (gems/ops/optim/multi_tensor.py
``uniform_table``), uploaded to the device, and one kernel launch over it. While such a call is recorded, the
implementation reports here how it built the table: which lists are its operands (the call's list arguments,
or result lists allocated like one of them), what the per-row word is (none, zeros, a ScalarList argument's
values, a tensor argument's address) and which lists' addresses end each row. A plan is stored only if the
call did exactly that: one uniform table, one upload, one launch whose tensor arguments are the table or the
call's other tensors, no ATen op that computes (the recording's dispatch mode, as for every plan), and results
that are the lists it allocated. Anything else (a non-uniform list takes the per-row path; a scalar read on
the host) keeps the call's key in Python, with the reason in ``gems.native.python_reasons()``.

Plan spec handed to C++: ``(plan spec, operands, tails, words kind, words index, flat flag, chunk, n_rows,
aligned, results)``, the plan spec as :meth:`gems.native.record.Plan.spec` makes it with the table as temporary
buffer 0 and the grid's x as the call's number 0 (the table's programs).
"""

from __future__ import annotations

import struct

import torch

from gems.native import record
from gems.runtime import registration

NO_WORDS, ZERO_WORDS, SCALAR_LIST_WORDS, ADDRESS_WORDS = 0, 1, 2, 3  # list_plans.h ListWords


class ListRecording(record.Recording):
    """A :class:`gems.native.record.Recording` that also takes the implementation's table reports."""

    def __init__(self, tensors: tuple, primitive: str):
        super().__init__(tensors, primitive)
        self.tables = []  # (operands, words, words_from, tails, flat_flag, chunk, uniform_table's answer)
        self.uploads = []  # the device tables
        self.like = []  # (result list, the list it was allocated like)

    def _locate(self, t):
        if any(t is table for table in self.uploads):
            return 2, 0, 0
        return super()._locate(t)

    def list_spec(self, result, values: list):
        """The plan spec (see the module docstring); ``values``: the call's arguments in schema order."""
        if len(self.tables) != 1 or len(self.uploads) != 1 or len(self.launches) != 1:
            raise record.NotRecordable("it did not launch one kernel over one uniform table of its lists (lists "
                                       "whose rows differ in size take the per-row path; every row empty launches "
                                       "nothing)")
        if self.refused:
            raise record.NotRecordable(self.refused)
        operands, words, words_from, tails, flat_flag, chunk, (_, programs, n_rows, aligned) = self.tables[0]

        def argument(obj) -> int | None:
            return next((i for i, v in enumerate(values) if v is obj), None)

        if result is None and not self.like:
            results = []
        elif isinstance(result, list) and len(self.like) == 1 and result is self.like[0][0]:
            results = [argument(self.like[0][1])]
            if results[0] is None:
                raise record.NotRecordable("its result list is allocated like a list that is no argument")
        else:
            raise record.NotRecordable("its results are not one list allocated like an argument list")
        specs = []
        for operand in operands:
            i = argument(operand)
            if i is None and not (self.like and operand is self.like[0][0]):
                raise record.NotRecordable("a table operand is neither an argument list nor its result")
            specs.append((0, i) if i is not None else (1, 0))
        tail_args = [argument(tail) for tail in tails]
        if None in tail_args:
            raise record.NotRecordable("a table's tail list is no argument")
        kind, index = self._words(list(words), words_from, argument)
        launcher, compiled, grid, options, args = self.launches[0]
        if tuple(grid) != (programs, 1, 1):
            raise record.NotRecordable("the launch's grid is not the table's programs")
        self._returns, self._fresh, self._temps = (), {}, {}
        launches = [(launcher, compiled, grid, options, [self._arg(a) for a in args], args)]
        spec = record.Plan([], [], launches).spec(self.primitive, {("grid", 0, 0): 0})
        return spec, specs, tail_args, kind, index, flat_flag, chunk, n_rows, aligned, results

    def _words(self, words, words_from, argument) -> tuple:
        if words_from is None:
            if any(words):
                raise record.NotRecordable("a table's row words come from no argument")
            return (ZERO_WORDS if words else NO_WORDS), 0
        if isinstance(words_from, torch.Tensor):
            k = next((k for k, t in enumerate(self.tensors) if t is words_from), None)
            if k is None or words != [words_from.data_ptr()] * len(words):
                raise record.NotRecordable("a table's row words are the address of no argument")
            return ADDRESS_WORDS, k
        i = argument(words_from)
        if i is None or words != list(struct.unpack(f"<{len(words)}q", struct.pack(f"<{len(words)}d",
                                                                                    *map(float, words_from)))):
            raise record.NotRecordable("a table's row words are not a ScalarList argument's values")
        return SCALAR_LIST_WORDS, i


def _recording() -> ListRecording | None:
    rec = registration.recording
    return rec if isinstance(rec, ListRecording) else None


def table_written(operands, words, words_from, tails, flat_flag, chunk, answer) -> None:
    """multi_tensor.uniform_table made a table while a call is recorded."""
    rec = _recording()
    if rec is not None:
        rec.tables.append((operands, words, words_from, tails, flat_flag, chunk, answer))


def allocated_like(result: list, like: list) -> None:
    """multi_tensor.empty_like_all allocated a functional result list while a call is recorded."""
    rec = _recording()
    if rec is not None:
        rec.like.append((result, like))


def upload(make):
    """``make()`` (a device table from multi_tensor's cache or a fresh upload: a copy to the device that no plan
    repeats, the C++ replay uploads for itself) with the recording's dispatch mode paused."""
    rec = _recording()
    if rec is None:
        return make()
    with rec.paused():
        table = make()
    rec.uploads.append(table)
    return table


def _schema_values(overload: str, args: tuple, kwargs: dict) -> list:
    name, _, variant = overload.partition(".")
    schema = getattr(getattr(torch.ops.aten, name), variant or "default")._schema
    return [args[i] if i < len(args) else kwargs.get(a.name) for i, a in enumerate(schema.arguments)]


def record_list_call(impl, keyset, args, kwargs, call, calls, primitive, overload):
    """Run a new list-call signature of ``overload`` through ``impl`` (the registration wrapper); returns
    (result, list plan spec), or (result, a str): this signature stays in Python, and why."""
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        record.note(overload, "a new signature during CUDA graph capture (recorded outside capture only)")
        return impl(keyset, *args, **kwargs), None
    served = calls[0] + 1
    recording = ListRecording(call[0], primitive)
    with recording:
        result = impl(keyset, *args, **kwargs)
    if calls[0] != served:
        return result, record._python_only(overload, "ATen served it (a fallback)")
    try:
        spec = recording.list_spec(result, _schema_values(overload, args, kwargs))
    except record.NotRecordable as exc:
        return result, record._python_only(overload, str(exc))
    record.note(overload, record.NEW_SIGNATURE)
    return result, spec
