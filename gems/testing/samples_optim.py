"""Samples of the optimizer family (gems/ops/optim/): lists of tensors, and optimizer states.

Every list holds tensors of odd, different sizes: a 2-D one, a 1-D one, a 0-d one, an empty one and one of
more than a tile (2048 elements: the unmasked full-tile path). Variants, per overload family (``suffix``):

- ``<suffix>``, ``<suffix>-inplace``, ``<suffix>-noncontiguous`` (in place, through transposed and strided
  views: ATen's per-tensor slow path) and ``<suffix>-special`` (NaN, infinities, signed zeros) in every
  dtype;
- in float32 only: ``-out``, ``-many`` (12 tensors: several binary-search steps), ``-mixed-dtypes`` (rows of
  float32, bfloat16, float16 and float64: one launch per dtype group), ``-promotion`` (float32 state with
  bfloat16 tensors, as AMP training keeps them), ``-broadcast``, ``-alpha``, ``-cpu-scalar`` (a 0-d CPU
  tensor beside device lists), and the errors ATen raises before any work: empty lists, lists of unequal
  length, a scalar list of another length, a scalar tensor with dimensions, an in-place result that
  would need broadcasting, a row whose tensors ATen refuses to mix (``error-row-dtypes``), and
  ``mixed-devices`` (on a CUDA device one tensor of the second list is moved to the CPU, which ATen
  refuses; elsewhere the same call on one device).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, special_values

QUICK_SHAPES = ((13, 17), (5,), (), (0, 3), (2100,))
MANY = tuple((i % 7 + 1, i % 5 + 2) for i in range(12))  # 12 tensors: a 4-step binary search for the row
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
        return tensor_list(shapes, dtype, device, k in self.positive)

    def _lists(self, n_lists, shapes, dtype, device):
        return [self._one_list(shapes, dtype, device, k) for k in range(n_lists)]

    def _views(self, n_lists, dtype, device):
        return [view_list(dtype, device, k in self.positive) for k in range(n_lists)]

    def _special(self, n_lists, dtype, device):
        return [special_list(dtype, device, k in self.positive) for k in range(n_lists)]

    def _mixed(self, n_lists, device):
        return [mixed_list(device, k in self.positive) for k in range(n_lists)]


def tensor_list(shapes, dtype, device, positive=False):
    return [make_tensor(shape, dtype, device, low=0.5 if positive else -4.0) for shape in shapes]


def view_list(dtype, device, positive=False):
    """A transposed, a strided, a permuted 3-d and a contiguous tensor (the slow path's rows beside a fast one)."""
    low = 0.5 if positive else -4.0
    make = lambda *shape: make_tensor(shape, dtype, device, low=low)  # noqa: E731
    return [make(17, 13).t(), make(9, 22)[:, ::2], make(4, 5, 6).permute(2, 0, 1), make(2200)]


def special_list(dtype, device, positive=False):
    values = special_values(dtype, device)
    return [values.abs() if positive else values, make_tensor((3, 5), dtype, device)]


def mixed_list(device, positive=False):
    """Rows of four dtypes: four launches, one per dtype group."""
    return [make_tensor((3, 5 + i), d, device, low=0.5 if positive else -4.0) for i, d in enumerate(_MIXED)]


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


def norm_samples():
    """The generator of _foreach_norm.Scalar's samples (declarations name a factory, gems.spec.lazy)."""
    return _norm_samples


def _norm_samples(dtype, device, quick):
    """_foreach_norm.Scalar: orders 2, 1 and inf over the family's lists, views, special values; in float32
    only a list crossing a chunk (two partials to combine), ``dtype=``, mixed dtypes, many tensors and the
    errors (an empty list, a ``dtype`` that narrows)."""
    shapes = QUICK_SHAPES if quick else FULL_SHAPES
    reduction = max(math.prod(s) for s in shapes)
    lists = lambda: (tensor_list(shapes, dtype, device),)  # noqa: E731
    views = lambda: (view_list(dtype, device),)  # noqa: E731
    special = lambda: (special_list(dtype, device),)  # noqa: E731
    cases = []
    for ord_name, order in (("2", 2), ("1", 1), ("inf", math.inf)):
        cases += [Sample(f"ord-{ord_name}", lists, {"ord": order}, reduction_size=reduction),
                  Sample(f"ord-{ord_name}-noncontiguous", views, {"ord": order}, reduction_size=2200),
                  Sample(f"ord-{ord_name}-special", special, {"ord": order}, reduction_size=16)]
    if dtype == REJECT_HOST_DTYPE:
        mixed = lambda: (mixed_list(device),)  # noqa: E731
        cases += [
            Sample("multi-chunk", lambda: ([make_tensor((70001,), dtype, device), make_tensor((5,), dtype, device)],),
                   reduction_size=70001),
            Sample("dtype-float64", lists, {"dtype": torch.float64}, reduction_size=reduction),
            Sample("many", lambda: (tensor_list(MANY, dtype, device),), reduction_size=35),
            Sample("mixed-dtypes", mixed, reduction_size=24),
            Sample("empty-tensors", lambda: ([make_tensor((0,), dtype, device), make_tensor((0, 3), dtype, device)],)),
            Sample("ord-3", lists, {"ord": 3}, reduction_size=reduction),
            Sample("error-empty-list", lambda: ([],)),
            Sample("error-dtype-narrows", lists, {"dtype": torch.bfloat16}),
        ]
    if dtype in (torch.float16, torch.bfloat16):
        cases.append(Sample("dtype-float32", lists, {"dtype": torch.float32}, reduction_size=reduction))
    return cases


# ------------------------------------------------------------------------- fused optimizers

ADAM = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "weight_decay": 0.0, "eps": 1e-8, "amsgrad": False,
        "maximize": False}
