"""Samples of the optimizer family (gems/ops/optim/): lists of tensors, and optimizer states.

Every list holds tensors of odd, different sizes: a 2-D one, a 1-D one, a 0-d one, an empty one and one of
more than a tile (2048 elements: the unmasked full-tile path). Variants, per overload family (``suffix``):

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
  call on one device).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from gems.spec import Sample
from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, special_values

# (2048,): whole tiles of the kernels' 2048-element block and no tail; (2100,): a whole tile and a tail.
QUICK_SHAPES = ((13, 17), (2048,), (), (0, 3), (2100,))
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

        call = _returning(_aten(overload), form)
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


def tensor_list(shapes, dtype, device, positive=False):
    return [make_tensor(shape, dtype, device, low=0.5 if positive else -4.0) for shape in shapes]


def view_list(dtype, device, positive=False):
    """A transposed, a strided, a permuted 3-d, a strided 5-d with size-1 dimensions (dropped before its others
    merge) and a contiguous tensor (the slow path's rows beside a fast one)."""
    low = 0.5 if positive else -4.0
    make = lambda *shape: make_tensor(shape, dtype, device, low=low)  # noqa: E731
    return [make(17, 13).t(), make(9, 22)[:, ::2], make(4, 5, 6).permute(2, 0, 1), make(3, 1, 4, 1, 6)[..., ::2],
            make(2200)]


def special_list(dtype, device, positive=False):
    values = special_values(dtype, device)
    return [values.abs() if positive else values, make_tensor((3, 5), dtype, device)]


def moderate_special_values(dtype, device):
    """NaN, infinities, signed zeros and moderate numbers: no square of them overflows fp32 (an optimizer
    squares its grads in fp32 where the float64 oracle would not overflow)."""
    values = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 1e3, -1e3]
    return torch.tensor(values, dtype=torch.float64).to(dtype).to(device)


def mixed_list(device, positive=False):
    """Rows of four dtypes: four launches, one per dtype group."""
    return [make_tensor((3, 5 + i), d, device, low=0.5 if positive else -4.0) for i, d in enumerate(_MIXED)]


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


def norm_samples():
    """The generator of _foreach_norm.Scalar's samples (declarations name a factory, gems.spec.lazy)."""
    return _norm_samples


