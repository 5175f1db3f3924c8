"""Recording a call over tensor lists (``_foreach_*``, ``_fused_*_``) as a list plan (list_plans.h).

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

Scalars an overload declares read per call (its implementation's ``per_call_scalars``: arguments that reach
nothing but a kernel's float64 words, through ``multi_tensor.scalar_word``) are keyed by type, not value, and
a replay passes their bits: an lr schedule does not make every step a new signature. A ScalarList of one value
that its implementation passes as a kernel argument (gems/ops/optim/foreach.py ``apply``) is declared the same
way; the key tells such lists apart (list_plans.h ``one_value``) and a replay passes the list's first value. A
ScalarList of a few values that its implementation passes as kernel arguments, one each (foreach_kernels.py
``values_kernel``), over a table of the rows' positions, is read per call item by item: the key holds its
length, and every item must reach an argument.

Plan spec handed to C++: ``(plan spec, operands, tails, words kind, words index, flat flag, chunk, n_rows,
aligned, results, per-call scalars, CUDA targets)``, the plan spec as :meth:`gems.native.record.Plan.spec` makes
it with the table as temporary buffer 0, the grid's x as the call's number 0 (the table's programs) and the
per-call scalars' words (each an argument's schema index and ScalarList item, -1 for none) as numbers 1, 2...
"""

from __future__ import annotations

import struct

import torch

from gems.native import record
from gems.runtime import registration

NO_WORDS, ZERO_WORDS, SCALAR_LIST_WORDS, ADDRESS_WORDS, POSITION_WORDS = 0, 1, 2, 3, 4  # list_plans.h ListWords
POSITIONS = "the rows' positions"  # multi_tensor.uniform_table's words_from for words 0, 1, 2...
K_PARAM = 3  # dispatch.cpp TargetKind: a kernel parameter
per_call: dict = {}  # overload -> schema indices of the Scalars its implementation declares read per call


class ScalarWord(int):
    """A kernel argument that is a Scalar argument's float64 bits (``arg``: its schema position or name), or those
    of item ``item`` of a ScalarList argument (-1: a Scalar, or the value of a ScalarList of one value)."""

    def __new__(cls, bits: int, arg, item: int = -1):
        word = super().__new__(cls, bits)
        word.arg, word.item = arg, item
        return word


class ListRecording(record.Recording):
    """A :class:`gems.native.record.Recording` that also takes the implementation's table reports."""

    def __init__(self, tensors: tuple, primitive: str, schema_names=(), per_call=()):
        super().__init__(tensors, primitive)
        self.schema_names, self.per_call = list(schema_names), per_call
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
        scalars, refs = self._scalars(args, values)
        self._returns, self._fresh, self._temps = (), {}, {}
        launches = [(launcher, compiled, grid, options, [self._arg(a) for a in args], args)]
        plan = record.Plan([], [], launches)
        spec = plan.spec(self.primitive, {("grid", 0, 0): 0, **refs})
        targets = []
        if self.primitive == "cuda":  # unreached on the interpreter: the CUDA primitive
            fields = plan.cuda_fields(0)
            if any(fields[p][0] != "param" or fields[p][2] != 8 for _, _, p in refs):
                # Triton types an unannotated 0 (0.0's bits) as int32: a later value would lose its high half
                raise record.NotRecordable("a Scalar read per call reached a kernel parameter of fewer than 64 bits")
            targets = [(K_PARAM, fields[p][2], 0, fields[p][1], v) for (_, _, p), v in refs.items()]
        return (spec, specs, tail_args, kind, index, flat_flag, chunk, n_rows, aligned, results, scalars,
                targets)

    def _scalars(self, args, values) -> tuple:
        """(the per-call Scalars as (schema index, ScalarList item or -1), {("arg", 0, kernel argument position):
        number}) of the launch; every declared Scalar given as a number must reach the kernel that way, and a
        ScalarList whose items reach it must reach it whole."""
        names = self.schema_names
        scalars, refs = [], {}
        for p, a in enumerate(args):
            if isinstance(a, ScalarWord) and (isinstance(a.arg, int) or a.arg in names):  # else a default
                i = a.arg if isinstance(a.arg, int) else names.index(a.arg)
                if i not in self.per_call:
                    raise record.NotRecordable(f"argument {names[i]} reached a kernel as a word it does not declare")
                if (i, a.item) not in scalars:
                    scalars.append((i, a.item))
                refs[("arg", 0, p)] = 1 + scalars.index((i, a.item))
        declared = {i for i in self.per_call if type(values[i]) in (float, int, bool)}
        if declared - {i for i, _ in scalars}:
            raise record.NotRecordable("a Scalar it declares read per call reached no kernel word")
        for i in {i for i, item in scalars if item >= 0}:
            items = sorted(item for j, item in scalars if j == i)
            if not isinstance(values[i], (list, tuple)) or items != list(range(len(values[i]))):
                raise record.NotRecordable(f"argument {names[i]} reached the kernel's arguments only in part")
        return scalars, refs

    def _words(self, words, words_from, argument) -> tuple:
        if words_from is POSITIONS:
            if words != list(range(len(words))):
                raise record.NotRecordable("a table's row words are not the rows' positions")
            return POSITION_WORDS, 0
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


def scalar_word(bits: int, arg, item: int = -1) -> int:
    """multi_tensor.scalar_word and list_words: ``bits`` marked as argument ``arg``'s (item ``item`` of a ScalarList)
    while a list call is recorded."""
    return bits if _recording() is None else ScalarWord(bits, arg, item)


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


def schema_arguments(overload: str) -> list:
    name, _, variant = overload.partition(".")
    return getattr(getattr(torch.ops.aten, name), variant or "default")._schema.arguments


def declare(overload: str, names) -> list:
    """The schema indices of the Scalars ``overload``'s implementation reads per call (positions or names)."""
    arguments = [a.name for a in schema_arguments(overload)]
    per_call[overload] = [n if isinstance(n, int) else arguments.index(n) for n in names if n in arguments
                          or isinstance(n, int)]
    return per_call[overload]


def record_list_call(impl, keyset, args, kwargs, call, calls, primitive, overload):
    """Run a new list-call signature of ``overload`` through ``impl`` (the registration wrapper); returns
    (result, list plan spec), or (result, a str): this signature stays in Python, and why."""
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        record.note(overload, "a new signature during CUDA graph capture (recorded outside capture only)")
        return impl(keyset, *args, **kwargs), None
    served = calls[0] + 1
    arguments = schema_arguments(overload)
    recording = ListRecording(call[0], primitive, [a.name for a in arguments], per_call.get(overload, ()))
    with recording:
        result = impl(keyset, *args, **kwargs)
    if calls[0] != served:
        return result, _python_only(overload, "ATen served it (a fallback)")
    values = [args[i] if i < len(args) else kwargs.get(a.name, a.default_value) for i, a in enumerate(arguments)]
    try:
        spec = recording.list_spec(result, values)
    except record.NotRecordable as exc:
        return result, _python_only(overload, str(exc))
    record.note(overload, record.NEW_SIGNATURE)
    return result, spec


def _python_only(overload: str, why: str) -> str:
    record.note(overload, why)
    return why