STEPS = (1.0, 2.0, 5.0, 10.0, 100.0)


def _steps(n, device, first=False):
    return [torch.tensor(1.0 if first else STEPS[i % len(STEPS)], device=device) for i in range(n)]


def _device_scalar_call(call, dtype=torch.float32, **scalars):
    """The call with 0-d tensors (grad_scale, found_inf, lr; float32) made on the params' device at call time:
    a sample's own tensors would become float64 in the oracle, which ATen's fused kernels refuse."""
    def with_scalars(*lists, **kwargs):
        device = lists[0][0].device
        made = {k: torch.tensor(v, dtype=dtype, device=device if k != "lr_cpu" else "cpu")
                for k, v in scalars.items()}
        if "lr_cpu" in made:
            made["lr"] = made.pop("lr_cpu")
        return call(*lists, **kwargs, **made)
    return with_scalars


@dataclass(frozen=True)
class FusedAdamSamples:
    """_fused_adam_ (adamw False) and _fused_adamw_: a step over the family's list shapes with its state
    (exp_avg_sqs and max_exp_avg_sqs non-negative, steps 1 to 100). In every dtype: plain, weight decay with
    amsgrad and maximize, grad_scale (grads unscaled and written back), lr as a device tensor
    (``.tensor_lr``); in float32 also each option alone, found_inf 1 (the step is skipped) and 0, a first
    step, special grads, many tensors, lr as a CPU tensor, empty tensors, and ATen's errors (a state tensor
    of another dtype, a float64 grad_scale). Lists of unequal length are left out: ATen's CUDA kernel
    indexes them unchecked (gems raises ATen's CPU error; tests/test_optim.py checks it)."""

    adamw: bool

    def __call__(self, dtype, device, quick):
        name = "_fused_adamw_" if self.adamw else "_fused_adam_"
        shapes = QUICK_SHAPES if quick else FULL_SHAPES
        state = lambda shapes=shapes, **kw: _adam_state(shapes, dtype, device, **kw)  # noqa: E731

        def sample(variant, make=state, overload=name, scalar_dtype=torch.float32, **options):
            scalars = {k: options.pop(k) for k in ("grad_scale", "found_inf", "lr", "lr_cpu") if k in options}
            op = _aten(overload)
            call = _returning_lists(_device_scalar_call(op, scalar_dtype, **scalars) if scalars else op)
            kwargs = {**ADAM, **options}
            if "lr" in scalars or "lr_cpu" in scalars:
                kwargs.pop("lr")
            return Sample(variant, make, kwargs, call=call, expects=overload)

        tensor_lr = f"{name}.tensor_lr"
        cases = [sample("default"), sample("all", weight_decay=0.1, amsgrad=True, maximize=True),
                 sample("grad-scale", grad_scale=1024.0), sample("tensor-lr", overload=tensor_lr, lr=0.01)]
        if dtype == REJECT_HOST_DTYPE:
            cases += [sample("weight-decay", weight_decay=0.1), sample("amsgrad", amsgrad=True),
                      sample("maximize", maximize=True), sample("found-inf", found_inf=1.0, amsgrad=True),
                      sample("found-inf-zero", found_inf=0.0), sample("first-step", lambda: state(first=True)),
                      sample("special", lambda: state(special=True)), sample("many", lambda: state(MANY)),
                      sample("tensor-lr-cpu", overload=tensor_lr, lr_cpu=0.01),
                      sample("empty-tensors", lambda: state([(0,), (0, 3)])),
                      sample("error-state-dtype", lambda: state(odd_state=torch.float64)),
                      sample("error-grad-scale-dtype", grad_scale=1024.0, scalar_dtype=torch.float64)]
        return cases