def _norm_samples(dtype, device, quick):
    """_foreach_norm.Scalar: orders 2, 1 and inf over the family's lists, views, special values; in float32
    and bfloat16 orders 0, -inf, 3, 0.5 and -1.5 too; in float32 only a list crossing a chunk (two partials to
    combine), ``dtype=``, mixed dtypes, many tensors and the errors (an empty list, a ``dtype`` that
    narrows)."""
    shapes = QUICK_SHAPES if quick else FULL_SHAPES
    # inf, -inf and negative orders have no value on an empty tensor (linalg_vector_norm raises): no empty one
    nonempty = tuple(s for s in shapes if math.prod(s))
    reduction = max(math.prod(s) for s in shapes)
    lists = lambda shapes=shapes: (tensor_list(shapes, dtype, device),)  # noqa: E731
    views = lambda: (view_list(dtype, device),)  # noqa: E731
    special = lambda: (special_list(dtype, device),)  # noqa: E731
    orders = [("2", 2), ("1", 1), ("inf", math.inf)]
    if dtype in (REJECT_HOST_DTYPE, torch.bfloat16):  # the orders of linalg_vector_norm beyond ATen's fast path
        orders += [("0", 0), ("-inf", -math.inf), ("3", 3), ("0.5", 0.5), ("-1.5", -1.5)]
    cases = []
    for ord_name, order in orders:
        some = (lambda: lists(nonempty)) if order == math.inf or order < 0 else lists
        cases.append(Sample(f"ord-{ord_name}", some, {"ord": order}, reduction_size=reduction))
        if ord_name in ("2", "1", "inf"):
            cases += [Sample(f"ord-{ord_name}-noncontiguous", views, {"ord": order}, reduction_size=2200),
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
            Sample("ord-3-special", special, {"ord": 3}, reduction_size=16),
            Sample("ord-0-special", special, {"ord": 0}, reduction_size=16),
            Sample("error-empty-list", lambda: ([],)),
            Sample("error-dtype-narrows", lists, {"dtype": torch.bfloat16}),
            Sample("error-dtype-integer", lists, {"dtype": torch.int32}),
            Sample("error-dtype-complex", lists, {"dtype": torch.complex64}),
            Sample("error-inf-of-empty", lists, {"ord": -math.inf}),
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
    (exp_avg_sqs and max_exp_avg_sqs non-negative, steps 1 to 100). In every dtype: weight decay with amsgrad
    and maximize, and grad_scale (grads unscaled and written back) with lr as a device tensor
    (``.tensor_lr``); in float32 also the plain step, each option alone, found_inf 1 (the step is skipped)
    and 0, a first step, special grads, many tensors, transposed (column-major) lists, lr as a CPU tensor, empty
    tensors, and ATen's errors (a state tensor of another dtype, a float64 grad_scale). Lists of unequal length
    are left out: ATen's CUDA kernel indexes them unchecked (gems raises ATen's CPU error), and so are lists of
    different strides: ATen's CPU kernel computes them, its CUDA one refuses them, as gems does
    (tests/test_optim.py checks both)."""

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
        cases = [sample("all", weight_decay=0.1, amsgrad=True, maximize=True),
                 sample("grad-scale", grad_scale=1024.0, overload=tensor_lr, lr=0.01)]
        if dtype == REJECT_HOST_DTYPE:
            cases += [sample("default"), sample("tensor-lr", overload=tensor_lr, lr=0.01),
                      sample("weight-decay", weight_decay=0.1), sample("amsgrad", amsgrad=True),
                      sample("maximize", maximize=True), sample("found-inf", found_inf=1.0, amsgrad=True),
                      sample("found-inf-zero", found_inf=0.0), sample("first-step", lambda: state(first=True)),
                      sample("special", lambda: state(special=True)), sample("many", lambda: state(MANY)),
                      sample("transposed", lambda: state(transposed=True), amsgrad=True),
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


def column_major(tensors):
    """The same values, their 2-d tensors stored column by column (a transposed layout: dense, not contiguous)."""
    return [t.t().contiguous().t() if t.dim() == 2 else t for t in tensors]


def _adam_state(shapes, dtype, device, first=False, special=False, odd_state=None, transposed=False):
    params = tensor_list(shapes, dtype, device)
    grads = tensor_list(shapes, dtype, device)
    if special:
        grads[0] = moderate_special_values(dtype, device)
        params[0] = make_tensor(grads[0].shape, dtype, device)
    exp_avgs = [make_tensor(p.shape, dtype, device) for p in params]
    exp_avg_sqs = [make_tensor(p.shape, dtype, device, low=0.0) for p in params]
    max_exp_avg_sqs = [make_tensor(p.shape, dtype, device, low=0.0) for p in params]
    if odd_state is not None:  # one state tensor of another dtype: ATen refuses the lists
        exp_avgs[1] = exp_avgs[1].to(odd_state)
    lists = (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs)
    if transposed:  # every list alike (ATen's CUDA kernels refuse lists of different strides)
        lists = tuple(map(column_major, lists))
    return *lists, _steps(len(params), device, first)


SGD = {"weight_decay": 0.0, "momentum": 0.0, "lr": 0.05, "dampening": 0.0, "nesterov": False, "maximize": False,
       "is_first_step": False}


def fused_sgd_samples():
    """The generator of _fused_sgd_'s samples (declarations name a factory, gems.spec.lazy)."""
    return _fused_sgd_samples


