"""Samples of the _foreach_* operators (gems/ops/optim/foreach.py): lists of tensors of the shapes of
samples_optim_common.py. Variants, per overload family (``suffix``):

- ``<suffix>``, ``<suffix>-noncontiguous`` (in place, through transposed and strided views: ATen's
  per-tensor slow path) and ``<suffix>-special`` (NaN, infinities, signed zeros) in every dtype;
- in float32 only: ``-inplace``, ``-out``, ``-many`` (12 tensors: several binary-search steps),
  ``-mixed-dtypes`` (rows of float32, bfloat16, float16 and float64: one launch per dtype group),
  ``-promotion`` (float32 state with bfloat16 tensors, as AMP training keeps them), ``-promotion-float64``
  (float16 results computed in float64), ``-broadcast``, ``-broadcast-self`` (a functional result larger than
  self), ``-alpha``, ``-cpu-scalar`` (a 0-d CPU tensor beside device lists), ``-scalar-float64`` (a 0-d
  float64 tensor beside float32 lists), and the errors ATen raises before any work: empty lists (the first
  or another), lists of unequal length, a scalar list of another length, a scalar tensor with dimensions,
  packed CPU scalars of two dimensions, not contiguous or beside empty lists, an in-place result that would
  need broadcasting, a row whose tensors ATen refuses to mix (``error-row-dtypes``), and ``mixed-devices``
  (on a CUDA device one tensor of the second list is moved to the CPU, which ATen refuses; elsewhere the same
  call on one device)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor
from gems.testing.samples_optim_common import (
    FULL_SHAPES,
    MANY,
    QUICK_SHAPES,
    aten,
    mixed_list,
    special_list,
    tensor_list,
    view_list,
)


def _overload(name, suffix, form):
    dot = f".{suffix}" if suffix else ""
    out = f"{name}.{suffix}_out" if suffix else f"{name}.out"
    return {"new": f"{name}{dot}", "inplace": f"{name}_{dot}", "out": out}[form]


def _returning(op, form):
    """A call that returns what the overload computed: the new list, or the list it wrote."""
    if form == "new":
        return op
    if form == "inplace":
        return lambda *args, **kwargs: (op(*args, **kwargs), args[0])[1]
    return lambda *args, **kwargs: (op(*args, **kwargs, out=(outs := [torch.empty_like(t) for t in args[0]])),
                                    outs)[1]


@dataclass(frozen=True)
class ForeachSamples:
    """name: the ATen operator (``_foreach_add``); forms: (suffix, tensor lists, scalar kind, alpha) per
    overload family, as gems.ops.optim.foreach.forms takes them; positive: lists whose values stay
    positive (sqrt's input, a divisor); same_dtype_rows: ATen refuses a row of mixed dtypes (lerp);
    inplace_only: gems serves the in-place form only (ATen's functional one is a composite of it), so
    every sample expects it; self_shaped: the functional result has self's shape (ATen's functional copy is a copy
    into a clone of self). ATen's ``_out`` forms are composites of the functional ones: their samples
    expect the functional overload."""

    name: str
    forms: tuple
    positive: tuple = ()
    same_dtype_rows: bool = False
    inplace_only: bool = False
    scalar: float = 0.75
    self_shaped: bool = False

    def __call__(self, dtype, device, quick):
        shapes = QUICK_SHAPES if quick else FULL_SHAPES
        cases = []
        for suffix, n_lists, kind, alpha in self.forms:
            cases += self._form(suffix, n_lists, kind, alpha, dtype, device, shapes)
        if dtype == REJECT_HOST_DTYPE:
            suffix, n_lists, kind, _ = self.forms[0]
            cases.append(self._sample("error-empty-list", suffix, "inplace", lambda: ([] for _ in range(n_lists)),
                                      kind, dtype, device))
            cases.append(self._sample("empty-tensors", suffix, "new",
                                      lambda: self._lists(n_lists, [(0,), (0, 3)], dtype, device), kind, dtype,
                                      device))
        return cases

    # -------------------------------------------------------------- one overload family
    def _form(self, suffix, n_lists, kind, alpha, dtype, device, shapes):
        s = suffix.lower() or "default"
        lists = lambda shapes=shapes, d=dtype: self._lists(n_lists, shapes, d, device)  # noqa: E731
        cases = [self._sample(s, suffix, "new", lists, kind, dtype, device),
                 self._sample(f"{s}-noncontiguous", suffix, "inplace", lambda: self._views(n_lists, dtype, device),
                              kind, dtype, device),
                 self._sample(f"{s}-special", suffix, "new", lambda: self._special(n_lists, dtype, device), kind,
                              dtype, device)]
        if dtype != REJECT_HOST_DTYPE:
            return cases
        cases.append(self._sample(f"{s}-inplace", suffix, "inplace", lists, kind, dtype, device))
        # Twice on the same tensors, as an optimizer's steps: the second launch reuses the uploaded row table.
        cases.append(self._sample(f"{s}-inplace-twice", suffix, "inplace", lists, kind, dtype, device,
                                  wrap=lambda call: lambda *a: (call(*a), call(*a))[1]))
        cases += [self._sample(f"{s}-out", suffix, "out", lists, kind, dtype, device),
                  self._sample(f"{s}-many", suffix, "new", lambda: self._lists(n_lists, MANY, dtype, device), kind,
                               dtype, device),
                  self._sample(f"{s}-mixed-dtypes", suffix, "new", lambda: self._mixed(n_lists, device), kind,
                               dtype, device)]
        if alpha:
            cases.append(self._sample(f"{s}-alpha", suffix, "new", lists, kind, dtype, device, {"alpha": -2.5}))
        if kind == "Tensor":
            cases.append(self._sample(f"{s}-cpu-scalar", suffix, "new", lists, None, dtype, device,
                                      wrap=lambda call: lambda *a: call(*a, torch.tensor(self.scalar))))
            cases.append(self._sample("error-scalar-tensor-dims", suffix, "new", lists, kind, dtype, device,
                                      scalar=lambda made: make_tensor((2,), dtype, device)))
        if kind == "ScalarList":
            cases.append(self._sample("error-scalar-list-length", suffix, "new", lists, kind, dtype, device,
                                      scalar=lambda made: [self.scalar]))
        if kind == "CpuScalars":
            cases.append(self._sample("error-cpu-scalars-length", suffix, "new", lists, kind, dtype, device,
                                      scalar=lambda made: [0.5, 1.5]))
            for variant, packed in (("dims", lambda t: t[None]), ("noncontiguous", lambda t: t.repeat(2)[::2])):
                cases.append(self._sample(f"error-cpu-scalars-{variant}", suffix, "new", lists, kind, dtype, device,
                                          packed=packed))
            # empty lists: the packed scalars (a CPU tensor) still dispatch the call
            cases.append(self._sample("error-cpu-scalars-empty-lists", suffix, "new", lambda: [[]] * n_lists, kind,
                                      dtype, device, scalar=lambda made: []))
        if kind == "Tensor":
            # a float64 scalar beside float32 lists: the result keeps the lists' dtype (a 0-d tensor does not promote)
            cases.append(self._sample(f"{s}-scalar-float64", suffix, "new", lists, kind, dtype, device,
                                      scalar=lambda made: torch.tensor(self.scalar, dtype=torch.float64,
                                                                       device=device)))
        if n_lists > 1:
            cases += self._list_cases(s, suffix, n_lists, kind, dtype, device, shapes)
        return cases

    def _list_cases(self, s, suffix, n_lists, kind, dtype, device, shapes):
        lists = lambda: self._lists(n_lists, shapes, dtype, device)  # noqa: E731
        other_dtype = torch.bfloat16
        cases = [
            self._sample(f"{s}-broadcast", suffix, "inplace",
                         lambda: [[make_tensor((13, 17), dtype, device)]] + [[make_tensor((17,), dtype, device)]
                                                                             for _ in range(n_lists - 1)],
                         kind, dtype, device),
            self._sample(f"error-{s}-lengths", suffix, "inplace",
                         lambda: [ls[:1] if k == 1 else ls for k, ls in enumerate(lists())], kind, dtype, device),
            self._sample(f"error-{s}-inplace-broadcast", suffix, "inplace",
                         lambda: [[make_tensor((17,), dtype, device)]] + [[make_tensor((13, 17), dtype, device)]
                                                                          for _ in range(n_lists - 1)],
                         kind, dtype, device),
        ]
        promoted = lambda: [self._one_list(shapes, dtype if k == 0 else other_dtype, device, k)  # noqa: E731
                            for k in range(n_lists)]
        name = f"error-{s}-row-dtypes" if self.same_dtype_rows else f"{s}-promotion"
        cases.append(self._sample(name, suffix, "inplace", promoted, kind, dtype, device))
        if not self.same_dtype_rows:  # float16 results computed in float64: rounded through float32, as c10's
            wider = lambda: [self._one_list(shapes, torch.float16 if k == 0 else torch.float64, device, k)  # noqa: E731
                             for k in range(n_lists)]
            cases.append(self._sample(f"{s}-promotion-float64", suffix, "inplace", wider, kind, dtype, device))
        # self smaller than the other lists: the functional result takes the broadcast shape, but a copy's is self's
        smaller = lambda: [[make_tensor((17,) if k == 0 else (13, 17), dtype, device, low=0.5 if k in self.positive
                                        else -4.0)] for k in range(n_lists)]  # noqa: E731
        cases.append(self._sample(f"error-{s}-broadcast-self" if self.self_shaped else f"{s}-broadcast-self", suffix,
                                  "new", smaller, kind, dtype, device))
        if not self.self_shaped:  # (ATen's functional copy returns an empty list for an empty src)
            cases.append(self._sample(f"error-{s}-empty-list", suffix, "new",
                                      lambda: [ls if k == 0 else [] for k, ls in enumerate(lists())], kind, dtype,
                                      device))
        cases.append(self._sample(f"{s}-mixed-devices", suffix, "new", lists, kind, dtype, device,
                                  wrap=lambda call: lambda *a, **k: call(*_move_one_to_cpu(a), **k)))
        return cases

    # -------------------------------------------------------------- building blocks
    def _sample(self, variant, suffix, form, lists, kind, dtype, device, kwargs=None, scalar=None, wrap=None,
                packed=None):
        overload = _overload(self.name, suffix, form)
        served = _overload(self.name, suffix, "inplace" if self.inplace_only or form == "inplace" else "new")
        make_scalar = scalar or (lambda made: self._scalar(kind, len(made[0]), dtype, device))

        def args():
            made = list(lists())
            return (*made, make_scalar(made)) if kind else tuple(made)

        call = _returning(aten(overload), form)
        if kind == "CpuScalars":  # a CPU tensor, made at call time: a sample's tensors move to its device
            call = _cpu_scalars_call(call, packed)
        return Sample(variant, args, kwargs or {}, call=wrap(call) if wrap else call, expects=served)

    def _scalar(self, kind, n, dtype, device):
        if kind == "Scalar":
            return self.scalar
        if kind == "ScalarList" or kind == "CpuScalars":
            return [(self.scalar, -1.25, 2.0, 0.5, 3.0)[i % 5] for i in range(n)]
        return torch.tensor(self.scalar, dtype=dtype, device=device)

    def _one_list(self, shapes, dtype, device, k):
        return tensor_list(shapes, dtype, device, k in self.positive)

    def _lists(self, n_lists, shapes, dtype, device):
        return [self._one_list(shapes, dtype, device, k) for k in range(n_lists)]

    def _views(self, n_lists, dtype, device):
        return [view_list(dtype, device, k in self.positive) for k in range(n_lists)]

    def _special(self, n_lists, dtype, device):
        return [special_list(dtype, device, k in self.positive) for k in range(n_lists)]

    def _mixed(self, n_lists, device):
        return [mixed_list(device, k in self.positive) for k in range(n_lists)]


def _cpu_scalars_call(call, packed=None):
    """The call with its scalars packed in a 1-d CPU tensor (``packed`` changes it: ATen's errors)."""
    def with_cpu_scalars(*args, **kwargs):
        *lists, scalars = args
        tensor = torch.tensor(scalars[:len(lists[0])], dtype=torch.float64)
        return call(*lists, packed(tensor) if packed else tensor, **kwargs)
    return with_cpu_scalars


def _move_one_to_cpu(args):
    """On a CUDA device, the second list's first tensor on the CPU (ATen refuses the row); elsewhere as is."""
    lists = list(args)
    second = lists[1]
    if second and second[0].device.type == "cuda":
        lists[1] = [second[0].cpu(), *second[1:]]
    return lists