def _returning_lists(op):
    """The fused step, returning every list it updates (params, grads, exp_avgs, exp_avg_sqs, max). Without
    amsgrad the max list is passed empty, as torch.optim does (ATen's CPU kernel refuses another)."""
    def step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, **kwargs):
        maxima = max_exp_avg_sqs if kwargs["amsgrad"] else []
        op(params, grads, exp_avgs, exp_avg_sqs, maxima, steps, **kwargs)
        return params, grads, exp_avgs, exp_avg_sqs, maxima
    return step


def _adam_state(shapes, dtype, device, first=False, special=False, odd_state=None):
    params = tensor_list(shapes, dtype, device)
    grads = tensor_list(shapes, dtype, device)
    if special:
        grads[0] = special_values(dtype, device)
        params[0] = make_tensor(grads[0].shape, dtype, device)
    exp_avgs = [make_tensor(p.shape, dtype, device) for p in params]
    exp_avg_sqs = [make_tensor(p.shape, dtype, device, low=0.0) for p in params]
    max_exp_avg_sqs = [make_tensor(p.shape, dtype, device, low=0.0) for p in params]
    if odd_state is not None:  # one state tensor of another dtype: ATen refuses the lists
        exp_avgs[1] = exp_avgs[1].to(odd_state)
    return params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, _steps(len(params), device, first)


SGD = {"weight_decay": 0.0, "momentum": 0.0, "lr": 0.05, "dampening": 0.0, "nesterov": False, "maximize": False,
       "is_first_step": False}


def fused_sgd_samples():
    """The generator of _fused_sgd_'s samples (declarations name a factory, gems.spec.lazy)."""
    return _fused_sgd_samples


def _fused_sgd_samples(dtype, device, quick):
    """_fused_sgd_ over the family's list shapes: in every dtype plain (no momentum: an empty buffer list),
    momentum with dampening, nesterov with weight decay and maximize, grad_scale, lr as a device tensor; in
    float32 also a first step (the buffers start as the grads), found_inf 1 and 0, many tensors, lr as a CPU
    tensor, empty tensors, and ATen's errors (buffers without momentum, momentum without buffers, a buffer
    of another dtype)."""
    shapes = QUICK_SHAPES if quick else FULL_SHAPES

    def state(shapes=shapes, odd_buffer=None):
        params, grads, bufs = (tensor_list(shapes, dtype, device) for _ in range(3))
        if odd_buffer is not None:
            bufs[1] = bufs[1].to(odd_buffer)
        return params, grads, bufs

    def sample(variant, make=state, overload="_fused_sgd_", scalar_dtype=torch.float32, **options):
        scalars = {k: options.pop(k) for k in ("grad_scale", "found_inf", "lr", "lr_cpu") if k in options}
        op = _aten(overload)
        call = _device_scalar_call(op, scalar_dtype, **scalars) if scalars else op
        kwargs = {**SGD, **options}
        if "lr" in scalars or "lr_cpu" in scalars:
            kwargs.pop("lr")
        # torch.optim passes the buffers with momentum only; the error variants pass the other combination
        keep = (options.get("momentum", 0.0) != 0) != variant.startswith("error-momentum")
        keep = keep or variant == "error-buffers-without-momentum"

        def step(params, grads, bufs, **kw):
            bufs = bufs if keep else []
            call(params, grads, bufs, **kw)
            return params, grads, bufs

        return Sample(variant, make, kwargs, call=step, expects=overload)

    momentum = {"momentum": 0.9, "dampening": 0.1}
    cases = [sample("default"), sample("momentum", **momentum),
             sample("nesterov", momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True),
             sample("grad-scale", grad_scale=512.0, **momentum),
             sample("tensor-lr", overload="_fused_sgd_.tensor_lr", lr=0.05, **momentum)]
    if dtype == REJECT_HOST_DTYPE:
        cases += [sample("first-step", is_first_step=True, **momentum),
                  sample("found-inf", found_inf=1.0, **momentum), sample("found-inf-zero", found_inf=0.0),
                  sample("many", lambda: state(MANY), **momentum),
                  sample("tensor-lr-cpu", overload="_fused_sgd_.tensor_lr", lr_cpu=0.05),
                  sample("empty-tensors", lambda: state([(0,), (0, 3)])),
                  sample("error-buffers-without-momentum"), sample("error-momentum-without-buffers", momentum=0.9),
                  sample("error-buffer-dtype", lambda: state(odd_buffer=torch.float64), **momentum)]
    return cases