def _fused_sgd_samples(dtype, device, quick):
    """_fused_sgd_ over the family's list shapes: in every dtype nesterov with weight decay and maximize, and
    momentum with dampening, grad_scale and lr as a device tensor; in float32 also the plain step (no
    momentum: an empty buffer list), momentum alone, lr as a device tensor alone, a first step (the buffers
    start as the grads), found_inf 1 and 0, many tensors, transposed (column-major) lists, lr as a CPU tensor,
    empty tensors, and ATen's
    errors (buffers without momentum, momentum without buffers, a buffer of another dtype)."""
    shapes = QUICK_SHAPES if quick else FULL_SHAPES

    def state(shapes=shapes, odd_buffer=None, transposed=False):
        params, grads, bufs = (tensor_list(shapes, dtype, device) for _ in range(3))
        if odd_buffer is not None:
            bufs[1] = bufs[1].to(odd_buffer)
        return tuple(map(column_major, (params, grads, bufs))) if transposed else (params, grads, bufs)

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
    cases = [sample("nesterov", momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True),
             sample("grad-scale", grad_scale=512.0, overload="_fused_sgd_.tensor_lr", lr=0.05, **momentum)]
    if dtype == REJECT_HOST_DTYPE:
        cases += [sample("default"), sample("momentum", **momentum),
                  sample("tensor-lr", overload="_fused_sgd_.tensor_lr", lr=0.05, **momentum),
                  sample("first-step", is_first_step=True, **momentum),
                  sample("found-inf", found_inf=1.0, **momentum), sample("found-inf-zero", found_inf=0.0),
                  sample("many", lambda: state(MANY), **momentum),
                  sample("transposed", lambda: state(transposed=True), **momentum),
                  sample("tensor-lr-cpu", overload="_fused_sgd_.tensor_lr", lr_cpu=0.05),
                  sample("empty-tensors", lambda: state([(0,), (0, 3)])),
                  sample("error-buffers-without-momentum"), sample("error-momentum-without-buffers", momentum=0.9),
                  sample("error-buffer-dtype", lambda: state(odd_buffer=torch.float64), **momentum)]
    return cases


# ------------------------------------------------------------------------- foreach optimizer steps

ADAM_STEP = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "amsgrad": False, "maximize": False}


def _moments_state(shapes, dtype, device, amsgrad=False, steps_on=None, first=False):
    """params, grads, exp_avgs, exp_avg_sqs (>= 0.5: denominators stay clear of eps in fp16), max_exp_avg_sqs
    (empty without amsgrad, as torch.optim keeps them) and 0-d float32 steps (on ``steps_on``)."""
    params, grads, exp_avgs = (tensor_list(shapes, dtype, device) for _ in range(3))
    exp_avg_sqs = tensor_list(shapes, dtype, device, positive=True)
    maxima = tensor_list(shapes, dtype, device, positive=True) if amsgrad else []
    steps = [torch.tensor(0.0 if first else STEPS[i % len(STEPS)], device=steps_on or device)
             for i in range(len(params))]
    return params, grads, exp_avgs, exp_avg_sqs, maxima, steps


@dataclass(frozen=True)
class StepSamples:
    """adam_step / adamw_step (kind "adam" / "adamw"): torch.optim's foreach step over the family's list
    shapes, each sample expecting the overloads it dispatches (core, plus those of amsgrad, maximize and, for
    Adam, weight decay). In every dtype the default step; in float32 also amsgrad, maximize, the first step
    and Adam's weight decay (out of place, and in place under maximize)."""

    kind: str
    core: tuple
    amsgrad: tuple
    maximize: tuple
    weight_decay: tuple = ()

    def __call__(self, dtype, device, quick):
        shapes = QUICK_SHAPES if quick else FULL_SHAPES
        default_wd = 0.01 if self.kind == "adamw" else 0.0

        def sample(variant, expects, first=False, **options):
            hyper = {**ADAM_STEP, "weight_decay": default_wd, **options}
            make = lambda: _moments_state(shapes, dtype, device, hyper["amsgrad"], first=first)  # noqa: E731
            return Sample(variant, make, hyper, expects=expects)

        cases = [sample("default", self.core)]
        if dtype == REJECT_HOST_DTYPE:
            cases += [sample("amsgrad", self.core + self.amsgrad, amsgrad=True),
                      sample("maximize", self.core + self.maximize, maximize=True),
                      sample("first-step", self.core, first=True)]
            if self.weight_decay:
                out_of_place, in_place = self.weight_decay
                cases += [sample("weight-decay", self.core + (out_of_place,), weight_decay=0.01),
                          sample("weight-decay-maximize", self.core + self.maximize + (in_place,), weight_decay=0.01,
                                 maximize=True)]
        return cases


