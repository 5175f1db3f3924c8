"""Samples of the optimizer family (gems/ops/optim/): lists of tensors, and optimizer states.

Every list holds tensors of odd, different sizes: a 2-D one, a 1-D one, a 0-d one, an empty one and one of
more than a tile (2048 elements: the unmasked full-tile path). Variants, per overload family (``suffix``):

- ``<suffix>``, ``<suffix>-inplace``, ``<suffix>-noncontiguous`` (in place, through transposed and strided
  views: ATen's per-tensor slow path) and ``<suffix>-special`` (NaN, infinities, signed zeros) in every
  dtype;
- in float32 only: ``-out``, ``-many`` (20 tensors: several binary-search steps), ``-mixed-dtypes`` (rows of
  float32, bfloat16, float16 and float64: one launch per dtype group), ``-promotion`` (float32 state with
  bfloat16 tensors, as AMP training keeps them), ``-broadcast``, ``-alpha``, ``-cpu-scalar`` (a 0-d CPU
  tensor beside device lists), and the errors ATen raises before any work: empty lists, lists of unequal
  length, a scalar list of another length, a scalar tensor with dimensions, an in-place result that
  would need broadcasting, a row whose tensors ATen refuses to mix (``error-row-dtypes``), and
  ``mixed-devices`` (on a CUDA device one tensor of the second list is moved to the CPU, which ATen
  refuses; elsewhere the same call on one device).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, special_values

QUICK_SHAPES = ((13, 17), (5,), (), (0, 3), (2100,))
FULL_SHAPES = ((257, 1023), (70001,), (), (0,), (31, 7, 3))
_MIXED = (torch.float32, torch.bfloat16, torch.float16, torch.float64)


def _aten(overload: str):
    name, _, variant = overload.partition(".")
    return getattr(getattr(torch.ops.aten, name), variant or "default")


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
    every sample expects it. ATen's ``_out`` forms are composites of the functional ones: their samples
    expect the functional overload."""

    name: str
    forms: tuple
    positive: tuple = ()
    same_dtype_rows: bool = False
    inplace_only: bool = False
    scalar: float = 0.75

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
                 self._sample(f"{s}-inplace", suffix, "inplace", lists, kind, dtype, device),
                 self._sample(f"{s}-noncontiguous", suffix, "inplace", lambda: self._views(n_lists, dtype, device),
                              kind, dtype, device),
                 self._sample(f"{s}-special", suffix, "new", lambda: self._special(n_lists, dtype, device), kind,
                              dtype, device)]
        if dtype != REJECT_HOST_DTYPE:
            return cases
        many = [(i % 7 + 1, i % 5 + 2) for i in range(20)]
        cases += [self._sample(f"{s}-out", suffix, "out", lists, kind, dtype, device),
                  self._sample(f"{s}-many", suffix, "new", lambda: self._lists(n_lists, many, dtype, device), kind,
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
        cases.append(self._sample(f"{s}-mixed-devices", suffix, "new", lists, kind, dtype, device,
                                  wrap=lambda call: lambda *a, **k: call(*_move_one_to_cpu(a), **k)))
        return cases

    # -------------------------------------------------------------- building blocks
    def _sample(self, variant, suffix, form, lists, kind, dtype, device, kwargs=None, scalar=None, wrap=None):
        overload = _overload(self.name, suffix, form)
        served = _overload(self.name, suffix, "inplace" if self.inplace_only or form == "inplace" else "new")
        make_scalar = scalar or (lambda made: self._scalar(kind, len(made[0]), dtype, device))

        def args():
            made = list(lists())
            return (*made, make_scalar(made)) if kind else tuple(made)

        call = _returning(_aten(overload), form)
        if kind == "CpuScalars":  # a CPU tensor, made at call time: a sample's tensors move to its device
            call = _cpu_scalars_call(call)
        return Sample(variant, args, kwargs or {}, call=wrap(call) if wrap else call, expects=served)

    def _scalar(self, kind, n, dtype, device):
        if kind == "Scalar":
            return self.scalar
        if kind == "ScalarList" or kind == "CpuScalars":
            return [(self.scalar, -1.25, 2.0, 0.5, 3.0)[i % 5] for i in range(n)]
        return torch.tensor(self.scalar, dtype=dtype, device=device)

    def _one_list(self, shapes, dtype, device, k):
        low = 0.5 if k in self.positive else -4.0
        return [make_tensor(shape, dtype, device, low=low) for shape in shapes]

    def _lists(self, n_lists, shapes, dtype, device):
        return [self._one_list(shapes, dtype, device, k) for k in range(n_lists)]

    def _views(self, n_lists, dtype, device):
        def views(k):
            low = 0.5 if k in self.positive else -4.0
            return [make_tensor((17, 13), dtype, device, low=low).t(),
                    make_tensor((9, 22), dtype, device, low=low)[:, ::2],
                    make_tensor((4, 5, 6), dtype, device, low=low).permute(2, 0, 1),
                    make_tensor((2200,), dtype, device, low=low)]
        return [views(k) for k in range(n_lists)]

    def _special(self, n_lists, dtype, device):
        def special(k):
            values = special_values(dtype, device)
            if k in self.positive:
                values = values.abs()
            return [values, make_tensor((3, 5), dtype, device)]
        return [special(k) for k in range(n_lists)]

    def _mixed(self, n_lists, device):
        return [[make_tensor((3, 5 + i), d, device, low=0.5 if k in self.positive else -4.0)
                 for i, d in enumerate(_MIXED)] for k in range(n_lists)]



def _cpu_scalars_call(call):
    def with_cpu_scalars(*args, **kwargs):
        *lists, scalars = args
        return call(*lists, torch.tensor(scalars[:len(lists[0])], dtype=torch.float64), **kwargs)
    return with_cpu_scalars


def _move_one_to_cpu(args):
    """On a CUDA device, the second list's first tensor on the CPU (ATen refuses the row); elsewhere as is."""
    lists = list(args)
    second = lists[1]
    if second and second[0].device.type == "cuda":
        lists[1] = [second[0].cpu(), *second[1:]]
    return lists