def sgd_step_samples(update, momentum, weight_decay, maximize):
    """sgd_step: torch.optim's foreach SGD step, each sample expecting the overloads it dispatches."""

    def samples(dtype, device, quick):
        shapes = QUICK_SHAPES if quick else FULL_SHAPES

        def sample(variant, expects, buffers=True, **options):
            hyper = {"weight_decay": 0.0, "momentum": 0.0, "lr": 0.05, "dampening": 0.0, "nesterov": False,
                     "maximize": False, **options}

            def make():
                params, grads = tensor_list(shapes, dtype, device), tensor_list(shapes, dtype, device)
                bufs = tensor_list(shapes, dtype, device) if buffers else [None] * len(params)
                return params, grads, bufs
            return Sample(variant, make, hyper, expects=expects)

        cases = [sample("momentum", update + momentum, momentum=0.9, dampening=0.1)]
        if dtype == REJECT_HOST_DTYPE:
            cases += [sample("default", update, buffers=False),
                      sample("weight-decay", update + weight_decay, buffers=False, weight_decay=0.01),
                      sample("nesterov-maximize", update + momentum + maximize, momentum=0.9, nesterov=True,
                             weight_decay=0.01, maximize=True),
                      sample("first-momentum-step", update, buffers=False, momentum=0.9)]
        return cases

    return samples


# ------------------------------------------------------------------------- perf: a model's parameters

def llama_shapes(layers, hidden, intermediate, kv_dim, vocab) -> list:
    """The parameter shapes of a Llama-style model: embedding, per layer q/k/v/o, gate/up/down and two norms,
    the final norm and an untied output head."""
    layer = [(hidden, hidden), (kv_dim, hidden), (kv_dim, hidden), (hidden, hidden), (intermediate, hidden),
             (intermediate, hidden), (hidden, intermediate), (hidden,), (hidden,)]
    return [(vocab, hidden), *(layer * layers), (hidden,), (vocab, hidden)]


def _perf_state(shape, dtype, device, steps_on=None):
    return _moments_state(llama_shapes(*shape), dtype, device, steps_on=steps_on)


def step_perf(kind, shapes):
    """The perf declaration of an optimizer step over a model's parameters (``shape``: [layers, hidden,
    intermediate, kv_dim, vocab] of perf/shapes.yaml's ``optim`` key). kind: "adamw_foreach" (torch.optim's
    foreach AdamW, its steps on the CPU as torch.optim keeps them), "adamw_fused", "adam_fused", "sgd_fused".
    bytes: what the update must move, the fused kernel's traffic (params, grads and the state read, params and
    state written), for both forms: the foreach form moves more, which its GB/s shows. The step updates its
    inputs in place, so ATen's and gems' first calls update the same tensors one after the other: the perf
    check cannot compare them (the call returns nothing); conformance checks the values."""
    from gems.spec import PerfSpec

    def inputs(shape, dtype, device):
        if kind == "adamw_foreach":
            from gems.ops.optim.adamw_step import CORE, adamw_foreach_step
            state = _perf_state(shape, dtype, device, steps_on="cpu")
            call = lambda *a, **k: (adamw_foreach_step(*a, **k), None)[1]  # noqa: E731
            return Sample("perf", state, {**ADAM_STEP, "weight_decay": 0.01}, call=call, expects=CORE)
        if kind == "sgd_fused":
            params, grads, bufs = (tensor_list(llama_shapes(*shape), dtype, device) for _ in range(3))
            hyper = {**SGD, "momentum": 0.9}
            return Sample("perf", (params, grads, bufs), hyper, call=torch.ops.aten._fused_sgd_.default,
                          expects="_fused_sgd_")
        name = "_fused_adamw_" if kind == "adamw_fused" else "_fused_adam_"
        return Sample("perf", _perf_state(shape, dtype, device), {**ADAM, "weight_decay": 0.01},
                      call=_aten(name), expects=name)

    def bytes_moved(sample, result):
        lists = sample.args[:3] if kind == "sgd_fused" else sample.args[:4]
        written = 2 if kind == "sgd_fused" else 3
        element = sum(t.numel() * t.element_size() for t in lists[0])
        return (len(lists) + written) * element

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=bytes_moved)
